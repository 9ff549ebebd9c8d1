"""The export forms of issue 28 point 3, proven by running: a traced module saved
(``traced.save``, ``torch.jit.save``, the chained ``torch.jit.trace(...).save``), an
ExportedProgram saved and loaded (``torch.export.save`` / ``load`` / ``.module()``)
become ``mindspore.export`` of a MindIR graph which, loaded back as an
``nn.GraphCell``, gives the Cell's outputs and torch's; the mode the module was
traced in is kept; ``torch.save`` of a whole model writes a checkpoint whose weights
give a rebuilt Cell the same outputs, and the ``torch.load`` of it is marked."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conversion import convert_to, load
from transpiler.convert.pipeline import convert_source

SOURCE = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        return self.fc(self.pool(x).flatten(1))


class Pair(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x, mask):
        return self.fc(x) * mask


def trace_and_save(model, x, path):
    traced = torch.jit.trace(model, x)
    y = traced(x)
    traced.save(path)
    return y


def trace_pair(model, x, mask, path):
    example = (x, mask)
    traced = torch.jit.trace(model, example)
    torch.jit.save(traced, path)
    return traced(x, mask)


def trace_chained(model, x, path):
    torch.jit.trace(model, x).save(path)


def load_traced(path):
    return torch.jit.load(path)


def export_program(model, x, path):
    ep = torch.export.export(model, (x,))
    y = ep.module()(x)
    torch.export.save(ep, path)
    return y


def load_program(path):
    ep = torch.export.load(path)
    return ep.module()


def save_whole(path):
    model = Net()
    model.eval()
    torch.save(model, path)
    return model


def load_whole(path):
    model = torch.load(path, weights_only=False)
    model.eval()
    return model


def trace_then_change(model, x, path):
    traced = torch.jit.trace(model, x)
    x = x[:1]
    traced.save(path)
'''


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    directory = tmp_path_factory.mktemp("export_forms")
    source = directory / "torch_side" / "forms.py"
    source.parent.mkdir()
    source.write_text(SOURCE, encoding="utf-8")
    out = directory / "ms_side"
    out.mkdir()
    converted = convert_to(source, out)
    return load(source), load(converted), converted.read_text(encoding="utf-8"), directory


def _cell(torch_side, ms_side, name, train):
    import mindspore
    import torch

    from transpiler.proof.weights import convert_state_dict

    torch.manual_seed(0)
    model = getattr(torch_side, name)()
    if name == "Net":  # running statistics that differ from the batch's: eval and train modes give other outputs
        with torch.no_grad():
            model.bn.running_mean.uniform_(-1, 1)
            model.bn.running_var.uniform_(0.5, 2)
    cell = getattr(ms_side, name)()
    mindspore.load_param_into_net(cell, convert_state_dict(model.state_dict(), cell))
    model.train(train)
    cell.set_train(train)
    return model, cell


def _close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-5)


def test_converted_text(sides):
    _, _, text, _ = sides
    assert text.count("traced.save") == 1 and "torch.export.save" not in text  # (trace_then_change: marked)
    assert 'mindspore.export(traced, x, file_name=path, file_format="MINDIR")' in text
    assert 'mindspore.export(traced, *example, file_name=path, file_format="MINDIR")' in text
    assert 'mindspore.export(model, x, file_name=path, file_format="MINDIR")' in text
    assert 'mindspore.export(ep, x, file_name=path, file_format="MINDIR")' in text
    assert "y = ep(x)" in text and 'ep = nn.GraphCell(mindspore.load(path + ".mindir"))' in text
    assert "mindspore.save_checkpoint(model, path)" in text
    # the inputs changed between the trace and the save; the whole model's load: marked, with the reason
    assert "x (the example inputs of the trace) is assigned again between the trace and the save" in text
    assert "torch.load: a whole pickled model (model.eval() is called)" in text
    assert "mindspore.load_param_into_net" in text


@pytest.mark.parametrize("train", [False, True], ids=["eval", "train"])
def test_traced_saves_load_back_as_graphs(sides, train):
    """Exported in the mode it was traced in (BatchNorm: running or batch statistics), the graph gives
    the Cell's outputs and the outputs of torch's own saved trace."""
    import mindspore
    import torch

    torch_side, ms_side, _, directory = sides
    model, cell = _cell(torch_side, ms_side, "Net", train)
    x = np.random.RandomState(0).randn(2, 3, 8, 8).astype(np.float32)
    mode = "train" if train else "eval"
    if train:  # the modes differ on this input: a graph exported in the other mode would not match
        with torch.no_grad():
            model.eval()
            other = model(torch.tensor(x)).numpy()
            model.train()
            assert not np.allclose(other, model(torch.tensor(x)).numpy(), atol=1e-3)
    for function in ("trace_and_save", "trace_chained"):
        torch_path, ms_path = str(directory / f"{function}_{mode}.pt"), str(directory / f"{function}_{mode}_ms.pt")
        with torch.no_grad():
            expected = model(torch.tensor(x)).numpy()
            getattr(torch_side, function)(model, torch.tensor(x), torch_path)
            from_torch = torch_side.load_traced(torch_path)(torch.tensor(x)).numpy()
        _close(from_torch, expected)
        getattr(ms_side, function)(cell, mindspore.Tensor(x), ms_path)
        assert (directory / f"{function}_{mode}_ms.pt.mindir").is_file()
        assert cell.training == train  # the mode is left as it was
        graph = ms_side.load_traced(ms_path)
        assert isinstance(graph, mindspore.nn.GraphCell)
        if not train:  # in training mode the Cell's own call moves its running statistics
            _close(cell(mindspore.Tensor(x)).asnumpy(), expected)
        _close(graph(mindspore.Tensor(x)).asnumpy(), expected)


def test_tuple_of_example_inputs_is_several_inputs(sides):
    import mindspore
    import torch

    torch_side, ms_side, _, directory = sides
    model, cell = _cell(torch_side, ms_side, "Pair", False)
    rng = np.random.RandomState(1)
    x, mask = rng.randn(5, 4).astype(np.float32), rng.randn(5, 3).astype(np.float32)
    with torch.no_grad():
        expected = torch_side.trace_pair(model, torch.tensor(x), torch.tensor(mask), str(directory / "pair.pt")).numpy()
        _close(torch_side.load_traced(str(directory / "pair.pt"))(torch.tensor(x), torch.tensor(mask)).numpy(),
               expected)
    traced_out = ms_side.trace_pair(cell, mindspore.Tensor(x), mindspore.Tensor(mask), str(directory / "pair_ms.pt"))
    _close(traced_out.asnumpy(), expected)  # traced(x, mask) calls in between: the Cell
    graph = ms_side.load_traced(str(directory / "pair_ms.pt"))
    _close(graph(mindspore.Tensor(x), mindspore.Tensor(mask)).asnumpy(), expected)


def test_exported_program_saves_and_loads(sides):
    import mindspore
    import torch

    torch_side, ms_side, _, directory = sides
    model, cell = _cell(torch_side, ms_side, "Net", False)
    x = np.random.RandomState(2).randn(2, 3, 8, 8).astype(np.float32)
    with torch.no_grad():
        expected = model(torch.tensor(x)).numpy()
        _close(torch_side.export_program(model, torch.tensor(x), str(directory / "net.pt2")).numpy(), expected)
        _close(torch_side.load_program(str(directory / "net.pt2"))(torch.tensor(x)).numpy(), expected)
    _close(ms_side.export_program(cell, mindspore.Tensor(x), str(directory / "net_ms.pt2")).asnumpy(), expected)
    program = ms_side.load_program(str(directory / "net_ms.pt2"))
    assert isinstance(program, mindspore.nn.GraphCell)
    _close(program(mindspore.Tensor(x)).asnumpy(), expected)


def test_whole_model_save_is_a_checkpoint_a_rebuilt_cell_loads(sides):
    """torch.save(model, path): the weights, in a MindSpore checkpoint; the Cell built again and
    the checkpoint loaded into it gives the saved Cell's outputs."""
    import mindspore

    _, ms_side, _, directory = sides
    path = str(directory / "whole.pt")
    saved = ms_side.save_whole(path)
    assert (directory / "whole.pt.ckpt").is_file()
    rebuilt = ms_side.Net()
    not_loaded, _ = mindspore.load_param_into_net(rebuilt, mindspore.load_checkpoint(path + ".ckpt"))
    assert not not_loaded
    rebuilt.set_train(False)
    x = mindspore.Tensor(np.random.RandomState(3).randn(2, 3, 8, 8).astype(np.float32))
    _close(rebuilt(x).asnumpy(), saved(x).asnumpy())


def _convert(code: str) -> str:
    return convert_source("import torch\n" + code, "snippet.py").output


def test_saves_that_cannot_be_exported_are_marked():
    cases = {
        # the trace and the save in different functions
        "traced = torch.jit.trace(model, x)\ndef save(path):\n    traced.save(path)\n": "in another function",
        "def save(path):\n    traced = torch.jit.trace(model, x)\n    if ok:\n        traced = other\n"
        "    torch.jit.save(traced, path)\n": "may not hold the traced module",
        "traced = torch.jit.trace(model, x)\nfor x in batches:\n    traced.save(path)\n": "assigned again",
        "traced = torch.jit.trace(model, x)\nmodel.eval()\ntraced.save(path)\n": "mode is switched",
        "traced = torch.jit.trace(model, x, example_kwarg_inputs={'m': m})\ntraced.save(path)\n": "keyword example",
        "ep = torch.export.export(model, (x,))\nreturn_value = ep\n": "used as more than ep.module()",
        "ep = torch.export.load(path)\nprint(ep)\n": "used as more than",
    }
    for code, reason in cases.items():
        text = _convert(code)
        assert "# TODO(ms-migrate)" in text and reason in text, (code, text)


def test_same_scope_forms_under_with_and_in_loops():
    text = _convert("with torch.no_grad():\n    traced = torch.jit.trace(model, torch.randn(1, 4))\n"
                    "traced.save('t.pt')\nfor step in range(3):\n    ex = torch.randn(2, 4)\n"
                    "    t = torch.jit.trace(model, ex)\n    t.save(f's{step}.pt')\n")
    assert "TODO(ms-migrate)" not in text, text
    assert 'mindspore.export(traced, ops.randn(1, 4), file_name="t.pt", file_format="MINDIR")' in text
    assert 'mindspore.export(t, ex, file_name=f"s{step}.pt", file_format="MINDIR")' in text
