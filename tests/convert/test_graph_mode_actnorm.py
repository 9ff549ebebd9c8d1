"""Glow's ActNorm in graph mode: a data-dependent first-batch initialization through
``.item()`` and ``.data`` (transpiler/convert/structural/item_tests.py and
assigned_data.py), values and gradients as torch's."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.conversion import convert_to
from tests.convert.test_graph_mode import graph_mode_side
from tests.gradient_check import Case, differences, load_torch_module, torch_side

SOURCE = textwrap.dedent(
    '''
    import torch
    from torch import nn


    class ActNorm(nn.Module):
        """rosinality/glow-pytorch's: initialized from the first batch it sees."""

        def __init__(self, in_channel):
            super().__init__()
            self.loc = nn.Parameter(torch.zeros(1, in_channel, 1, 1))
            self.scale = nn.Parameter(torch.ones(1, in_channel, 1, 1))
            self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))

        def initialize(self, input):
            with torch.no_grad():
                flatten = input.permute(1, 0, 2, 3).contiguous().view(input.shape[1], -1)
                mean = flatten.mean(1).view(1, -1, 1, 1)
                std = flatten.std(1).view(1, -1, 1, 1)
                self.loc.data.copy_(-mean)
                self.scale.data.copy_(1 / (std + 1e-6))

        def forward(self, input):
            if self.initialized.item() == 0:
                self.initialize(input)
                self.initialized.fill_(1)
            return self.scale * (input + self.loc)


    class Flow(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = ActNorm(3)
            self.conv = nn.Conv2d(3, 3, 1)

        def forward(self, x):
            return self.conv(self.norm(x))


    def item_outside_tests(x):
        """Not a test of a compiled function: .item() stays."""
        return x.sum().item() > 0
    '''
)

INPUT = np.random.RandomState(0).rand(2, 3, 4, 4).astype(np.float32) * 3 + 1
CASES = [Case("Flow", [INPUT], args=[])]


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("actnorm")
    source = folder / "actnorm.py"
    source.write_text(SOURCE)
    (folder / "out").mkdir()
    return folder, source, convert_to(source, folder / "out")


def test_the_tensor_is_compared_and_the_parameter_assigned(converted):
    text = converted[2].read_text()
    assert "        if self.initialized == 0:\n" in text, text
    assert "self.loc, ops.broadcast_to(-mean, self.loc.shape)" in text and "self.loc.data" not in text, text
    assert "self.scale.data" not in text, text
    assert "return x.sum().item() > 0" in text, text  # outside compiled code


def test_values_and_gradients_in_graph_mode_match_torch(converted):
    folder, source, target = converted
    module = load_torch_module(source, "actnorm_torch")
    torch_results = [torch_side(module, case) for case in CASES]
    ms_results = graph_mode_side(target, CASES, torch_results, folder)
    problems = differences(torch_results[0], ms_results[0])
    assert not problems, problems


_FIRST_BATCHES = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import mindspore
    mindspore.set_context(mode=mindspore.GRAPH_MODE)
    spec = json.loads(sys.argv[1])
    sys.path.insert(0, spec["directory"])
    norm = __import__(spec["module"]).ActNorm(3)
    first = norm(mindspore.Tensor(np.load(spec["data"])["x"]))
    second = norm(mindspore.Tensor(np.load(spec["data"])["x"] * 2))
    np.savez(spec["result"], first=first.asnumpy(), second=second.asnumpy(), initialized=norm.initialized.asnumpy())
    """
)


def test_graph_mode_initializes_on_the_first_batch_only(converted):
    """A fresh ActNorm in graph mode: the branch runs on the first call, not the second."""
    folder, source, target = converted
    torch = pytest.importorskip("torch")
    module = load_torch_module(source, "actnorm_torch_fresh")
    norm = module.ActNorm(3)
    with torch.no_grad():
        expected = [norm(torch.tensor(INPUT)).numpy(), norm(torch.tensor(INPUT * 2)).numpy()]
    np.savez(folder / "fresh_in.npz", x=INPUT)
    spec = {"directory": str(target.parent), "module": target.stem, "data": str(folder / "fresh_in.npz"),
            "result": str(folder / "fresh_out.npz")}
    script = folder / "first_batches.py"
    script.write_text(_FIRST_BATCHES)
    root = pathlib.Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, str(script), json.dumps(spec)], capture_output=True, text=True,
                          timeout=600, cwd=folder, env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr[-4000:]
    result = np.load(folder / "fresh_out.npz")
    assert int(result["initialized"]) == 1
    np.testing.assert_allclose(result["first"], expected[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(result["second"], expected[1], rtol=1e-4, atol=1e-5)
