"""``convert --diff``: a patch that ``git apply`` and ``patch -p1`` apply to
a copy of the input tree, giving the converted tree; colour on a terminal."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

import nbformat
import pytest

from transpiler.cli import main
from transpiler.batch.diffs import DiffWriter, unified

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def awkward(tmp_path) -> pathlib.Path:
    """Files a naive diff gets wrong: no newline at the end, a form feed and
    CRLF line endings, spaces in names, nested directories, files that do not
    change."""
    root = tmp_path / "awkward"
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "no_newline.py").write_text("import torch\nx = torch.zeros(2, 3)")
    (root / "pkg" / "form_feed.py").write_text("import torch\n\x0c\ndef f():\n    return torch.ones(1)  # \x0c in it\n")
    (root / "pkg" / "sub" / "crlf.py").write_bytes(b"import torch\r\ny = torch.zeros(4)\r\n")
    (root / "pkg" / "plain.py").write_text("print('unchanged')\n")
    (root / "notes.txt").write_text("copied\n")
    (root / "with space").mkdir()
    (root / "with space" / "a model.py").write_text("import torch\nz = torch.ones(3)\n")
    return root


def _diff(source: pathlib.Path, *extra: str) -> str:
    done = subprocess.run([sys.executable, "-m", "transpiler", "convert", str(source), "--diff", *extra],
                          capture_output=True, cwd="/", timeout=600)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode()  # bytes: text mode would turn the CRLF of a file into LF


def _python_files(root: pathlib.Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.py"))}


@pytest.mark.parametrize("tree", ["samples", "awkward"])
@pytest.mark.parametrize("tool", [["git", "apply", "-"], ["patch", "-p1", "--quiet"]])
def test_diff_applies_to_a_copy_of_the_input(tree, tool, awkward, tmp_path):
    source = ROOT / "samples" if tree == "samples" else awkward
    patch = _diff(source, "--color", "never")
    assert patch.startswith("--- a/")
    converted = tmp_path / "converted"
    assert main(["convert", str(source), "-o", str(converted), "-q"]) == 0
    copy = tmp_path / "copy"
    shutil.copytree(source, copy)
    if shutil.which(tool[0]) is None:
        pytest.fail(f"{tool[0]} is needed to apply the diff: sh tests/install_system_tools.sh installs it")
    applied = subprocess.run(tool, input=patch.encode(), cwd=copy, capture_output=True, timeout=120)
    assert applied.returncode == 0, applied.stderr.decode() + applied.stdout.decode()
    assert _python_files(copy) == _python_files(converted)


def test_paths_are_relative_to_the_input_directory(awkward):
    patch = _diff(awkward)
    headers = [line for line in patch.splitlines() if line.startswith(("--- ", "+++ "))]
    assert "--- a/pkg/sub/crlf.py" in headers and "+++ b/no_newline.py" in headers
    assert "\\ No newline at end of file" in patch


def test_single_file_diff_names_the_file(awkward):
    patch = _diff(awkward / "no_newline.py")
    assert patch.startswith("--- a/no_newline.py\n+++ b/no_newline.py\n")


def test_lines_split_on_newlines_only():
    diff = unified("a\x0cb\nx = 1\n", "a\x0cb\nx = 2\n", "a/f.py", "b/f.py")
    assert " a\x0cb\n" in diff and "-x = 1\n+x = 2\n" in diff


def test_notebooks_are_shown_cell_by_cell(tmp_path):
    cells = [nbformat.v4.new_markdown_cell("# torch demo"), nbformat.v4.new_code_cell("import torch"),
             nbformat.v4.new_code_cell("print('same')"), nbformat.v4.new_code_cell("x = torch.zeros(2, 3)")]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), str(tmp_path / "nb.ipynb"))
    patch = _diff(tmp_path / "nb.ipynb")
    assert "--- a/nb.ipynb:cell 4\n+++ b/nb.ipynb:cell 4\n" in patch
    assert "-x = torch.zeros(2, 3)\n+x = ops.zeros((2, 3))\n" in patch
    assert "cell 3" not in patch and "cell 1" not in patch


def test_git_apply_skips_the_notebook_cells_of_a_tree_when_told(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "m.py").write_text("import torch\nx = torch.zeros(2)\n")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import torch\ny = torch.ones(1)")])
    nbformat.write(notebook, str(tree / "nb.ipynb"))
    patch = _diff(tree)
    assert "--- a/nb.ipynb:cell 1\n" in patch
    applied = subprocess.run(["git", "apply", "--exclude=*.ipynb:*", "-"], input=patch.encode(), cwd=tree,
                             capture_output=True, timeout=120)
    assert applied.returncode == 0, applied.stderr.decode()
    assert (tree / "m.py").read_text() == "from mindspore import ops\nx = ops.zeros(2)\n"


class _Terminal:
    """A stream that says it is a terminal."""

    def __init__(self):
        self.parts = []

    def write(self, text):
        self.parts.append(text)

    def flush(self):
        pass

    def isatty(self):
        return True

    @property
    def text(self):
        return "".join(self.parts)


DIFF = unified("x = 1\ny = 2\n", "x = 1\ny = 3\n", "a/f.py", "b/f.py")


@pytest.mark.parametrize("color, terminal, coloured", [
    ("auto", True, True), ("auto", False, False), ("always", False, True), ("never", True, False),
])
def test_colour(color, terminal, coloured, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    stream = _Terminal()
    if not terminal:
        stream.isatty = lambda: False
    DiffWriter(color, stream).write(DIFF)
    assert ("\x1b[" in stream.text) == coloured
    if coloured:
        assert "\x1b[31m-y = 2" in stream.text and "\x1b[32m+y = 3" in stream.text
    assert re.sub(r"\x1b\[[0-9;]*m", "", stream.text) == DIFF  # the same text, only coloured


def test_no_color_environment_turns_auto_off(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    stream = _Terminal()
    DiffWriter("auto", stream).write(DIFF)
    assert stream.text == DIFF


def test_color_flag_on_the_command_line(tmp_path):
    (tmp_path / "m.py").write_text("import torch\nx = torch.zeros(1)\n")
    env = {**os.environ, "GLOG_v": "3"}
    done = subprocess.run([sys.executable, "-m", "transpiler", "convert", str(tmp_path / "m.py"), "--diff",
                           "--color", "always"], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0 and "\x1b[" in done.stdout
    done = subprocess.run([sys.executable, "-m", "transpiler", "convert", str(tmp_path / "m.py"), "--diff"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0 and "\x1b[" not in done.stdout  # not a terminal
