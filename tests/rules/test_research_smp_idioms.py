"""Idioms of segmentation-models-pytorch and pretrainedmodels (model packages
published on PyPI) that kept their converted files from importing without
torch, converted and run against torch on the same inputs:

- a marked statement whose rule repeated the unconvertible argument in its
  result (``torch.FloatTensor(torch.FloatStorage())``): each copy of the torch
  reference needs torch, so the import moves under the marker with it instead
  of staying at the top of the file.
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
