"""Converted training samples train like the originals, step by step.

Each ``samples/train_*.py`` with the ``build_models``/``train`` interface is
converted; the torch original and the MindSpore result then run from the same
initial weights (converted with transpiler.proof.weights) on the same
synthetic batches for a few dozen steps (shuffling and dropout off, so the
batches and the forward pass are deterministic). The loss of every step is
compared, at a tolerance set from what was measured (see ``CASES``); the loss
must also fall. Sabotage tests change one training hyperparameter in the
converted code and show that the comparison then fails.

The realistic scripts (``main(argv)``: argparse, a device line, checkpoints)
are compared in tests/training/test_training_scripts.py.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from dataclasses import dataclass, field

import pytest

from tests.golden_files import ROOT, convert_sample
from tests.training.compare import as_series, mismatches

FALL = 0.8  # mean of the last 5 losses < 0.8 x mean of the first 5


@dataclass(frozen=True)
class Case:
    build: dict
    train: dict
    # max relative difference over every step, measured (torch 2.13 / MindSpore 2.10, CPU) -> tolerance
    rtol: float | dict
    measured: dict = field(default_factory=dict)


CASES = {
    "train_mnist_cnn": Case({}, {"epochs": 3, "shuffle": False}, rtol=3e-4, measured={"loss": 3.4e-5}),
    "train_lstm_lm": Case({"dropout": 0.0}, {"epochs": 2}, rtol=1e-5, measured={"loss": 5.0e-7}),
    # GAN losses feed on each other: the discriminator's drift grows to 2.6e-3 over 32 steps
    "train_dcgan": Case({}, {"epochs": 4, "shuffle": False}, rtol=1e-2, measured={"loss0": 2.6e-3, "loss1": 8.0e-4}),
    "train_transformer": Case({"dropout": 0.0}, {"epochs": 2, "shuffle": False}, rtol=2e-5, measured={"loss": 1.0e-6}),
}

# one training mistake per sample, in the converted code: the per-step comparison must catch it
SABOTAGE = {
    "train_dcgan": ("betas=(0.5, 0.999)", "betas=(0.9, 0.999)"),  # Adam's first moment decays slower
    "train_lstm_lm": ("ops.clip_by_global_norm(grads, clip)", "ops.clip_by_global_norm(grads, 2 * clip)"),
}


def _run(framework: str, script: pathlib.Path, weights: pathlib.Path, build, train) -> list:
    env = {**os.environ, "GLOG_v": "3", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "tests.training.runner", framework, str(script), str(weights),
               json.dumps(build), json.dumps(train)]
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"{framework} run failed:\n{run.stderr[-4000:]}"
    line = next(l for l in run.stdout.splitlines() if l.startswith("LOSSES "))
    return json.loads(line[len("LOSSES "):])


def _both(name: str, tmp_path: pathlib.Path, edit=None):
    case = CASES[name]
    sample = ROOT / "samples" / f"{name}.py"
    text = convert_sample(sample)
    assert "TODO(ms-migrate)" not in text
    if edit is not None:
        old, new = edit
        assert old in text, f"the sabotage target {old!r} is not in the converted sample"
        text = text.replace(old, new)
    converted = tmp_path / f"{name}.py"
    converted.write_text(text, encoding="utf-8")
    torch_losses = _run("torch", sample, tmp_path, case.build, case.train)
    ms_losses = _run("mindspore", converted, tmp_path, case.build, case.train)
    return torch_losses, ms_losses


def _mean(values):
    return sum(values) / len(values)


def test_every_training_sample_is_covered():
    samples = {p.stem for p in (ROOT / "samples").glob("train_*.py") if "def build_models" in p.read_text()}
    assert samples == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_converted_training_script_trains_like_torch(name, tmp_path):
    torch_losses, ms_losses = _both(name, tmp_path)
    torch_series, ms_series = as_series(torch_losses), as_series(ms_losses)
    assert all(len(series) >= 24 for series in torch_series.values())
    problems = mismatches(torch_series, ms_series, CASES[name].rtol)
    assert not problems, "\n".join(problems)
    # the loss falls (for the GAN: the discriminator's)
    key = "loss0" if "loss0" in torch_series else "loss"
    for series in (torch_series[key], ms_series[key]):
        losses = [value for _, value in series]
        assert _mean(losses[-5:]) < FALL * _mean(losses[:5]), losses


@pytest.mark.parametrize("name", sorted(SABOTAGE))
def test_a_wrong_hyperparameter_fails_the_comparison(name, tmp_path):
    torch_losses, ms_losses = _both(name, tmp_path, edit=SABOTAGE[name])
    assert mismatches(torch_losses, ms_losses, CASES[name].rtol), "the sabotaged conversion passed"
