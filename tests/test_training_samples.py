"""Converted training scripts train like the originals.

Each ``samples/train_*.py`` is converted; the torch original and the MindSpore
result then run from the same initial weights (converted with
transpiler.proof.weights) on the same synthetic batches for a few dozen steps
(shuffling and dropout off, so the batches and the forward pass are
deterministic). Checked: the first-step losses agree, the loss falls in both,
and the final losses agree within a stated ratio.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from tests.golden_files import ROOT, convert_sample

FIRST_STEP_RTOL = 1e-3  # same weights, same batch: only float rounding differs
FINAL_RATIO = 1.5  # mean of the last 5 losses, MindSpore / torch, within [1/1.5, 1.5]
FALL = 0.8  # mean of the last 5 losses < 0.8 x mean of the first 5

# sample -> (build_models kwargs, train kwargs); ~30 steps each
CASES = {
    "train_mnist_cnn": ({}, {"epochs": 3, "shuffle": False}),
    "train_lstm_lm": ({"dropout": 0.0}, {"epochs": 2}),
    "train_dcgan": ({}, {"epochs": 4, "shuffle": False}),
    "train_transformer": ({"dropout": 0.0}, {"epochs": 2, "shuffle": False}),
}


def _run(framework: str, script: pathlib.Path, weights: pathlib.Path, build, train) -> list:
    env = {**os.environ, "GLOG_v": "3", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "tests.training.runner", framework, str(script), str(weights),
               json.dumps(build), json.dumps(train)]
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f"{framework} run failed:\n{run.stderr[-4000:]}"
    line = next(l for l in run.stdout.splitlines() if l.startswith("LOSSES "))
    return json.loads(line[len("LOSSES "):])


def _series(losses: list) -> dict[str, list[float]]:
    if losses and isinstance(losses[0], list):  # GAN: (discriminator, generator) per step
        return {"D": [l[0] for l in losses], "G": [l[1] for l in losses]}
    return {"loss": losses}


def _mean(values):
    return sum(values) / len(values)


def test_every_training_sample_is_covered():
    samples = {p.stem for p in (ROOT / "samples").glob("train_*.py")}
    assert samples == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_converted_training_script_trains_like_torch(name, tmp_path):
    build, train = CASES[name]
    sample = ROOT / "samples" / f"{name}.py"
    converted = tmp_path / f"{name}.py"
    converted.write_text(convert_sample(sample), encoding="utf-8")
    assert "TODO(ms-migrate)" not in converted.read_text()
    torch_losses = _series(_run("torch", sample, tmp_path, build, train))
    ms_losses = _series(_run("mindspore", converted, tmp_path, build, train))
    for key, expected in torch_losses.items():
        actual = ms_losses[key]
        assert len(actual) == len(expected) >= 24
        assert actual[0] == pytest.approx(expected[0], rel=FIRST_STEP_RTOL), (key, actual[:3], expected[:3])
        ratio = _mean(actual[-5:]) / _mean(expected[-5:])
        assert 1 / FINAL_RATIO <= ratio <= FINAL_RATIO, (key, ratio, actual[-5:], expected[-5:])
    # the loss falls (for the GAN: the discriminator's)
    key = "D" if "D" in torch_losses else "loss"
    for losses in (torch_losses[key], ms_losses[key]):
        assert _mean(losses[-5:]) < FALL * _mean(losses[:5]), losses
