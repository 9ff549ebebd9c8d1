"""Idioms of segmentation-models-pytorch and pretrainedmodels (model packages
published on PyPI) that kept their converted files from importing without
torch, converted and run against torch on the same inputs:

- a marked statement whose rule repeated the unconvertible argument in its
  result (``torch.FloatTensor(torch.FloatStorage())``): each copy of the torch
  reference needs torch, so the import moves under the marker with it instead
  of staying at the top of the file.
- a module-level registry that stores torch classes no rule converts among
  converted ones (smp's ``resnet_encoders = {"resnet18": {"encoder":
  ResNetEncoder, "params": {"block": BasicBlock, ...}}}``): the registry is
  built without torch, the stored names are stand-ins imported under the
  marker that fail where they are used, naming it; the other entries work.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import torch

from tests.conversion import convert_to, load
from transpiler.convert.diagnostics import MARKER_PREFIX


def _convert(tmp_path: pathlib.Path, name: str, source: str) -> tuple[pathlib.Path, str]:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    converted = convert_to(path, out)
    return path, converted.read_text()


def _run_without_torch(directory: pathlib.Path, code: str) -> dict:
    """Run ``code`` in a child process where importing torch fails, with
    ``directory`` on the path; returns what it put in ``result``."""
    script = textwrap.dedent(f"""
        import json, sys, warnings
        from transpiler.proof.no_torch import block_torch
        block_torch()
        sys.path.insert(0, {str(directory)!r})
        result = {{}}
    """) + textwrap.dedent(code) + "\nprint('RESULT ' + json.dumps(result))\n"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(l for l in done.stdout.splitlines() if l.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


METER = '''
import torch


class Meter(object):
    def __init__(self):
        self.reset()

    def reset(self):
        self.scores = torch.FloatTensor(torch.FloatStorage())

    def mean(self, output):
        return torch.sigmoid(output).mean(dim=0)
'''


def test_copies_of_a_marked_reference_take_the_import_under_the_marker(tmp_path):
    path, text = _convert(tmp_path, "meter.py", METER)
    top = text[:text.index("class Meter")]
    assert "import torch" not in top
    reset = text[text.index("def reset"):text.index("def mean")]
    assert MARKER_PREFIX in reset and "import torch" in reset
    # the rest of the file runs without torch and computes what torch does
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    expected = load(path).Meter.mean(None, torch.from_numpy(x)).numpy()
    result = _run_without_torch(tmp_path / "out", f"""
        import numpy as np, mindspore
        import meter
        x = np.array({x.tolist()!r}, dtype=np.float32)
        result["mean"] = meter.Meter.mean(None, mindspore.Tensor(x)).asnumpy().tolist()
        try:
            meter.Meter()
        except ImportError as error:  # the marked statement fails where it is reached
            result["reset"] = str(error)
    """)
    np.testing.assert_allclose(np.array(result["mean"], dtype=np.float32), expected, rtol=1e-6, atol=1e-6)
    assert "torch" in result["reset"]


REGISTRY = '''
import torch
import torch.nn as nn
from torch.distributions import Gamma


class Encoder(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(3, width)

    def forward(self, x):
        return torch.relu(self.fc(x))


encoders = {
    "small": {"encoder": Encoder, "params": {"width": 2, "prior": Gamma}},
    "large": {"encoder": Encoder, "params": {"width": 4, "priors": [Gamma, Gamma]}},
}
'''


def test_a_registry_storing_unconverted_classes_is_built_without_torch(tmp_path):
    path, text = _convert(tmp_path, "registry.py", REGISTRY)
    assert "from torch.distributions import Gamma" not in text[:text.index("class Encoder")]
    assert "encoders = {" in text and "encoders = NotConverted" not in text
    assert text.index("except ImportError:") < text.index("encoders = {")  # the stand-in, not the registry
    assert text.count(MARKER_PREFIX) == 1
    torch_mod = load(path)
    torch.manual_seed(0)
    model = torch_mod.encoders["large"]["encoder"](4).eval()
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    with torch.no_grad():
        expected = model(torch.from_numpy(x)).numpy()
    weights = {"fc.weight": model.fc.weight.detach().numpy().tolist(), "fc.bias": model.fc.bias.detach().numpy().tolist()}
    result = _run_without_torch(tmp_path / "out", f"""
        import numpy as np, mindspore
        import registry
        entry = registry.encoders["large"]
        cell = entry["encoder"](entry["params"]["width"])
        weights = {weights!r}
        cell.fc.weight.set_data(mindspore.Tensor(np.array(weights["fc.weight"], dtype=np.float32)))
        cell.fc.bias.set_data(mindspore.Tensor(np.array(weights["fc.bias"], dtype=np.float32)))
        cell.set_train(False)
        result["out"] = cell(mindspore.Tensor(np.array({x.tolist()!r}, dtype=np.float32))).asnumpy().tolist()
        try:
            registry.encoders["small"]["params"]["prior"](1.0, 1.0)
        except NotImplementedError as error:  # the stored class fails where it is used
            result["prior"] = str(error)
    """)
    np.testing.assert_allclose(np.array(result["out"], dtype=np.float32), expected, rtol=1e-5, atol=1e-6)
    marker_line = text[:text.index(MARKER_PREFIX)].count("\n") + 1
    assert f"registry.py:{marker_line}: torch.distributions.Gamma" in result["prior"]
    # converting the output again changes nothing
    again = convert_to(tmp_path / "out" / "registry.py", tmp_path / "out", text=text)
    assert again.read_text() == text


ATTRIBUTE_READ = '''
import torch
import torch.distributions as D

PRIORS = {"gamma": D.Gamma, "scale": 2.0}
'''


def test_a_registry_reading_an_attribute_of_a_torch_module_stays_guarded_whole(tmp_path):
    """``D.Gamma`` reads an attribute when the statement runs: a stand-in for ``D``
    would fail at import, so the statement is guarded as a whole (its name a stand-in)."""
    _, text = _convert(tmp_path, "priors.py", ATTRIBUTE_READ)
    assert "D = NotConverted" not in text and 'PRIORS = NotConverted("PRIORS"' in text
    result = _run_without_torch(tmp_path / "out", """
        import priors
        try:
            priors.PRIORS["scale"]
        except NotImplementedError as error:
            result["error"] = str(error)
    """)
    assert "torch.distributions.Gamma" in result["error"]
