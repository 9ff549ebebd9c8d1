"""The measurements: the libcst floor, a batch conversion of the corpus the
way ``ms-migrate convert`` does it, and one ``ms-migrate convert FILE --diff``
run as a user runs it (a fresh process)."""

from __future__ import annotations

import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
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


@dataclass
class Floor:
    seconds: float
    cpu_seconds: float


def floor_seconds(corpus: Corpus) -> Floor:
    """Bare libcst parse + codegen of the same texts, one process."""
    return _floor_of(corpus.texts)


def _floor_of(texts) -> Floor:
    start, cpu_start = time.perf_counter(), _cpu()
    for text in texts:
        try:
            cst.parse_module(text).code
        except Exception:  # the converter reports these files; the floor just skips them
            pass
    return Floor(time.perf_counter() - start, _cpu() - cpu_start)


@dataclass
class SingleFile:
    path: str
    lines: int
    wall: list[float]  # seconds per run
    cpu: list[float]
    python_wall: float  # median wall time of a bare ``python -c pass``: the machine's start-up floor
    server_cpu: float | None = None  # through a warm server: its CPU seconds per run (``cpu``: the client's)

    @property
    def median_wall(self) -> float:
        return statistics.median(self.wall)

    @property
    def median_cpu(self) -> float:
        return statistics.median(self.cpu)


def single_file(path: str, runs: int = 7, server: bool = False) -> SingleFile:
    """``ms-migrate convert PATH --diff`` in a fresh process, as an editor or a
    pre-commit hook runs it; one unmeasured run first (a warm machine).
    ``server``: through a warm server (``--server``; one started for this
    measurement in a cache directory of its own, and stopped after); every
    run is checked to have been served."""
    command = [sys.executable, "-m", "transpiler", "convert", path, "--diff", "--color", "never"]
    with _warm_server() if server else contextlib.nullcontext() as root:
        env = {**os.environ, "MS_MIGRATE_CACHE_DIR": root} if server else None
        walls, cpus = [], []
        for index in range(runs + 1):
            if index == 1 and server:
                before = _server_status(root)["cpu_seconds"]
            wall, cpu = _timed(command + ["--server"] if server else command, env)
            if index:
                walls.append(wall)
                cpus.append(cpu)
        server_cpu = None
        if server:
            after = _server_status(root)
            if after["served"] != runs + 1:
                raise RuntimeError("the server did not convert every run: the figures would be of in-process runs")
            server_cpu = (after["cpu_seconds"] - before) / runs
    bare = statistics.median(_timed([sys.executable, "-c", "pass"])[0] for _ in range(3))
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().count("\n")
    return SingleFile(path, lines, walls, cpus, bare, server_cpu)


@contextlib.contextmanager
def _warm_server():
    """A server in a cache directory of its own, started and warm: yields the directory."""
    root = tempfile.mkdtemp(prefix="msm-bench-")  # short: the socket's path must fit a Unix socket address
    env = {**os.environ, "MS_MIGRATE_CACHE_DIR": root}
    try:
        subprocess.run([sys.executable, "-m", "transpiler", "server", "start"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        yield root
    finally:
        subprocess.run([sys.executable, "-m", "transpiler", "server", "stop"], env=env, stdout=subprocess.DEVNULL)
        shutil.rmtree(root, ignore_errors=True)


def _server_status(root: str) -> dict:
    from transpiler.server.client import code_identity, request, server_directory

    reply = request({"op": "status", **code_identity()}, server_directory(root), timeout=60)
    if not reply or not reply.get("fresh"):
        raise RuntimeError(f"the benchmark's server does not answer: {reply}")
    return reply


def _timed(command: list[str], env: dict | None = None) -> tuple[float, float]:
    # bytecode is written (the warm-up run compiles it), as an installed package has it
    env = {k: v for k, v in (env or os.environ).items() if k not in ("PYTHONDONTWRITEBYTECODE", "MS_MIGRATE_SERVER")}
    before = os.times()
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    wall = time.perf_counter() - start
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


@dataclass
class Run:
    seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process and its workers
    stages: dict[str, float] = field(default_factory=dict)
    statuses: Counter = field(default_factory=Counter)
    cached: int = 0
    failures: list[str] = field(default_factory=list)
    peak_by_progress: list[int] = field(default_factory=list)  # KB after 25/50/75/100% of files
    paired_floor: Floor | None = None  # the floor taken file by file between the conversions (see convert_tree)


def convert_tree(corpus: Corpus, out: str, workers: int, paired_floor: bool = False) -> Run:
    """``paired_floor`` (one worker only): after each file is converted, the
    floor of that file is taken in the same process, so a machine that speeds
    up or slows down during the run moves both figures alike; the floor's
    own time is kept out of the conversion's. Both run with the garbage
    collector as the batch sets it (``transpiler.batch.collector``)."""
    from transpiler.batch.runner import Job, run
    from transpiler.batch.cache import open_cache
    from transpiler.batch.report import RunReport

    start, cpu_start = time.perf_counter(), _cpu()
    cache = open_cache(out + ".cache")  # next to the output, removed with it
    jobs = [Job(path, _target(corpus, out, path), path, "python", cache=cache) for path in corpus.paths]
    result = Run()
    report = RunReport()
    sums: Counter = Counter()
    peaks: list[int] = []
    if paired_floor and workers != 1:
        raise ValueError("a paired floor needs the files converted in this process (one worker)")
    texts = dict(zip(corpus.paths, corpus.texts)) if paired_floor else None
    floor = Floor(0.0, 0.0)

    def on_result(summary) -> None:
        report.add(summary)
        result.statuses[summary.status] += 1
        result.cached += summary.cached
        sums.update(summary.timings)
        peaks.append(max(summary.peak_kb, peaks[-1] if peaks else 0))
        result.failures += [d.one_line() for d in summary.diagnostics if d.severity.value == "error"]
        if texts is not None:
            piece = _floor_of([texts[summary.display]])
            floor.seconds += piece.seconds
            floor.cpu_seconds += piece.cpu_seconds

    run(jobs, workers, on_result)
    started = time.perf_counter()
    report.to_json()
    report.to_markdown()
    sums["run_report"] = time.perf_counter() - started
    result.seconds = time.perf_counter() - start - floor.seconds
    result.cpu_seconds = _cpu() - cpu_start - floor.cpu_seconds
    result.paired_floor = floor if paired_floor else None
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
