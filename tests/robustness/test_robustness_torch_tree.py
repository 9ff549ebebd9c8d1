"""The installed torch package's own source (about 2,300 files, 1.2 million
lines) as a robustness corpus: no crash, every written file compiles, and
converting the output again changes nothing (checked on every AGAIN_EVERY-th
file, a fixed sample, so the run stays within CI's time).

Slow (minutes): deselected by default, run once per CI run by .ci/run with
``pytest -m slow``.
"""

from __future__ import annotations

import importlib.util
import os
import warnings

import pytest

from transpiler.batch.runner import run
from transpiler.batch.discovery import discover

WORKERS = 2
AGAIN_EVERY = 8


def _torch_source_dir() -> str:
    spec = importlib.util.find_spec("torch")  # located, not imported
    return os.path.dirname(spec.origin)


def _compiles(data: bytes, path: str) -> str | None:
    """None if the source compiles under this Python, else the error."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(data, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


def _convert_python_files(source: str, target: str, every: int = 1):
    jobs = [job for job in discover(source, target) if job.kind == "python"][::every]
    errors: list[str] = []
    statuses: dict[str, int] = {}

    def collect(summary) -> None:
        statuses[summary.status] = statuses.get(summary.status, 0) + 1
        errors.extend(d.one_line() for d in summary.diagnostics if d.severity.value == "error")

    run(jobs, WORKERS, collect)
    return jobs, errors, statuses


@pytest.fixture(scope="module")
def converted_twice(tmp_path_factory):
    """The torch source converted, and a fixed sample of that output converted again."""
    root = tmp_path_factory.mktemp("torch_tree")
    once, twice = str(root / "once"), str(root / "twice")
    first = _convert_python_files(_torch_source_dir(), once)
    second = _convert_python_files(once, twice, AGAIN_EVERY)
    return first, second


@pytest.mark.slow
def test_whole_torch_source_converts_without_a_crash_and_compiles(converted_twice):
    (jobs, errors, statuses), _ = converted_twice
    assert len(jobs) > 2000
    assert errors == [], "\n".join(errors[:50])  # no crash, and no file left unconverted
    assert statuses.get("converted", 0) > 1000, statuses
    broken = []
    for job in jobs:
        with open(job.source, "rb") as handle:
            if _compiles(handle.read(), job.source) is not None:
                continue  # not valid for this Python to begin with (e.g. 3.12 syntax)
        with open(job.target, "rb") as handle:
            problem = _compiles(handle.read(), job.target)
        if problem is not None:
            broken.append(f"{job.target}: {problem}")
    assert broken == [], "\n".join(broken[:50])


@pytest.mark.slow
@pytest.mark.xfail(strict=False, reason=(
    "open (issue 10): measured 2026-11-23, 33 of 2,280 torch files still changed when converted again (645 the "
    "day before); 3 of the causes were fixed after that run. Left: a second pass converts torch names the first "
    "left in marked statements (x.select(...), torch.contiguous_format as a lambda default, .to() on torch "
    "internals), and a few statements black formats differently the second time. The fixed causes are tested in "
    "tests/robustness/test_robustness_torch_idioms.py"))
def test_converting_the_converted_torch_source_again_changes_nothing(converted_twice):
    _, (again, errors, _) = converted_twice
    assert errors == [], "\n".join(errors[:50])
    changed = []
    for job in again:
        with open(job.source, "rb") as first, open(job.target, "rb") as second:
            if first.read() != second.read():
                changed.append(os.path.relpath(job.source, os.path.dirname(os.path.dirname(job.source))))
    assert changed == [], f"{len(changed)} files changed when converted again:\n" + "\n".join(changed[:50])
