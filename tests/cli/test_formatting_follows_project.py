"""The statements a conversion writes are black's at the project's line length, and every
one of them is formatted (none left as one long generated line)."""

import pathlib
import subprocess
import sys

import pytest

SAMPLES = pathlib.Path(__file__).resolve().parents[2] / "samples"

SOURCE = '''import torch.nn as nn


class Net(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.conv = nn.Conv2d(width, width * 2, kernel_size=3, stride=2, padding=1, bias=False)
'''


def _convert(source: pathlib.Path, out: pathlib.Path) -> None:
    done = subprocess.run([sys.executable, "-m", "transpiler", "convert", str(source), "-o", str(out), "--no-cache"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("setting, longest", [("", 88), ("[tool.black]\nline-length = 120\n", 120)])
def test_black_line_length_comes_from_the_projects_pyproject(tmp_path, setting, longest):
    project = tmp_path / "project"
    project.mkdir()
    (project / "net.py").write_text(SOURCE)
    if setting:
        (project / "pyproject.toml").write_text(setting)
    _convert(project, tmp_path / "out")
    lines = (tmp_path / "out" / "net.py").read_text().splitlines()
    conv = next(n for n, line in enumerate(lines) if "nn.Conv2d(" in line)
    one_line = "has_bias=False)" in lines[conv]
    assert one_line == (longest == 120)  # 94 characters: split at 88, one line at 120
    assert max(len(line) for line in lines) <= longest


def test_the_rebuilt_checkpoint_dict_is_formatted(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    (source / "train_classifier.py").write_text((SAMPLES / "train_classifier.py").read_text())
    _convert(source, tmp_path / "out")
    converted = (tmp_path / "out" / "train_classifier.py").read_text()
    rebuilt = [line for line in converted.splitlines() if "removeprefix(" in line]
    assert rebuilt and all(len(line) <= 88 for line in rebuilt)
    assert "removeprefix('state_dict.')" not in converted  # black's quotes: the statement went through black
