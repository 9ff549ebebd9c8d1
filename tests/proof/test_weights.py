"""Weight conversion: a torch state_dict into the Cell ms-migrate converted,
names and layouts from the rules, every problem reported by name."""

from __future__ import annotations

import json
import textwrap

import mindspore
import numpy as np
import pytest
import torch

from rewrite_rules.registry import load_rules
from tests.conversion import convert_to, load, with_rule
from transpiler.cli import main
from transpiler.proof.weights import WeightConversionError, convert_state_dict, map_weights

MODEL = textwrap.dedent(
    '''
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(4, 6, 3, padding=1)
            self.bn = nn.BatchNorm1d(6)

        def forward(self, x):
            return self.bn(self.conv(x))


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(20, 4)
            self.blocks = nn.Sequential(Block(), nn.ReLU(), nn.Conv2d(6, 6, 1))
            self.heads = nn.ModuleList([nn.Linear(6, 2), nn.Linear(6, 3)])
            self.extra = nn.ModuleDict({"norm": nn.LayerNorm(6)})
            self.lstm = nn.LSTM(6, 5, batch_first=True)
            self.scale = nn.Parameter(torch.ones(6))
            self.register_buffer("offset", torch.arange(6).float())
            self.register_buffer("temp", torch.zeros(2), persistent=False)

        def forward(self, ids):
            x = self.embed(ids).transpose(1, 2)
            x = self.blocks[0](x)
            return x
    '''
)


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("weights")
    original = folder / "src" / "net.py"
    original.parent.mkdir()
    original.write_text(MODEL)
    out_dir = folder / "out"
    out_dir.mkdir()
    path = convert_to(original, out_dir)
    return load(original), load(path), path


def _models(converted):
    torch_module, ms_module, _ = converted
    torch.manual_seed(0)
    model = torch_module.Net()
    with torch.no_grad():  # make running statistics non-trivial
        model.blocks[0].bn.running_mean.uniform_(-1, 1)
        model.blocks[0].bn.running_var.uniform_(0.5, 2)
        model.temp.fill_(3.0)
    return model, ms_module.Net()


def test_every_key_placed_with_names_and_layouts_from_the_rules(converted):
    model, cell = _models(converted)
    params, report = map_weights(model, cell)
    assert report.ok, report.problems()
    placed = report.placed
    assert placed["embed.weight"] == "embed.embedding_table"
    assert placed["blocks.0.bn.running_mean"] == "blocks.0.bn.moving_mean"
    assert placed["blocks.0.bn.running_var"] == "blocks.0.bn.moving_variance"
    assert placed["blocks.0.bn.weight"] == "blocks.0.bn.gamma"
    assert placed["extra.norm.weight"] == "extra.norm.gamma"
    assert placed["heads.1.bias"] == "heads.1.bias"
    assert placed["lstm.weight_hh_l0"] == "lstm.weight_hh_l0"
    assert placed["offset"] == "offset"  # buffers -> Parameters
    assert "temp" not in placed and "temp" not in report.dropped  # non-persistent: not in torch's state dict
    assert report.dropped == {"blocks.0.bn.num_batches_tracked": "MindSpore BatchNorm does not count batches"}
    assert report.moved == {"blocks.0.conv.weight": "insert axis 2"}
    assert tuple(params["blocks.0.conv.weight"].shape) == (6, 4, 1, 3)

    mindspore.load_param_into_net(cell, params, strict_load=True)
    for key, name in placed.items():
        expected = model.state_dict()[key]
        value = dict(cell.parameters_and_names())[name].asnumpy()
        np.testing.assert_array_equal(value.reshape(expected.shape), expected.numpy())


def test_numpy_state_dict_and_outputs_match(converted):
    model, cell = _models(converted)
    state = {k: v.numpy() for k, v in model.state_dict().items()}
    mindspore.load_param_into_net(cell, convert_state_dict(state, cell), strict_load=True)
    model.eval()
    cell.set_train(False)
    ids = np.random.RandomState(0).randint(0, 20, (2, 7))
    expected = model(torch.from_numpy(ids)).detach().numpy()
    actual = cell(mindspore.Tensor(ids)).asnumpy()
    np.testing.assert_allclose(actual, expected, atol=1e-5)


def test_a_non_persistent_buffer_is_no_parameter_and_no_key_is_needed_for_it(converted):
    """torch leaves a non-persistent buffer out of its state dict and never
    loads one: the Cell holds it as a plain tensor (no Parameter to fill, none
    in a checkpoint); a key given for it anyway is dropped with the reason."""
    model, cell = _models(converted)
    assert "temp" not in model.state_dict()
    assert "temp" not in dict(cell.parameters_and_names())
    assert isinstance(cell.temp, mindspore.Tensor) and not isinstance(cell.temp, mindspore.Parameter)
    state = {**model.state_dict(), "temp": model.temp}
    params, report = map_weights(state, cell)
    assert report.ok, report.problems()
    assert "non-persistent buffer" in report.dropped["temp"] and "temp" not in params


def test_missing_extra_and_misshapen_keys_are_listed_by_name(converted):
    model, cell = _models(converted)
    state = dict(model.state_dict())
    del state["heads.0.weight"]
    state["heads.2.weight"] = torch.zeros(3, 6)
    state["extra.norm.bias"] = torch.zeros(7)
    with pytest.raises(WeightConversionError) as info:
        convert_state_dict(state, cell)
    report = info.value.report
    assert report.unfilled["heads.0.weight"] == "no torch key heads.0.weight"
    assert "no sub-Cell 'heads.2'" in report.unplaced["heads.2.weight"]
    assert "shape (7,) does not fit extra.norm.beta (6,)" in report.unplaced["extra.norm.bias"]
    assert "extra.norm.beta" in report.unfilled
    message = str(info.value)
    for name in ("heads.0.weight", "heads.2.weight", "extra.norm.bias"):
        assert name in message
    # non-strict: what fits is returned, nothing else
    params = convert_state_dict(state, cell, strict=False)
    assert "heads.0.weight" not in params and "heads.1.weight" in params


def test_a_rule_without_its_weight_declaration_leaves_keys_unplaced(converted):
    """The mapping comes from the rules: drop BatchNorm's declaration and the
    converter must refuse rather than guess."""
    model, cell = _models(converted)
    rules = with_rule(load_rules(), "torch.nn.BatchNorm1d", weights={})
    _, report = map_weights(model, cell, rules=rules)
    assert not report.ok
    assert set(report.unplaced) >= {
        "blocks.0.bn.weight", "blocks.0.bn.running_mean", "blocks.0.bn.num_batches_tracked"}
    assert "blocks.0.bn.gamma" in report.unfilled
    assert "BatchNorm1d at 'blocks.0.bn' has no parameter for 'running_mean'" in report.unplaced[
        "blocks.0.bn.running_mean"]


def test_weights_command_writes_checkpoint_and_map(converted, tmp_path, capsys):
    model, _ = _models(converted)
    _, _, path = converted
    pth = tmp_path / "net.pth"
    torch.save(model.state_dict(), pth)
    ckpt, mapping = tmp_path / "net.ckpt", tmp_path / "map.json"
    # the non-persistent buffer is not in the file, and not needed: the Cell holds no Parameter for it
    status = main(["weights", str(pth), str(ckpt), "--model", f"{path}:Net", "--map", str(mapping)])
    assert status == 0, capsys.readouterr().err
    assert "temp" not in mindspore.load_checkpoint(str(ckpt))
    ckpt.unlink()
    torch.save({"state_dict": model.state_dict(), "epoch": 3}, pth)
    status = main(["weights", str(pth), str(ckpt), "--model", f"{path}:Net", "--map", str(mapping)])
    assert status == 0, capsys.readouterr().err
    loaded = mindspore.load_checkpoint(str(ckpt))
    np.testing.assert_array_equal(loaded["blocks.0.bn.moving_mean"].asnumpy(),
                                  model.blocks[0].bn.running_mean.numpy())
    names = json.loads(mapping.read_text())
    assert names["placed"]["embed.weight"] == "embed.embedding_table"
    assert names["dropped"] == {"blocks.0.bn.num_batches_tracked": "MindSpore BatchNorm does not count batches"}


def test_weights_command_reports_bad_model_spec(tmp_path, capsys):
    pth = tmp_path / "x.pth"
    torch.save({}, pth)
    assert main(["weights", str(pth), str(tmp_path / "x.ckpt"), "--model", "nocolon"]) == 2
    assert "MODULE:CLASS" in capsys.readouterr().err


@pytest.mark.parametrize("build", ["bn3d", "encoder"])
def test_moves_that_reach_into_sub_cells(build):
    """Rules may move a weight into a sub-Cell of the MindSpore layer
    (BatchNorm3d keeps a bn2d inside; the transformer's linear1 is dense1)."""
    from mindspore import nn as ms_nn

    torch.manual_seed(0)
    if build == "bn3d":
        model, cell = torch.nn.BatchNorm3d(4), ms_nn.BatchNorm3d(4)
        with torch.no_grad():
            model.running_mean.uniform_(-1, 1)
            model.weight.uniform_(0.5, 2)
        x = np.random.RandomState(0).standard_normal((2, 4, 3, 3, 3)).astype(np.float32)
    else:
        layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
        model = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        cell = ms_nn.TransformerEncoder(ms_nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2)
        x = np.random.RandomState(0).standard_normal((5, 2, 8)).astype(np.float32)
    params, report = map_weights(model, cell)
    assert report.ok, report.problems()
    if build == "bn3d":
        assert report.placed["weight"] == "bn2d.gamma"
    else:
        assert report.placed["layers.1.linear1.weight"] == "layers.1.dense1.weight"
        assert report.placed["layers.1.norm1.weight"] == "layers.1.norm1.gamma"
    mindspore.load_param_into_net(cell, params, strict_load=True)
    model.eval()
    cell.set_train(False)
    expected = model(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(cell(mindspore.Tensor(x)).asnumpy(), expected, atol=1e-5)


RECOMPUTED = textwrap.dedent(
    '''
    import torch
    import torch.nn as nn


    class Attention(nn.Module):
        """Like convit's GPSA: a non-persistent buffer replaced in forward by one fitting the input."""

        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(3, 4)
            self.register_buffer("positions", torch.zeros(1, 1, 3), persistent=False)

        def forward(self, x):
            if self.positions.shape[1] != x.shape[1]:
                self.positions = torch.arange(x.shape[1] * 3.0).reshape(1, x.shape[1], 3) / 10
            return self.proj(x + self.positions)
    '''
)


def test_a_buffer_replaced_in_forward_loads_runs_and_checkpoints(tmp_path):
    """torch's state dict after a forward has no entry for the replaced buffer;
    the converted Cell loads it, recomputes the buffer like torch and, having
    no Parameter for it, saves a checkpoint a fresh Cell loads (a Parameter
    would now have another shape than a fresh Cell's)."""
    original = tmp_path / "attention.py"
    original.write_text(RECOMPUTED)
    (tmp_path / "out").mkdir()
    torch_module, ms_module = load(original), load(convert_to(original, tmp_path / "out"))
    torch.manual_seed(0)
    model, cell = torch_module.Attention(), ms_module.Attention()
    x = np.random.RandomState(0).standard_normal((2, 5, 3)).astype(np.float32)
    expected = model(torch.from_numpy(x)).detach().numpy()
    with_buffers = {**model.state_dict(), **dict(model.named_buffers())}  # as the zoo benchmark saves them
    assert tuple(with_buffers["positions"].shape) == (1, 5, 3) and "positions" not in model.state_dict()
    for state in (model.state_dict(), with_buffers):
        cell = ms_module.Attention()
        mindspore.load_param_into_net(cell, convert_state_dict(state, cell), strict_load=True)
        np.testing.assert_allclose(cell(mindspore.Tensor(x)).asnumpy(), expected, atol=1e-6)
    checkpoint = str(tmp_path / "attention.ckpt")
    mindspore.save_checkpoint(cell, checkpoint)
    fresh = ms_module.Attention()
    assert not mindspore.load_param_into_net(fresh, mindspore.load_checkpoint(checkpoint), strict_load=True)[0]
    np.testing.assert_allclose(fresh(mindspore.Tensor(x)).asnumpy(), expected, atol=1e-6)


def test_a_scalar_buffer_keeps_its_shape():
    """A 0-d buffer (vector-quantize's ``zero``, a step count) stays 0-d: NumPy's
    ascontiguousarray would make it 1-d, and the Cell would then return shape (1,)."""

    class Counter(mindspore.nn.Cell):
        def __init__(self):
            super().__init__()
            self.zero = mindspore.Parameter(mindspore.Tensor(0.0), name="zero", requires_grad=False)

        def construct(self, x):
            return x + self.zero

    cell = Counter()
    params = convert_state_dict({"zero": torch.tensor(2.0)}, cell)
    mindspore.load_param_into_net(cell, params, strict_load=True)
    assert cell.zero.shape == () and float(cell.zero.asnumpy()) == 2.0
    assert cell(mindspore.Tensor(1.0)).shape == ()
