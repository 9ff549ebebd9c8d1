"""Ctrl-C stops a conversion cleanly with a summary; running the same
command again continues from the cache instead of starting over."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

LAYER = """
class Block{i}(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)  # block {i}
        self.norm = nn.BatchNorm2d(channels, momentum=0.1)
        self.drop = nn.Dropout(p=0.2)

    def forward(self, x):
        y = torch.relu(self.norm(self.conv(x)))
        return self.drop(torch.cat([x, y], dim=1).mean(dim=1, keepdim=True))
"""
FILES = 150


def _tree(root) -> None:
    root.mkdir()
    for n in range(FILES):
        body = "".join(LAYER.format(i=i) for i in range(n % 7 + 4))
        (root / f"model_{n:03d}.py").write_text("import torch\nimport torch.nn as nn\n" + body)


def _command(source, out, jobs: int) -> list[str]:
    return [sys.executable, "-m", "transpiler", "convert", str(source), "-o", str(out), "-j", str(jobs), "-q"]


def _env() -> dict:
    return {**os.environ, "GLOG_v": "3"}


def _outputs(out) -> dict[str, tuple[int, bytes]]:
    return {
        name: (os.stat(out / name).st_mtime_ns, (out / name).read_bytes())
        for name in os.listdir(out)
        if name.endswith(".py")
    }


@pytest.mark.parametrize("jobs", [1, 2])
def test_ctrl_c_then_rerun_continues_from_the_cache(tmp_path, jobs):
    source, out = tmp_path / "zoo", tmp_path / "zoo_ms"
    _tree(source)
    process = subprocess.Popen(_command(source, out, jobs), env=_env(), stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if out.is_dir() and len([n for n in os.listdir(out) if n.endswith(".py")]) >= 5:
            break
        time.sleep(0.02)
    assert process.poll() is None, "the conversion finished before it could be interrupted"
    os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
    _, err = process.communicate(timeout=120)

    assert process.returncode == 130, err
    assert "Traceback" not in err, err
    assert "interrupted after" in err and "files:" in err and "run the same command again" in err, err
    leftovers = [name for name in os.listdir(out) if name.startswith(".ms-migrate-") and name.endswith(".tmp")]
    assert leftovers == []
    done_before = _outputs(out)
    assert 0 < len(done_before) < FILES
    for name, (_, data) in done_before.items():
        compile(data, name, "exec")  # whatever was written is whole

    rerun = subprocess.run(_command(source, out, jobs), env=_env(), stderr=subprocess.PIPE, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert "from the cache" in rerun.stderr, rerun.stderr
    cached = int(re.search(r"(\d+) of \d+ files unchanged since the last run", rerun.stderr).group(1))
    assert cached >= len(done_before) - jobs * 2  # a file written just as Ctrl-C hit may lack its entry
    after = _outputs(out)
    assert len(after) == FILES
    unchanged = [name for name, state in done_before.items() if after[name] == state]
    assert len(unchanged) >= len(done_before) - jobs * 2  # not converted or written again
    for name, (_, data) in after.items():
        compile(data, name, "exec")
