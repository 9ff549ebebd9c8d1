"""Bad and unusual inputs in one tree: each bad file gets one clear line, the
batch goes on, the odd-but-valid ones convert faithfully (encoding, BOM,
line endings, tabs), nothing in the input tree changes, and writes are
atomic."""

from __future__ import annotations

import builtins
import hashlib
import os

import pytest

import transpiler.batch.runner
import transpiler.batch.source_io
from transpiler.cli import main

TORCH_LINES = "import torch\nx = torch.zeros(2, 3)\n"
MODULE = (
    "import torch.nn as nn\n"
    "\n"
    "class Net(nn.Module):\n"
    "\tdef __init__(self):\n"
    "\t\tsuper().__init__()\n"
    "\t\tself.fc = nn.Linear(4, 2)\n"
    "\n"
    "\tdef forward(self, x):\n"
    "\t\treturn self.fc(x)\n"
)


def _bad_tree(root) -> dict[str, str]:
    """Files that must fail, with a fragment of their one error line."""
    root.mkdir()
    (root / "ok.py").write_text(TORCH_LINES)
    (root / "syntax_error.py").write_text("import torch\ndef f(:\n    pass\n")
    (root / "python2.py").write_text('import torch\nprint "hello"\n')
    (root / "undecodable.py").write_bytes(b"import torch\nname = '\xff\xfe'\n")
    (root / "binary.py").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4)
    (root / "unreadable.py").write_text(TORCH_LINES)
    os.chmod(root / "unreadable.py", 0)
    os.symlink("loop_b.py", root / "loop_a.py")
    os.symlink("loop_a.py", root / "loop_b.py")
    os.symlink(".", root / "here")  # a directory loop: not followed, so no endless walk
    return {
        "syntax_error.py": "syntax error",
        "python2.py": "Python 2",
        "undecodable.py": "cannot decode",
        "binary.py": "binary",
        "unreadable.py": "cannot read",
        "loop_a.py": "cannot read",
        "loop_b.py": "cannot read",
    }


def _snapshot(root) -> dict[str, tuple]:
    """Every entry of the tree with its content and metadata (links not followed)."""
    state = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            content = None
            if os.path.isfile(path) and not os.path.islink(path) and info.st_mode & 0o444:
                with open(path, "rb") as handle:
                    content = hashlib.sha256(handle.read()).hexdigest()
            state[os.path.relpath(path, root)] = (info.st_mode, info.st_size, info.st_mtime_ns, content,
                                                  os.readlink(path) if os.path.islink(path) else None)
    return state


@pytest.fixture
def unreadable_as_root(monkeypatch):
    """Root reads any file whatever its mode; make ``unreadable.py`` fail the
    way it does for everyone else."""
    if os.geteuid() != 0:
        return
    real_open = builtins.open

    def guarded(path, *args, **kwargs):
        if str(path).endswith("unreadable.py"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(transpiler.batch.runner, "open", guarded, raising=False)


def test_each_bad_file_gets_one_line_and_the_batch_goes_on(tmp_path, capsys, unreadable_as_root):
    source = tmp_path / "in"
    expected = _bad_tree(source)
    before = _snapshot(source)
    out = tmp_path / "out"
    assert main(["convert", str(source), "-o", str(out), "-q"]) == 1
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if ": error: " in line]
    for name, fragment in expected.items():
        mine = [line for line in errors if os.path.basename(line.split(":", 1)[0]) == name]
        assert len(mine) == 1, (name, errors)
        assert fragment in mine[0], mine[0]
    assert len(errors) == len(expected), errors
    assert "Traceback" not in err
    assert "mindspore" in (out / "ok.py").read_text()  # the good file was converted
    assert _snapshot(source) == before


def test_output_inside_the_input_is_refused_with_one_line(tmp_path, capsys):
    source = tmp_path / "in"
    source.mkdir()
    (source / "a.py").write_text(TORCH_LINES)
    before = _snapshot(source)
    assert main(["convert", str(source), "-o", str(source / "converted")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "inside the input tree" in err[0], err
    assert _snapshot(source) == before


def _convert_one(tmp_path, name: str, data: bytes) -> bytes:
    source = tmp_path / "in"
    source.mkdir(exist_ok=True)
    (source / name).write_bytes(data)
    out = tmp_path / f"out_{name}"
    assert main(["convert", str(source / name), "-o", str(out), "-q"]) == 0
    return out.read_bytes()


def test_coding_line_is_honoured(tmp_path):
    data = "# -*- coding: latin-1 -*-\nimport torch\nname = 'café'\nx = torch.zeros(2)\n".encode("latin-1")
    out = _convert_one(tmp_path, "latin.py", data)
    assert out.startswith(b"# -*- coding: latin-1 -*-\n")
    assert "name = 'café'".encode("latin-1") in out  # still latin-1, as declared
    assert b"ops.zeros(2)" in out
    compile(out, "latin.py", "exec")


def test_bom_is_kept(tmp_path):
    out = _convert_one(tmp_path, "bom.py", b"\xef\xbb\xbf" + TORCH_LINES.encode())
    assert out.startswith(b"\xef\xbb\xbf") and out.count(b"\xef\xbb\xbf") == 1
    assert b"ops.zeros((2, 3))" in out or b"ops.zeros(2, 3)" in out


def test_crlf_is_preserved_in_changed_and_unchanged_lines(tmp_path):
    text = "import torch\r\n# a comment\r\nx = torch.zeros(2, 3)\r\ny = [1,\r\n     2]\r\n"
    out = _convert_one(tmp_path, "crlf.py", text.encode())
    assert b"\n" not in out.replace(b"\r\n", b"")
    assert b"# a comment\r\n" in out and b"y = [1,\r\n     2]\r\n" in out
    assert b"torch" not in out


def test_tab_indentation_is_kept(tmp_path):
    out = _convert_one(tmp_path, "tabs.py", MODULE.encode()).decode()
    assert "class Net(nn.Cell):" in out and "\tdef construct(self, x):\n\t\treturn self.fc(x)\n" in out
    compile(out, "tabs.py", "exec")


def test_empty_file(tmp_path):
    assert _convert_one(tmp_path, "empty.py", b"") == b""


PLAIN_BLOCK = (
    "def helper_{i}(values, scale=2):\n"
    "    \"\"\"Plain Python between the models: most of a big file is not torch.\"\"\"\n"
    "    total = 0\n"
    "    for index, value in enumerate(values):\n"
    "        if index % 3 == 0:\n"
    "            total += value * scale  # every third\n"
    "    return {{'total': total, 'name': 'helper_{i}'}}\n"
    "\n"
    "\n"
)
MODEL_BLOCK = (
    "class Block{i}(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.conv = nn.Conv2d(3, 8, 3, padding=1)  # layer {i}\n"
    "\n"
    "    def forward(self, x):\n"
    "        return torch.flatten(self.conv(x), 1)\n"
    "\n"
    "\n"
)


@pytest.mark.slow
def test_ten_megabyte_file(tmp_path):
    parts = ["import torch\nimport torch.nn as nn\n\n\n"]
    size = models = i = 0
    while size < 10 * 1024 * 1024:
        block = MODEL_BLOCK if i % 10 == 0 else PLAIN_BLOCK
        models += block is MODEL_BLOCK
        parts.append(block.format(i=i))
        size += len(parts[-1])
        i += 1
    out = _convert_one(tmp_path, "big.py", "".join(parts).encode()).decode()
    # (the plain blocks' docstrings mention the word torch: look for code)
    assert out.count("(nn.Cell):") == models
    assert "import torch" not in out and "TODO(ms-migrate)" not in out
    assert f"'name': 'helper_{i - 1}'" in out or f"# layer {i - 1}\n" in out
    compile(out, "big.py", "exec")


def test_an_interrupted_write_leaves_no_partial_file(tmp_path, monkeypatch):
    target = tmp_path / "out.py"
    target.write_bytes(b"previous\n")

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(transpiler.batch.source_io.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        transpiler.batch.source_io.write_atomic(str(target), b"new content\n")
    assert target.read_bytes() == b"previous\n"
    assert os.listdir(tmp_path) == ["out.py"]  # no temporary left behind
