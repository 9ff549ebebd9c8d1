"""Every position ms-migrate prints or reports counts lines and columns from
1, as editors and SARIF do: a diagnostic about a whole line (the per-Cell tests
``--emit-tests`` wrote, an import ``--check-imports`` saw fail) is at column 1,
never 0."""

from __future__ import annotations

import re

from transpiler.cli import main
from transpiler.convert.diagnostics import Diagnostic, Severity
from transpiler.proof.check import ImportProblem, as_diagnostics

MODEL = """import torch.nn as nn


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x)
"""


def test_emit_tests_info_line_counts_columns_from_1(tmp_path, capsys):
    (tmp_path / "tiny.py").write_text(MODEL)
    assert main(["convert", str(tmp_path / "tiny.py"), "-o", str(tmp_path / "out" / "tiny.py"), "--emit-tests"]) == 0
    info = [line for line in capsys.readouterr().err.splitlines() if ": info: " in line]
    assert info, "no info line printed"
    for line in info:
        assert re.search(r"tiny\.py:1:1: info: per-Cell tests for Tiny written to ", line), line


def test_a_failed_import_is_at_column_1():
    (diagnostic,) = as_diagnostics([ImportProblem("/x/m.py", 7, "NameError: y")], lambda path: path)
    assert diagnostic.location == "/x/m.py:7:1"
    assert diagnostic.to_dict()["col"] == 1


def test_positions_made_by_the_rewrite_stay_unknown():
    """0:0 is the position of a node no source position has; it is not turned into 0:1."""
    assert Diagnostic("m.py", 0, 0, "r", Severity.INFO, "m").location == "m.py:0:0"
    assert Diagnostic("m.py", 3, 5, "r", Severity.INFO, "m").location == "m.py:3:5"
