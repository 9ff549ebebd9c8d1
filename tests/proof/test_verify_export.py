"""Export: ``verify --export`` proves the MindIR graph of the converted model gives its
PyNative outputs (and fails when it does not); the converted ``torch.onnx.export`` /
``torch.jit.load`` write and read a MindIR file whose graph gives the Cell's (and
torch's) outputs."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conversion import convert_to, load
from tests.golden_files import ROOT
from transpiler.proof.verify import MATCH, MISMATCH, VerifyRequest, verify
from transpiler.proof.verify_inputs import parse_input

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
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        return self.fc(self.drop(self.pool(x).flatten(1)))


def export(model, x, path):
    model.eval()
    torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["logits"], opset_version=17)


def load_exported(path):
    return torch.jit.load(path, map_location="cpu")
'''


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("verify_export")
    source = directory / "torch_side" / "exported_net.py"
    source.parent.mkdir()
    source.write_text(SOURCE, encoding="utf-8")
    out = directory / "ms_side"
    out.mkdir()
    return source, convert_to(source, out), directory


def test_converted_export_and_load(files):
    import mindspore
    import torch

    from transpiler.proof.weights import convert_state_dict

    source, converted, directory = files
    text = converted.read_text(encoding="utf-8")
    assert 'file_format="MINDIR"' in text and "nn.GraphCell(mindspore.load(path + \".mindir\"))" in text
    torch_side, ms_side = load(source), load(converted)
    torch.manual_seed(0)
    model = torch_side.Net().eval()
    cell = ms_side.Net()
    mindspore.load_param_into_net(cell, convert_state_dict(model.state_dict(), cell))
    x = np.random.RandomState(0).randn(2, 3, 8, 8).astype(np.float32)
    cell.set_train(True)  # torch.onnx.export exports in eval mode: so does the converted call
    path = str(directory / "net.onnx")
    ms_side.export(cell, mindspore.Tensor(x), path)
    assert (directory / "net.onnx.mindir").is_file()
    graph = ms_side.load_exported(path)
    assert isinstance(graph, mindspore.nn.GraphCell)
    expected = model(torch.tensor(x)).detach().numpy()
    np.testing.assert_allclose(cell(mindspore.Tensor(x)).asnumpy(), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(graph(mindspore.Tensor(x)).asnumpy(), expected, rtol=1e-5, atol=1e-5)


def _request(files, **changes):
    source, converted, _ = files
    return VerifyRequest(str(source), str(converted), "Net", [parse_input("2,3,8,8")], export=True, **changes)


def test_verify_export_matches(files):
    result = verify(_request(files))
    assert result.error is None, result.error
    assert result.exported and all(d.ok and d.compared for d in result.exported), result.lines()
    assert result.status == MATCH
    assert any("exported MindIR" in line for line in result.lines())


def test_verify_export_catches_a_graph_that_differs(files, monkeypatch):
    import mindspore

    class Shifted(mindspore.nn.GraphCell):
        def __call__(self, *inputs):
            return super().__call__(*inputs) + 1.0

    monkeypatch.setattr(mindspore.nn, "GraphCell", Shifted)
    result = verify(_request(files))
    assert result.error is None, result.error
    assert result.exported and not any(d.ok for d in result.exported)
    assert result.status == MISMATCH


def test_cli_flag(files):
    import subprocess
    import sys

    source, converted, _ = files
    done = subprocess.run([sys.executable, "-m", "transpiler.cli", "verify", str(source), str(converted), "--model",
                           "Net", "--input", "2,3,8,8", "--export"], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "exported MindIR" in done.stdout and "MATCH" in done.stdout
