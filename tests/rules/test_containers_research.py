"""Containers as research code nests them: a GPT whose ``transformer`` is a
ModuleDict holding a ModuleList (MindSpore's CellDict refuses CellList
values) converts, loads torch's weights under torch's names and gives torch's
outputs; a ModuleDict of plain layers stays a CellDict; a key MindSpore
cannot name parameters by is marked."""

from __future__ import annotations

import textwrap

import mindspore
import numpy as np
import pytest
import torch

from tests.conversion import convert_to, load
from transpiler.convert.pipeline import convert_source
from transpiler.proof.weights import map_weights

GPT = textwrap.dedent(
    '''
    import math

    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class SelfAttention(nn.Module):
        def __init__(self, n_embd, n_head, block_size):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)
            self.n_head = n_head
            mask = torch.tril(torch.ones(block_size, block_size))
            self.register_buffer("bias", mask.view(1, 1, block_size, block_size))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(C, dim=2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            y = F.softmax(att, dim=-1) @ v
            return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


    class Block(nn.Module):
        def __init__(self, n_embd, n_head, block_size):
            super().__init__()
            self.ln_1 = nn.LayerNorm(n_embd)
            self.attn = SelfAttention(n_embd, n_head, block_size)
            self.ln_2 = nn.LayerNorm(n_embd)
            self.mlp = nn.ModuleDict(dict(
                c_fc=nn.Linear(n_embd, 4 * n_embd),
                c_proj=nn.Linear(4 * n_embd, n_embd),
                act=nn.GELU(),
            ))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            m = self.mlp
            return x + m["c_proj"](m["act"](m["c_fc"](self.ln_2(x))))


    class GPT(nn.Module):
        def __init__(self, vocab_size=16, block_size=8, n_layer=2, n_head=2, n_embd=8):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(vocab_size, n_embd),
                wpe=nn.Embedding(block_size, n_embd),
                drop=nn.Dropout(0.0),
                h=nn.ModuleList([Block(n_embd, n_head, block_size) for _ in range(n_layer)]),
                ln_f=nn.LayerNorm(n_embd),
            ))
            self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
            self.transformer.wte.weight = self.lm_head.weight

        def forward(self, idx):
            b, t = idx.size()
            pos = torch.arange(0, t, dtype=torch.long).unsqueeze(0)
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
            for block in self.transformer.h:
                x = block(x)
            return self.lm_head(self.transformer.ln_f(x))
    '''
)


@pytest.fixture(scope="module")
def gpt(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gpt")
    source = folder / "gpt.py"
    source.write_text(GPT)
    (folder / "out").mkdir()
    converted = convert_to(source, folder / "out")
    return load(source), load(converted), converted.read_text()


def test_a_module_dict_holding_a_module_list_converts_loads_and_matches(gpt):
    torch_module, ms_module, text = gpt
    assert "self.transformer = ModuleDict(" in text and "class ModuleDict(nn.Cell):" in text
    assert "self.mlp = nn.CellDict(" in text  # plain layers: MindSpore's own CellDict
    torch.manual_seed(0)
    model, cell = torch_module.GPT(), ms_module.GPT()
    ms_names = {name for name, _ in cell.parameters_and_names()}
    assert {"transformer.h.0.attn.c_attn.weight", "transformer.h.1.mlp.c_fc.bias", "transformer.ln_f.gamma",
            "transformer.wte.embedding_table"} <= ms_names
    assert list(cell.transformer.keys()) == ["wte", "wpe", "drop", "h", "ln_f"]  # torch's order
    params, report = map_weights(model, cell)
    assert report.ok, report.problems()
    assert report.placed["transformer.h.1.attn.c_proj.weight"] == "transformer.h.1.attn.c_proj.weight"
    assert report.placed["lm_head.weight"] == report.placed["transformer.wte.weight"]  # tied in both
    assert mindspore.load_param_into_net(cell, params, strict_load=True) == ([], [])
    idx = np.random.RandomState(0).randint(0, 16, (2, 8))
    model.eval()
    cell.set_train(False)
    expected = model(torch.from_numpy(idx)).detach().numpy()
    np.testing.assert_allclose(cell(mindspore.Tensor(idx)).asnumpy(), expected, rtol=1e-5, atol=1e-5)


def test_the_model_trains_one_step_like_torch(gpt):
    """Gradients reach the parameters inside the CellList inside the dict."""
    torch_module, ms_module, _ = gpt
    torch.manual_seed(0)
    model, cell = torch_module.GPT(), ms_module.GPT()
    mindspore.load_param_into_net(cell, map_weights(model, cell)[0], strict_load=True)
    idx = np.random.RandomState(1).randint(0, 16, (2, 8))
    model(torch.from_numpy(idx)).sum().backward()
    expected = model.transformer.h[1].attn.c_attn.weight.grad.numpy()
    grad_fn = mindspore.grad(lambda i: cell(i).sum(), None, cell.trainable_params())
    grads = dict(zip((p.name for p in cell.trainable_params()), grad_fn(mindspore.Tensor(idx))))
    np.testing.assert_allclose(grads["transformer.h.1.attn.c_attn.weight"].asnumpy(), expected, rtol=1e-4, atol=1e-5)


def _convert(code: str) -> str:
    result = convert_source("import torch.nn as nn\n" + textwrap.dedent(code), "snippet.py")
    assert result.output is not None, [d.one_line() for d in result.diagnostics]
    return result.output


def test_the_dict_that_holds_containers_is_written_only_when_needed():
    plain = _convert("layers = nn.ModuleDict({'a': nn.Linear(2, 2), 'b': nn.ReLU()})\n")
    assert "nn.CellDict(" in plain and "class ModuleDict" not in plain
    for code in ("layers = nn.ModuleDict({'a': nn.Sequential(nn.Linear(2, 2))})\n",
                 "layers = nn.ModuleDict()\n",  # filled later: its values are not known here
                 "layers = nn.ModuleDict({k: make(k) for k in 'ab'})\n"):
        assert "layers = ModuleDict(" in _convert(code), code


def test_a_key_mindspore_cannot_name_parameters_by_is_marked():
    output = _convert("layers = nn.ModuleDict({'conv 1': nn.Linear(2, 2)})\n")
    assert "# TODO(ms-migrate): torch.nn.ModuleDict" in output and "'conv 1'" in output
