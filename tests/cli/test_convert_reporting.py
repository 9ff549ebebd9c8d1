"""What ``convert`` says is honest: a file that failed is named as not
written and counts against the conversion rate, a directory without Python
files is an error, and the summary says where the markers are."""

from __future__ import annotations

import json

from transpiler.cli import main


def test_a_failed_file_is_named_not_written_and_counts_against_the_rate(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    (src / "broken.py").write_text("import torch\nx = torch.zeros(2)\ndef f(:\n    pass\n")
    out = tmp_path / "out"
    report = tmp_path / "r.json"
    assert main(["convert", str(src), "-o", str(out), "-q", "--report", str(report)]) == 1
    err = capsys.readouterr().err
    line = next(line for line in err.splitlines() if "not written" in line)
    assert line.startswith(f"ms-migrate: not written: {src / 'broken.py'}: ") and "syntax" in line
    assert "conversion rate: 0.0%" in err and "100.0%" not in err
    assert "1 failed" in err
    assert not (out / "broken.py").exists()
    data = json.loads(report.read_text())
    assert data["conversion_rate"] < 1 and data["uses"]["in_failed_files"] == 1
    assert data["not_written"][0]["path"].endswith("broken.py")


def test_a_failed_file_among_good_ones_keeps_the_rate_below_100(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    (src / "good.py").write_text("import torch\nx = torch.zeros(2)\n")
    (src / "latin.py").write_bytes(b"import torch\nname = '\xe9'\ny = torch.ones(1)\n")
    assert main(["convert", str(src), "-o", str(tmp_path / "out"), "-q"]) == 1
    err = capsys.readouterr().err
    assert "not written: " in err and "latin.py: cannot decode" in err
    assert "conversion rate: 50.0%" in err and "1 torch use seen in the 1 file that failed" in err


def test_an_empty_directory_or_one_without_python_files_is_an_error(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["convert", str(empty), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"ms-migrate: error: {empty}: no Python files to convert (.py, .ipynb): the directory is empty"
    (empty / "README.md").write_text("# docs\n")
    assert main(["convert", str(empty), "--diff"]) == 2
    err = capsys.readouterr().err
    assert "no Python files to convert" in err and "100.0%" not in err
    assert not (tmp_path / "out").exists()


def test_the_summary_lists_where_the_markers_are(tmp_path, capsys):
    source = tmp_path / "m.py"
    source.write_text("import torch\n\n\ndef f():\n    y = torch.frobnicate(1)\n    return y\n")
    assert main(["convert", str(source), "-o", str(tmp_path / "m_ms.py"), "-q"]) == 0
    err = capsys.readouterr().err
    assert f"  {source}:5:9: torch.frobnicate: no MindSpore rule for this API\n" in err


def test_the_marker_list_is_capped(tmp_path, capsys):
    source = tmp_path / "many.py"
    source.write_text("import torch\n" + "".join(f"y{i} = torch.frobnicate({i})\n" for i in range(25)))
    assert main(["convert", str(source), "--diff", "--report", str(tmp_path / "r.md")]) == 0
    err = capsys.readouterr().err
    listed = [line for line in err.splitlines() if line.startswith(f"  {source}:")]
    assert len(listed) == 20 and listed[0] == f"  {source}:2:6: torch.frobnicate: no MindSpore rule for this API"
    assert f"  and 5 more, see {tmp_path / 'r.md'}" in err
