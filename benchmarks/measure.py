"""The two measurements: the libcst floor, and a batch conversion of the
corpus the way ``ms-migrate convert`` does it."""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field

import libcst as cst

from benchmarks.corpus import Corpus

STAGE_LABELS = {
    "read": "read",
    "cache": "cache lookup",
    "parse": "parse",
    "analyse": "analyse (names)",
    "rewrite": "rewrite (+ imports)",
    "format": "format (black, changed stmts)",
    "render": "render (codegen)",
    "write": "write (atomic)",
    "report": "report: diagnostic positions",
    "run_report": "report: summary, JSON, Markdown",
}


def floor_seconds(corpus: Corpus) -> float:
    """Bare libcst parse + codegen of the same texts, one process."""
    start = time.perf_counter()
    for text in corpus.texts:
        try:
            cst.parse_module(text).code
        except Exception:  # the converter reports these files; the floor just skips them
            pass
    return time.perf_counter() - start


@dataclass
class Run:
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process and its workers
    stages: dict[str, float] = field(default_factory=dict)
    statuses: Counter = field(default_factory=Counter)
    cached: int = 0
    failures: list[str] = field(default_factory=list)
    peak_by_progress: list[int] = field(default_factory=list)  # KB after 25/50/75/100% of files


def convert_tree(corpus: Corpus, out: str, workers: int) -> Run:
    from transpiler.batch import Job, run
    from transpiler.cache import open_cache
    from transpiler.report import RunReport

    start, cpu_start = time.perf_counter(), _cpu()
    cache = open_cache(out + ".cache")  # next to the output, removed with it
    jobs = [Job(path, _target(corpus, out, path), path, "python", cache=cache) for path in corpus.paths]
    result = Run()
    report = RunReport()
    sums: Counter = Counter()
    peaks: list[int] = []

    def on_result(summary) -> None:
        report.add(summary)
        result.statuses[summary.status] += 1
        result.cached += summary.cached
        sums.update(summary.timings)
        peaks.append(max(summary.peak_kb, peaks[-1] if peaks else 0))
        result.failures += [d.one_line() for d in summary.diagnostics if d.severity.value == "error"]

    run(jobs, workers, on_result)
    started = time.perf_counter()
    report.to_json()
    report.to_markdown()
    sums["run_report"] = time.perf_counter() - started
    result.seconds = time.perf_counter() - start
    result.cpu_seconds = _cpu() - cpu_start
    ordered = {STAGE_LABELS[k]: sums[k] for k in STAGE_LABELS if sums.get(k)}
    ordered["other (traversal glue, process, pickling)"] = max(0.0, result.seconds - sum(sums.values()))
    result.stages = ordered
    result.peak_by_progress = [peaks[max(0, len(peaks) * q // 4 - 1)] for q in (1, 2, 3, 4)] if peaks else [0] * 4
    return result


def _cpu() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _target(corpus: Corpus, out: str, path: str) -> str:
    for index, root in enumerate(corpus.roots):
        if path.startswith(root + os.sep):
            return os.path.join(out, str(index), os.path.relpath(path, root))
    raise ValueError(path)
