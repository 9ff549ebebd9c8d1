"""The cache lives in the user cache directory (as black's does), never in
the converted tree: a converted tree holds the converted files and nothing
else, and converting it again gives the same tree."""

from __future__ import annotations

import os
import pathlib
import shutil
import stat

import nbformat
import pytest

from transpiler.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _tree_state(root: pathlib.Path) -> dict[str, tuple[bytes, int]]:
    """Every file below ``root`` (hidden ones too): its bytes and permission bits."""
    state = {}
    for directory, _, files in os.walk(root):
        for name in files:
            path = pathlib.Path(directory) / name
            state[str(path.relative_to(root))] = (path.read_bytes(), stat.S_IMODE(path.stat().st_mode))
    return state


def _notebook(path: pathlib.Path) -> None:
    cell = nbformat.v4.new_code_cell("import torch\nx = torch.ones(2)\nx")
    cell.outputs = [nbformat.v4.new_output("execute_result", data={"text/plain": "tensor([1., 1.])"},
                                           execution_count=1)]
    cell.execution_count = 1
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# demo"), cell]), str(path))


@pytest.fixture
def mixed(tmp_path) -> pathlib.Path:
    """Python files, a notebook and files that are copied as they are."""
    root = tmp_path / "mixed"
    (root / "pkg" / "assets").mkdir(parents=True)
    (root / "model.py").write_text("import torch.nn as nn\n\nclass Net(nn.Module):\n    pass\n")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "plain.py").write_text("print('no torch here')\n")
    (root / "pkg" / "assets" / "weights.bin").write_bytes(bytes(range(256)) * 4)
    (root / "README.md").write_text("# docs\n")
    (root / ".gitignore").write_text("*.pyc\n")
    script = root / "run.sh"
    script.write_text("#!/bin/sh\npython model.py\n")
    script.chmod(0o755)
    _notebook(root / "demo.ipynb")
    return root


def test_converted_tree_holds_no_tool_files(mixed, tmp_path):
    out = tmp_path / "out"
    assert main(["convert", str(mixed), "-o", str(out), "-q"]) == 0
    assert set(_tree_state(out)) == set(_tree_state(mixed))
    weights = pathlib.Path("pkg", "assets", "weights.bin")
    assert (out / weights).read_bytes() == (mixed / weights).read_bytes()
    assert os.access(out / "run.sh", os.X_OK)


@pytest.mark.parametrize("tree", ["samples", "mixed"])
def test_converting_the_converted_tree_gives_the_same_tree(tree, mixed, tmp_path):
    source = ROOT / "samples" if tree == "samples" else mixed
    first, second = tmp_path / "first", tmp_path / "second"
    assert main(["convert", str(source), "-o", str(first), "-q"]) == 0
    assert main(["convert", str(first), "-o", str(second), "-q"]) == 0
    assert _tree_state(second) == _tree_state(first)


def test_what_the_run_writes_into_the_tree_is_not_taken_into_the_next_output(mixed, tmp_path):
    """Reports and a cache the configuration puts inside the project (as the README's
    example does) are the tool's files: a later run neither converts nor copies them."""
    (mixed / "pyproject.toml").write_text('[tool.ms-migrate]\nreport = ["migration/report.md", "migration/report.json"]\n'
                                          'cache-dir = "ms_cache"\n')
    first, second = tmp_path / "first", tmp_path / "second"
    for out in (first, second):
        assert main(["convert", str(mixed), "-o", str(out), "-q"]) == 0
    assert (mixed / "migration" / "report.json").is_file() and (mixed / "ms_cache").is_dir()
    assert _tree_state(second) == _tree_state(first)
    assert not {p for p in _tree_state(second) if p.startswith(("migration/", "ms_cache/"))}
    flagged = ["--report", str(mixed / "flagged.md")]
    for out in ("third", "fourth"):
        assert main(["convert", str(mixed), "-o", str(tmp_path / out), "-q", *flagged]) == 0
    assert (mixed / "flagged.md").is_file() and not (tmp_path / "fourth" / "flagged.md").exists()


def test_cache_goes_to_the_user_cache_directory(mixed, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("MS_MIGRATE_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    out = tmp_path / "out"
    assert main(["convert", str(mixed), "-o", str(out), "-q"]) == 0
    cache = tmp_path / "xdg" / "ms-migrate"
    versions = [p for p in cache.iterdir() if p.name != "runs"]
    assert len(versions) == 1 and any(versions[0].rglob("*.json"))
    capsys.readouterr()
    # the same command again continues into its own output, from the cache
    assert main(["convert", str(mixed), "-o", str(out), "-q"]) == 0
    assert "files unchanged since the last run (from the cache)" in capsys.readouterr().err


def test_cache_dir_flag_wins(mixed, tmp_path, monkeypatch):
    monkeypatch.setenv("MS_MIGRATE_CACHE_DIR", str(tmp_path / "environment"))
    assert main(["convert", str(mixed), "-o", str(tmp_path / "out"), "-q", "--cache-dir", str(tmp_path / "mine")]) == 0
    versions = [p for p in (tmp_path / "mine").iterdir() if p.name != "runs"]
    assert len(versions) == 1 and any(versions[0].rglob("*.json"))
    assert not (tmp_path / "environment").exists()


def test_an_output_made_again_by_hand_is_not_taken_over(mixed, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["convert", str(mixed), "-o", str(out), "-q"]) == 0
    shutil.rmtree(out)
    out.mkdir()
    (out / "mine.txt").write_text("not yours")
    assert main(["convert", str(mixed), "-o", str(out), "-q"]) == 2
    assert "--force" in capsys.readouterr().err
    assert (out / "mine.txt").read_text() == "not yours"


def test_notebook_output_option_is_part_of_the_cache_key(mixed, tmp_path):
    out = tmp_path / "out"
    assert main(["convert", str(mixed), "-o", str(out), "-q"]) == 0
    assert nbformat.read(str(out / "demo.ipynb"), as_version=4).cells[1].outputs == []
    assert main(["convert", str(mixed), "-o", str(out), "-q", "--keep-outputs"]) == 0
    assert nbformat.read(str(out / "demo.ipynb"), as_version=4).cells[1].outputs != []


def test_a_cache_that_cannot_be_written_only_costs_speed(mixed, tmp_path, monkeypatch, capsys):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache directory would go")
    monkeypatch.setenv("MS_MIGRATE_CACHE_DIR", str(blocked / "cache"))
    assert main(["convert", str(mixed), "-o", str(tmp_path / "out"), "-q"]) == 0
    assert "converting without a cache" in capsys.readouterr().err
    assert set(_tree_state(tmp_path / "out")) == set(_tree_state(mixed))
