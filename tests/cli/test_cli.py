"""`ms-migrate convert` as a user runs it: files, trees, --diff, -j, reports,
bad input and refusals."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from transpiler.cli import main

MODEL = "import torch.nn as nn\n\nclass Net(nn.Module):\n    def forward(self, x):  # keep\n        return x\n"


def run_cli(*args: str) -> int:
    return main(list(args))


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "model.py").write_text(MODEL)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "util.py").write_text("import torch\nx = torch.zeros(2, 3)\n")
    (root / "README.md").write_text("# docs\n")
    (root / "data.bin").write_bytes(b"\x00\x01\x02")
    return root


def test_single_file(tmp_path, capsys):
    source = tmp_path / "model.py"
    source.write_text(MODEL)
    assert run_cli("convert", str(source), "-o", str(tmp_path / "model_ms.py")) == 0
    out = (tmp_path / "model_ms.py").read_text()
    assert "class Net(nn.Cell):\n    def construct(self, x):  # keep\n" in out
    assert source.read_text() == MODEL
    assert "1 converted" in capsys.readouterr().err


def test_tree_mirrors_input_and_copies_other_files(project, tmp_path):
    out = tmp_path / "out"
    assert run_cli("convert", str(project), "-o", str(out), "-q") == 0
    assert (out / "pkg" / "util.py").read_text() == "from mindspore import ops\nx = ops.zeros((2, 3))\n"
    assert (out / "pkg" / "__init__.py").read_text() == ""
    assert (out / "README.md").read_text() == "# docs\n"
    assert (out / "data.bin").read_bytes() == b"\x00\x01\x02"


def test_parallel_run_gives_the_same_output(project, tmp_path):
    assert run_cli("convert", str(project), "-o", str(tmp_path / "a"), "-q") == 0
    assert run_cli("convert", str(project), "-o", str(tmp_path / "b"), "-q", "-j", "2") == 0
    for name in ("model.py", "pkg/util.py"):
        assert (tmp_path / "a" / name).read_text() == (tmp_path / "b" / name).read_text()


def test_diff_writes_nothing(project, capsys):
    before = sorted(os.listdir(project))
    assert run_cli("convert", str(project / "pkg" / "util.py"), "--diff") == 0
    out = capsys.readouterr().out
    assert "\n-x = torch.zeros(2, 3)\n" in out and "\n+x = ops.zeros((2, 3))\n" in out
    assert sorted(os.listdir(project)) == before


def test_reports(project, tmp_path):
    out = tmp_path / "out"
    report_json, report_md = tmp_path / "r.json", tmp_path / "r.md"
    (project / "odd.py").write_text("import torch\ny = torch.frobnicate(1)\n")
    run_cli("convert", str(project), "-o", str(out), "-q", "--report", str(report_json), "--report", str(report_md))
    data = json.loads(report_json.read_text())
    assert data["uses"]["marked"] == 1 and data["uses"]["converted"] >= 3
    marker = next(d for d in data["diagnostics"] if d["severity"] == "marker")
    assert marker["path"].endswith("odd.py") and marker["line"] == 2 and marker["rule"] == "torch.frobnicate"
    assert {"path", "line", "col", "rule", "severity", "message"} <= set(marker)
    markdown = report_md.read_text()
    assert "## Marked for manual migration (1)" in markdown and "odd.py:2:" in markdown


def test_bad_files_do_not_stop_the_batch(project, tmp_path, capsys):
    (project / "broken.py").write_text("import torch\ndef f(:\n    pass\n")
    (project / "latin.py").write_bytes(b"import torch\nname = '\xe9'\n")
    out = tmp_path / "out"
    assert run_cli("convert", str(project), "-o", str(out)) == 1
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if ": error: " in line]
    assert any("broken.py:2:" in line and "syntax error" in line for line in lines), err
    assert any("latin.py:2:" in line and "decode" in line for line in lines), err
    assert len(lines) == 2
    assert (out / "pkg" / "util.py").exists()  # the rest was converted
    assert "2 failed" in err


def test_refuses_to_write_into_the_input_tree(project, capsys):
    assert run_cli("convert", str(project), "-o", str(project / "out")) == 2
    assert "inside the input tree" in capsys.readouterr().err
    assert not (project / "out").exists()


def test_refuses_existing_output_without_force(project, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert run_cli("convert", str(project), "-o", str(out)) == 2
    assert "--force" in capsys.readouterr().err
    assert run_cli("convert", str(project), "-o", str(out), "--force", "-q") == 0
    assert (out / "keep.txt").read_text() == "mine"


def test_usage_errors_exit_2(tmp_path, capsys):
    assert run_cli("convert", str(tmp_path / "missing.py"), "-o", str(tmp_path / "x.py")) == 2
    assert run_cli("convert", str(tmp_path)) == 2
    with pytest.raises(SystemExit) as exc:
        run_cli("convert", "--no-such-flag")
    assert exc.value.code == 2


def test_converting_the_output_again_changes_nothing(project, tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    run_cli("convert", str(project), "-o", str(first), "-q")
    run_cli("convert", str(first), "-o", str(second), "-q")
    for path in first.rglob("*.py"):
        assert (second / path.relative_to(first)).read_text() == path.read_text()


def test_python_dash_m_and_console_script(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import torch\ny = torch.zeros(1)\n")
    for command in ([sys.executable, "-m", "transpiler"], [os.path.join(os.path.dirname(sys.executable), "ms-migrate")]):
        run = subprocess.run([*command, "convert", str(source), "--diff"], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        assert "+y = ops.zeros(1)" in run.stdout
