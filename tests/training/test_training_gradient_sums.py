"""Where torch's gradients are cleared decides what each step sums: the
converted loop clears its summed gradients at the same places (and, with AMP
loss scaling, unscales them exactly once, as scaler.step() does).

torch adds every ``backward()`` into the parameters' ``.grad`` until a
``zero_grad()`` (of the optimizer, or of a model it trains) clears them. Each
loop below converts with no marker, then trains under both frameworks from
the same initial weights on the same batches; the loss of every step is
compared. Sabotage: the converted sum is cleared where torch's is not (or the
other way round), and the comparison fails.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.golden_files import ROOT
from tests.snippets import convert_full
from tests.training.compare import mismatches

HEADER = '''
import numpy as np
import torch
import torch.nn as nn


def build_models():
    return (nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1)),)


def batches():
    rng = np.random.default_rng(0)
    for _ in range(12):
        x = rng.standard_normal((6, 4)).astype(np.float32)
        yield torch.tensor(x), torch.tensor(x.sum(axis=1, keepdims=True) * 0.5)


def train(model, log=print, k=3):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
    criterion = nn.MSELoss()
    scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)
    losses = []
    for i, (x, y) in enumerate(batches()):
'''

LOOPS = {
    # the classic step, clearing through the model (the DCGAN example: netD.zero_grad())
    "model_zero_grad": """
        model.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
""",
    # a step every k batches, cleared after it
    "every_k_cleared_after": """
        loss = criterion(model(x), y) / k
        loss.backward()
        if (i + 1) % k == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
    # the same through the model
    "every_k_model_cleared_after": """
        loss = criterion(model(x), y) / k
        loss.backward()
        if (i + 1) % k == 0:
            optimizer.step()
            model.zero_grad()
""",
    # cleared at every batch: a step every k batches uses the last batch only
    "every_k_cleared_each_batch": """
        model.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        if (i + 1) % k == 0:
            optimizer.step()
""",
    # never cleared: torch sums the gradients of every batch so far into each step
    "never_cleared": """
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
""",
    # AMP loss scaling, unscaled before clipping on some steps only: scaler.step() unscales the others
    "scaler_unscales_on_some_paths": """
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        if i % 2 == 0:
            scaler.unscale_(optimizer)
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        scaler.step(optimizer)
        scaler.update()
""",
}
TAIL = """        losses.append(loss.item())
    return losses
"""

# max relative difference over the 12 steps, measured (torch 2.13 / MindSpore 2.10, CPU) -> tolerance:
# 1.4e-7 (every k), 4.5e-7 (scaler), 5.8e-7 (model.zero_grad) -> 1e-5; never cleared, the sums grow and
# so does the rounding: 6.8e-5 -> 5e-4. The sabotaged conversions differ by 0.34 to 1.14 (1e27: scaled
# gradients applied).
RTOL = {"never_cleared": 5e-4}
DEFAULT_RTOL = 1e-5

# (loop, converted text, sabotaged text): clearing the sum where torch does not, or not where it does
SABOTAGE = {
    "never_cleared": ("        optimizer(grads)\n", "        optimizer(grads)\n        grads = None\n"),
    "every_k_cleared_after": ("            grads = None\n", "            pass\n"),
    "every_k_cleared_each_batch": ("        grads = None\n        loss, micro_grads", "        loss, micro_grads"),
    # the step forgets to unscale what was not unscaled: gradients 1024 times too large
    "scaler_unscales_on_some_paths": ("        if not grads_unscaled:\n", "        if False:\n"),
}

_DRIVER = r'''
import json, pathlib, sys
from tests.training import runner
framework, files = sys.argv[1], json.loads(sys.stdin.read())
run = runner.run_torch if framework == "torch" else runner.run_mindspore
out = {}
for name, (path, work) in files.items():
    out[name] = [float(l) for l in run(runner._load(pathlib.Path(path)), pathlib.Path(work), {}, {})]
print("LOSSES " + json.dumps(out))
'''


def _losses(framework: str, files: dict) -> dict:
    """Losses per step of each {name: (script, work directory)}, all in one process."""
    env = {**os.environ, "GLOG_v": "3", "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", _DRIVER, framework], input=json.dumps(files), cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    line = next(l for l in run.stdout.splitlines() if l.startswith("LOSSES "))
    return json.loads(line[len("LOSSES "):])


def _source(name: str) -> str:
    return HEADER + LOOPS[name] + TAIL


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Converted text, torch and MindSpore losses of every loop and of every sabotaged conversion.
    The torch run of a loop saves the initial weights its MindSpore runs load (runner.py)."""
    converted = {name: convert_full(_source(name)) for name in LOOPS}
    root = tmp_path_factory.mktemp("gradient_sums")
    torch_files, ms_files = {}, {}
    for name in LOOPS:
        work = root / name
        work.mkdir()
        (work / "torch_loop.py").write_text(_source(name), encoding="utf-8")
        torch_files[name] = (str(work / "torch_loop.py"), str(work))
        variants = {name: converted[name]}
        if name in SABOTAGE:
            old, new = SABOTAGE[name]
            assert converted[name].count(old) == 1, f"{name}: the sabotage target is not in the conversion"
            variants[f"{name}_sabotaged"] = converted[name].replace(old, new)
        for key, text in variants.items():
            (work / f"{key}_ms.py").write_text(text, encoding="utf-8")
            ms_files[key] = (str(work / f"{key}_ms.py"), str(work))
    return converted, _losses("torch", torch_files), _losses("mindspore", ms_files)


@pytest.mark.parametrize("name", sorted(LOOPS))
def test_the_converted_loop_sums_and_clears_gradients_like_torch(name, runs):
    converted, torch_losses, ms_losses = runs
    assert "TODO(ms-migrate)" not in converted[name] and "zero_grad" not in converted[name], converted[name]
    assert len(torch_losses[name]) == 12
    problems = mismatches(torch_losses[name], ms_losses[name], RTOL.get(name, DEFAULT_RTOL))
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", sorted(SABOTAGE))
def test_gradients_cleared_at_the_wrong_place_fail_the_comparison(name, runs):
    _, torch_losses, ms_losses = runs
    sabotaged = ms_losses[f"{name}_sabotaged"]
    assert mismatches(torch_losses[name], sabotaged, RTOL.get(name, DEFAULT_RTOL)), "the sabotaged conversion passed"
