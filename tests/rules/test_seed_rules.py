"""torch.manual_seed -> mindspore.set_seed keeps what a seed promises: the same
seed repeats the draws, another seed changes them. The numbers themselves
differ between the frameworks (different generators), and the execution
harness replays torch's draws to MindSpore, which would make any seed look
right; so the converted code runs here without the harness."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import torch

from tests.golden_files import ROOT
from tests.snippets import convert_full

SNIPPET = (
    "torch.manual_seed(3)\nfirst = torch.rand(4)\nlayer = nn.Linear(3, 2)\n"
    "torch.manual_seed(3)\nagain = torch.rand(4)\nsame_layer = nn.Linear(3, 2)\n"
    "torch.manual_seed(4)\nother = torch.rand(4)\n"
    "result = [bool((first == again).all()), bool((first == other).all()),\n"
    "          bool((layer.weight == same_layer.weight).all())]\n"
)


def _torch_result() -> list[bool]:
    scope: dict = {}
    exec("import torch\nimport torch.nn as nn\n" + SNIPPET, scope)
    return scope["result"]


def test_manual_seed_repeats_the_draws_as_in_torch(tmp_path):
    converted = convert_full(SNIPPET)
    assert "mindspore.set_seed(3)" in converted and "torch" not in converted
    run = subprocess.run([sys.executable, "-c", converted + "\nimport json\nprint('RESULT ' + json.dumps(result))"],
                         cwd=ROOT, env={**os.environ, "GLOG_v": "3"}, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    mindspore_result = json.loads(next(l for l in run.stdout.splitlines() if l.startswith("RESULT "))[7:])
    assert _torch_result() == [True, False, True]
    assert mindspore_result == [True, False, True]
