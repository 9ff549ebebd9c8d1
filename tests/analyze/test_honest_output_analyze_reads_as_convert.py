"""``analyze`` reads what ``convert`` reads, as convert reads it: a syntax error
is reported with convert's wording and position, and a notebook's code cells
are analysed (joined as convert joins them, positions in their cells)."""

from __future__ import annotations

import json

from nbformat import writes
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from transpiler.cli import main

BROKEN = "import torch\nx = torch.zeros(2\ny = 3\n"


def test_a_syntax_error_reads_the_same_in_analyze_and_convert(tmp_path, capsys):
    (tmp_path / "bad.py").write_text(BROKEN)
    bad = str(tmp_path / "bad.py")
    assert main(["convert", bad, "--diff"]) == 1
    convert_err = capsys.readouterr().err
    main(["analyze", bad, "--format", "json", "--import-timeout", "0"])
    (entry,) = json.loads(capsys.readouterr().out)["files"]
    assert entry["status"] == "failed"
    assert entry["error"] == f"syntax error: '(' was never closed (at {bad}:2:16)"
    assert f"{bad}:2:16: error: syntax error: '(' was never closed" in convert_err
    assert f"not converted: {bad}: {entry['error']}" in convert_err


def _notebook() -> str:
    return writes(new_notebook(cells=[
        new_markdown_cell("# a model"),
        new_code_cell("import torch\nimport torch.nn as nn\n%matplotlib inline"),
        new_code_cell("\nlayer = nn.Linear(3, 2)\ny = torch.cat([layer(torch.zeros(1, 3))] * 2)\nprint(y.shape)"),
    ], metadata={"language_info": {"name": "python"}}))


def test_a_notebook_is_analysed_as_convert_converts_it(tmp_path, capsys):
    (tmp_path / "nb.ipynb").write_text(_notebook())
    nb = str(tmp_path / "nb.ipynb")
    assert main(["analyze", nb, "--format", "json", "--import-timeout", "0"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["summary"]["analysed"] == 1 and data["summary"]["failed"] == 0, data["files"]
    where = {(u["api"], u.get("cell"), u["line"]) for u in data["uses"]}
    # the third cell's lines count from its own first line (a blank line, then the Linear)
    assert ("torch.nn.Linear", 3, 2) in where, where
    assert ("torch.cat", 3, 3) in where, where
    linear = next(row for row in data["apis"] if row["api"] == "torch.nn.Linear")
    assert linear["locations"] == [f"{nb}:cell 3:2"]


def test_a_notebook_in_a_tree_is_counted(tmp_path, capsys):
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "nb.ipynb").write_text(_notebook())
    assert main(["analyze", str(tmp_path / "tree"), "--import-timeout", "0", "--color", "never"]) == 0
    out = capsys.readouterr().out
    assert "files: 1 Python files, 1 analysed" in out, out
    assert "nb.ipynb:cell 3:2" in out, out
