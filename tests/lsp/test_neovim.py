"""`ms-migrate lsp` in a real editor: headless Neovim (Debian's package; its
0.7 has vim.lsp.start_client, later ones vim.lsp.start) opens a torch file,
receives the diagnostics, applies the "Convert this file to MindSpore" code
action and writes the buffer (tests/lsp/neovim_convert.lua). The written file
must be the converted text."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from transpiler.convert.pipeline import convert_source

SCRIPT = pathlib.Path(__file__).with_name("neovim_convert.lua")

SOURCE = '''\
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.sn = torch.nn.utils.spectral_norm(nn.Linear(2, 2))

    def forward(self, x):
        return torch.relu(self.fc(x))
'''


def _nvim() -> str:
    path = shutil.which("nvim")
    if path is None:
        pytest.fail("Neovim is needed for the editor test of `ms-migrate lsp`: apt-get install -y neovim "
                    "(tests/install_system_tools.sh installs it)")
    return path


def test_neovim_shows_the_diagnostics_and_applies_the_convert_action(tmp_path):
    nvim = _nvim()
    source = tmp_path / "block.py"
    source.write_text(SOURCE, encoding="utf-8")
    out = tmp_path / "seen.json"
    home = tmp_path / "home"
    env = {
        **os.environ,
        "MS_MIGRATE_LSP_FILE": str(source),
        "MS_MIGRATE_LSP_OUT": str(out),
        "MS_MIGRATE_LSP_CMD": json.dumps([sys.executable, "-m", "transpiler", "lsp"]),
        # no user configuration, state or log of the machine's Neovim
        "HOME": str(home), "XDG_CONFIG_HOME": str(home / "config"), "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"), "XDG_CACHE_HOME": str(home / "cache"),
    }
    run = subprocess.run([nvim, "--headless", "--clean", "-i", "NONE", "-n", "-c", f"luafile {SCRIPT}"],
                         env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    seen = json.loads(out.read_text()) if out.exists() else {}
    assert run.returncode == 0 and not seen.get("error"), (run.returncode, seen, run.stdout[-2000:], run.stderr[-2000:])

    marked = [d for d in seen["diagnostics"] if d["code"] == "torch.nn.utils.spectral_norm"]
    assert marked, seen["diagnostics"]
    line = SOURCE.splitlines()[8]
    assert (marked[0]["lnum"], marked[0]["col"]) == (8, line.index("torch.nn.utils.spectral_norm"))
    assert marked[0]["message"].startswith("will be marked: ")
    assert "Show the MindSpore diff" in seen["actions"]

    written = source.read_text(encoding="utf-8")
    assert written == convert_source(SOURCE, str(source)).output
    assert "class Block(nn.Cell):" in written
