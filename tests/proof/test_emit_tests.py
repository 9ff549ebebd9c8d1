"""``convert --emit-tests``: per-Cell pytest files that run, and Cells that
cannot be built listed in the report with the reason."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from transpiler.cli import main
from transpiler.proof.emit_tests import plan_cells

SOURCE = textwrap.dedent(
    '''
    import torch
    import torch.nn as nn


    class Head(nn.Module):
        def __init__(self, dim, classes=3):
            super().__init__()
            self.fc = nn.Linear(dim, classes)

        def forward(self, x):
            return self.fc(x)


    class Net(nn.Module):
        def __init__(self, width=6):
            super().__init__()
            self.conv = nn.Conv2d(3, width, 3, padding=1)
            self.bn = nn.BatchNorm2d(width)
            self.head = Head(width)

        def forward(self, x):
            return self.head(self.bn(self.conv(x)).mean(dim=(2, 3)))


    class Mixer(nn.Module):
        def __init__(self, a, b):
            super().__init__()
            self.mix = nn.Linear(a, b)

        def forward(self, x):
            return self.mix(x)


    def build():
        return Head(4, classes=2)
    '''
)


def test_plan_uses_defaults_and_literal_instantiations():
    plan = plan_cells(SOURCE)
    assert plan.buildable == {"Head": {"args": [4], "kwargs": {"classes": 2}}, "Net": {"args": [], "kwargs": {}}}
    line, reason = plan.not_built["Mixer"]
    assert SOURCE.splitlines()[line - 1] == "class Mixer(nn.Module):" and "needs a, b" in reason


def test_emitted_tests_run_and_pass(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "model.py").write_text(SOURCE)
    out = tmp_path / "out"
    report = tmp_path / "r.json"
    assert main(["convert", str(src), "-o", str(out), "-q", "--emit-tests", "--report", str(report)]) == 0
    emitted = out / "test_model_cells.py"
    assert emitted.exists()
    diagnostics = json.loads(report.read_text())
    text = json.dumps(diagnostics)
    assert "Cell Mixer not tested: its constructor needs a, b" in text
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(emitted)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env={**os.environ, "GLOG_v": "3", "PYTHONPATH": os.getcwd()},
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "2 passed" in proc.stdout


def test_emitted_test_fails_when_the_conversion_is_wrong(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "model.py").write_text(SOURCE)
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--emit-tests"]) == 0
    converted = out / "model.py"
    converted.write_text(converted.read_text().replace(".mean(", ".sum("))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(out / "test_model_cells.py")],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
        env={**os.environ, "GLOG_v": "3", "PYTHONPATH": os.getcwd()},
    )
    assert proc.returncode == 1
    assert "1 failed, 1 passed" in proc.stdout
    assert "the difference comes from code between sub-Cells" in proc.stdout
