"""``convert --check`` as black's and ruff's: nothing written, exit 1 when the
conversion would change something; ``--diff --check`` prints the diff and
exits 1; ``--diff`` alone exits 0. Also where a single file goes
(``-o newdir/``) and the mode of the report files."""

from __future__ import annotations

import os
import stat

from transpiler.cli import main

TORCH = "import torch\ny = torch.zeros(2)\n"
CONVERTED = "from mindspore import ops\ny = ops.zeros(2)\n"


def test_check_writes_nothing_and_fails_when_the_conversion_changes_the_file(tmp_path, capsys):
    source = tmp_path / "m.py"
    source.write_text(TORCH)
    before = sorted(os.listdir(tmp_path))
    assert main(["convert", str(source), "--check"]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and f"would convert {source}" in captured.err
    assert sorted(os.listdir(tmp_path)) == before and source.read_text() == TORCH
    source.write_text(CONVERTED)
    assert main(["convert", str(source), "--check"]) == 0
    assert "check: nothing would change" in capsys.readouterr().err


def test_diff_alone_exits_0_and_with_check_exits_1(tmp_path, capsys):
    source = tmp_path / "m.py"
    source.write_text(TORCH)
    assert main(["convert", str(source), "--diff"]) == 0
    plain = capsys.readouterr().out
    assert main(["convert", str(source), "--diff", "--check"]) == 1
    assert capsys.readouterr().out == plain and "+y = ops.zeros(2)" in plain


def test_check_with_an_output_says_whether_a_run_would_change_it(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    (src / "m.py").write_text(TORCH)
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "--check", "-q"]) == 1
    assert not out.exists()
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    assert main(["convert", str(src), "-o", str(out), "--check", "-q"]) == 0
    (src / "m.py").write_text(TORCH.replace("zeros(2)", "zeros(3)"))
    capsys.readouterr()
    assert main(["convert", str(src), "-o", str(out), "--check", "-q"]) == 1
    assert f"would write {out / 'm.py'}" in capsys.readouterr().err
    assert (out / "m.py").read_text() == CONVERTED


def test_check_refuses_the_steps_that_need_written_files(tmp_path, capsys):
    source = tmp_path / "m.py"
    source.write_text(TORCH)
    assert main(["convert", str(source), "-o", str(tmp_path / "o.py"), "--check", "--check-imports"]) == 2
    assert not (tmp_path / "o.py").exists()


def test_a_single_file_into_a_directory_named_with_a_trailing_slash(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "vae.py").write_text(TORCH)
    assert main(["convert", "vae.py", "-o", "newdir/", "-q"]) == 0
    assert (tmp_path / "newdir").is_dir() and (tmp_path / "newdir" / "vae.py").read_text() == CONVERTED
    assert main(["convert", "vae.py", "-o", "newdir", "-q"]) == 0  # an existing directory: into it too
    assert sorted(os.listdir(tmp_path / "newdir")) == ["vae.py"]
    (tmp_path / "afile").write_text("x")
    assert main(["convert", "vae.py", "-o", "afile/", "-q"]) == 2
    assert "afile/: not a directory" in capsys.readouterr().err


def test_report_files_get_the_umask_mode(tmp_path):
    source = tmp_path / "m.py"
    source.write_text(TORCH)
    old = os.umask(0o022)
    try:
        assert main(["convert", str(source), "--diff", "--report", str(tmp_path / "r.json"),
                     "--report", str(tmp_path / "r.md")]) == 0
    finally:
        os.umask(old)
    for name in ("r.json", "r.md"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644
