"""torch.nn.ModuleList holding None entries, as research code writes it
(x-transformers: ``nn.ModuleList([pre_norm_or_None, post_norm_or_None, ...])``):
MindSpore 2.10's CellList refuses None (``each cell must be subclass of Cell,
but got NoneType``, measured), so a list the file shows may hold None becomes a
small CellList subclass written above the code; so does one the file fills
later by ``append``/``extend`` with such values (``self.skips.append(skip)``
where ``skip = None`` on some path). It must behave as torch's
list does: indexing and iteration give None, len counts it, slicing, append
and extend take it, and the weights' names skip its index
(``norms.2.weight``), so torch's state dict loads strictly; the model gives
torch's outputs in PyNative and in GRAPH_MODE. A list of layers only stays a
plain CellList.
"""

from __future__ import annotations

import textwrap

import mindspore
import numpy as np
import pytest
import torch

from tests.conversion import convert_to, load
from transpiler.convert.pipeline import convert_source
from transpiler.proof.weights import convert_state_dict

PROGRAM = textwrap.dedent(
    '''
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self, dim, pre_norm, sandwich_norm):
            super().__init__()
            pre_branch_norm = nn.LayerNorm(dim) if pre_norm else None
            post_branch_norm = nn.LayerNorm(dim) if sandwich_norm else None
            post_main_norm = nn.LayerNorm(dim) if not pre_norm else None
            norms = nn.ModuleList([pre_branch_norm, post_branch_norm, post_main_norm])
            self.layers = nn.ModuleList([norms, nn.Linear(dim, dim), None])

        def forward(self, x):
            norms, block, residual = self.layers
            pre, post, main = norms
            if pre is not None:
                x = pre(x)
            x = block(x)
            if post is not None:
                x = post(x)
            if main is not None:
                x = main(x)
            return x


    class Net(nn.Module):
        def __init__(self, dim=4):
            super().__init__()
            self.blocks = nn.ModuleList([Block(dim, True, True), Block(dim, False, False)])
            self.heads = nn.ModuleList([None, nn.Linear(dim, 3)])
            self.heads.append(None)
            self.heads.extend([nn.Linear(dim, 2), None])
            # filled later, some entries None (x-transformers' skip_combines), and with layers only
            self.skips = nn.ModuleList([])
            self.extra = nn.ModuleList([])
            for i in range(3):
                skip = None
                if i > 0:
                    skip = nn.Linear(dim, dim)
                self.skips.append(skip)
                self.extra.append(nn.Tanh())

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            for skip, act in zip(self.skips, self.extra):
                if skip is not None:
                    x = act(skip(x))
            outs = []
            for head in self.heads:
                if head is not None:
                    outs.append(head(x))
            return outs[0], outs[1]


    def facts(net):
        heads = net.heads
        return (len(heads), [h is None for h in heads], heads[0] is None, heads[-1] is None,
                len(heads[1:3]), heads[1:3][1] is None, len(net.blocks[0].layers[0]), net.skips[0] is None)
    '''
)


def _converted(tmp_path):
    src = tmp_path / "model.py"
    src.write_text(PROGRAM, encoding="utf-8")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    return src, convert_to(src, out_dir)


def test_list_shown_to_hold_none_gets_the_subclass_a_list_of_layers_stays_cell_list(tmp_path):
    _, out = _converted(tmp_path)
    code = out.read_text(encoding="utf-8")
    assert "class ModuleList(nn.CellList):" in code
    assert "norms = ModuleList([pre_branch_norm, post_branch_norm, post_main_norm])" in code
    assert "self.heads = ModuleList([None, nn.Dense(dim, 3)])" in code
    assert "self.blocks = nn.CellList([Block(dim, True, True), Block(dim, False, False)])" in code
    assert "self.skips = ModuleList([])" in code and "self.extra = nn.CellList([])" in code
    plain = convert_source("import torch.nn as nn\nlayers = nn.ModuleList([nn.Linear(4, 4), nn.ReLU()])\n", "m.py")
    assert "class ModuleList" not in plain.output and "nn.CellList([nn.Dense(4, 4), nn.ReLU()])" in plain.output


def _torch_and_mindspore(tmp_path):
    src, out = _converted(tmp_path)
    original, converted = load(src), load(out)
    torch.manual_seed(0)
    net = original.Net().eval()
    with torch.no_grad():
        for name, value in net.state_dict().items():  # LayerNorm starts at ones/zeros: make each weight count
            value.copy_(torch.randn(value.shape))
    cell = converted.Net()
    params = convert_state_dict({k: v.numpy() for k, v in net.state_dict().items()}, cell)
    not_loaded = mindspore.load_param_into_net(cell, params, strict_load=True)
    cell.set_train(False)
    return original, converted, net, cell, not_loaded, params


def test_indexing_iteration_len_slicing_and_weights_match_torch(tmp_path):
    original, converted, net, cell, not_loaded, params = _torch_and_mindspore(tmp_path)
    assert not any(not_loaded) if isinstance(not_loaded, tuple) else not not_loaded
    # torch's keys skip the None entries' indices: blocks.0.layers.0.0.weight, heads.1.weight, heads.3.weight
    torch_keys = sorted(net.state_dict())
    assert "heads.1.weight" in torch_keys and "heads.3.weight" in torch_keys and "skips.2.weight" in torch_keys
    # the layers' paths are torch's (LayerNorm's own names differ: gamma/beta for weight/bias)
    assert sorted({n.rsplit(".", 1)[0] for n, _ in cell.parameters_and_names()}) == sorted(
        {k.rsplit(".", 1)[0] for k in torch_keys})
    assert len(params) == len(torch_keys)
    assert converted.facts(cell) == original.facts(net) == (5, [True, False, True, False, True], True, True,
                                                            2, True, 3, True)
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    with torch.no_grad():
        expected = [t.numpy() for t in net(torch.from_numpy(x))]
    got = [t.asnumpy() for t in cell(mindspore.Tensor(x))]
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


def test_graph_mode_gives_torchs_outputs(tmp_path):
    _, _, net, cell, _, _ = _torch_and_mindspore(tmp_path)
    x = np.random.default_rng(1).standard_normal((2, 4)).astype(np.float32)
    with torch.no_grad():
        expected = [t.numpy() for t in net(torch.from_numpy(x))]
    mindspore.set_context(mode=mindspore.GRAPH_MODE)
    try:
        got = [t.asnumpy() for t in cell(mindspore.Tensor(x))]
    finally:
        mindspore.set_context(mode=mindspore.PYNATIVE_MODE)
    for e, g in zip(expected, got, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("entry", ["None", "nn.Tanh() if flag else None"])
def test_mindspore_cell_list_refuses_none_the_subclass_is_needed(entry):
    """The measured fact the subclass answers: a plain CellList with a None entry fails."""
    with pytest.raises(TypeError, match="NoneType"):
        mindspore.nn.CellList([None])
    result = convert_source(f"import torch.nn as nn\nflag = False\nlayers = nn.ModuleList([nn.ReLU(), {entry}])\n", "m.py")
    assert "layers = ModuleList([nn.ReLU()," in result.output
