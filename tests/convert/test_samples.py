"""The samples: golden text, and the converted models construct and run
forward under MindSpore on CPU."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tests.golden_files import convert_sample, golden_path, sample_paths

SAMPLES = sample_paths()
MODEL_SAMPLES = [s for s in SAMPLES if "def make_model" in s.read_text()]


def test_there_are_at_least_five_samples():
    assert len(MODEL_SAMPLES) >= 5


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_golden_text(sample):
    expected = golden_path(sample).read_text(encoding="utf-8")
    assert convert_sample(sample) == expected, "refresh with: .venv/bin/python -m tests.golden_files"


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_comments_survive(sample):
    source_comments = [line.strip() for line in sample.read_text().splitlines() if line.strip().startswith("#")]
    converted = convert_sample(sample)
    for comment in source_comments:
        assert comment in converted


@pytest.mark.parametrize("sample", MODEL_SAMPLES, ids=lambda p: p.name)
def test_converted_model_runs_forward(sample, tmp_path):
    (tmp_path / sample.name).write_text(convert_sample(sample), encoding="utf-8")
    script = textwrap.dedent(
        f"""
        import mindspore
        import {sample.stem} as sample
        model = sample.make_model()
        outputs = model(*sample.make_inputs())
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        for out in outputs:
            assert isinstance(out, mindspore.Tensor), type(out)
            out.asnumpy()
        print("OK", [tuple(o.shape) for o in outputs])
        """
    )
    env = {**os.environ, "GLOG_v": "3", "PYTHONPATH": str(tmp_path)}
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "OK" in run.stdout, run.stderr[-3000:]
