"""``verify`` and ``weights`` report a user's mistake (a missing file, a
misspelled model name, no ``--input``, a target folder that does not exist) as
one line naming the file and what is wrong, exit status 2, as ``convert``
does: no traceback, nothing on stdout."""

from __future__ import annotations

import pytest

from transpiler.cli import main

TORCH = """import torch.nn as nn


class TinyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x)
"""

MINDSPORE = """import mindspore.nn as nn


class TinyNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 2)

    def construct(self, x):
        return self.fc(x)
"""


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "net.py").write_text(TORCH)
    (tmp_path / "net_ms.py").write_text(MINDSPORE)
    (tmp_path / "net.pth").write_bytes(b"")  # never read: the mistakes are found before
    return tmp_path


def _one_line(capsys, argv: list[str]) -> str:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith("ms-migrate: error: "), err
    return err.strip()[len("ms-migrate: error: "):]


@pytest.mark.parametrize("argv, expected", [
    (["verify", "net.py", "net_ms.py", "--model", "TinyNet"],
     "net.py: no --input: give one SPEC per argument of TinyNet's forward"),
    (["verify", "nope.py", "net_ms.py", "--model", "TinyNet", "--input", "2,3"], "nope.py: no such file or directory"),
    (["verify", "net.py", "nope_ms.py", "--model", "TinyNet", "--input", "2,3"],
     "nope_ms.py: no such file or directory"),
    (["verify", "net.py", "net_ms.py", "--model", "TinyNt", "--input", "2,3"],
     "net.py: defines no model 'TinyNt'; did you mean 'TinyNet'?"),
    (["verify", "net.py", "net_ms.py", "--model", "Other", "--input", "2,3"],
     "net.py: defines no model 'Other' (its classes: TinyNet)"),
    (["weights", "nope.pth", "out.ckpt", "--model", "net_ms.py:TinyNet"], "nope.pth: no such file or directory"),
    (["weights", "net.pth", "out.ckpt", "--model", "nope_ms.py:TinyNet"], "nope_ms.py: no such file or directory"),
    (["weights", "net.pth", "out.ckpt", "--model", "net_ms.py:TinyNt"],
     "net_ms.py: defines no class 'TinyNt'; did you mean 'TinyNet'?"),
    (["weights", "net.pth", "out.ckpt", "--model", "net_ms:TinyNt"],
     "net_ms.py: defines no class 'TinyNt'; did you mean 'TinyNet'?"),
    (["weights", "net.pth", "missing/out.ckpt", "--model", "net_ms.py:TinyNet"],
     "missing/out.ckpt: the folder missing does not exist"),
], ids=["verify-no-input", "verify-no-original", "verify-no-converted", "verify-misspelled", "verify-unknown",
        "weights-no-source", "weights-no-model-file", "weights-misspelled", "weights-module-misspelled",
        "weights-no-target-folder"])
def test_a_mistake_is_one_line_naming_the_file(files, capsys, argv, expected):
    line = _one_line(capsys, argv)
    assert line.startswith(expected), line


def test_names_a_file_defines_in_other_ways_are_not_refused(files, capsys):
    """A factory function, an assignment, an imported class: all are names the file has."""
    (files / "more.py").write_text("from net import TinyNet as Imported\nmake = TinyNet2 = None\n"
                                   "def factory():\n    return None\n")
    from transpiler.commands._user_errors import defined_name

    for name in ("Imported", "make", "TinyNet2", "factory", "factory.attribute"):
        defined_name(str(files / "more.py"), name)
    (files / "star.py").write_text("from net import *\n")
    defined_name(str(files / "star.py"), "Anything")  # a star import: not knowable by reading
