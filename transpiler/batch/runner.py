"""Converting trees: discover files, fan them out over processes, write the
results atomically, aggregate per-file summaries.

Workers read, convert and write their own files and send back only a small
summary (status, diagnostics, timings), so the parent's memory does not grow
with the size of the tree.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import time
from contextlib import nullcontext
from dataclasses import dataclass, field, replace

from rewrite_rules.registry import load_rules
from transpiler.batch import collector
from transpiler.batch.cache import Cache, belongs_to
from transpiler.convert.pipeline import FileResult, convert_source
from transpiler.convert.diagnostics import Diagnostic, Severity
from transpiler.batch.notebooks import convert_notebook
from transpiler.convert.project import SiblingFacts
from transpiler.batch.source_io import DecodeError, decode_source, encode_source
from transpiler.batch.written import Bases, settle


class UsageError(Exception):
    """Bad command-line use: exit code 2."""


@dataclass(frozen=True)
class Job:
    source: str  # absolute input path
    target: str | None  # absolute output path (None: do not write)
    display: str  # path shown in diagnostics
    kind: str  # "python", "notebook" or "copy"
    want_text: bool = False  # send the converted text back (for --diff)
    cache: Cache | None = None  # where per-file results are remembered
    keep_outputs: bool = False  # notebooks: keep the cells' outputs
    siblings: SiblingFacts | None = None  # what the project index knows about the file's imports
    rules: tuple[str, ...] = ()  # the project's rule files, loaded by each worker
    bases: str | None = None  # where what was written last time is kept (None: overwrite; see batch.written)
    force: bool = False  # overwrite an output ms-migrate has no record of writing
    dry_run: bool = False  # decide what would be written, write nothing (convert --check -o)
    line_length: int | None = None  # black's for what the conversion writes (None: black's default)
    jit_steps: bool = False  # convert --jit
    runtime_settings: bool = False  # launch_blocking() where a training step is rewritten (runtime_settings.py)


@dataclass
class FileSummary:
    display: str
    status: str  # converted / unchanged / failed / copied
    diagnostics: list[Diagnostic] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    original: str | None = None
    output: str | None = None
    cached: bool = False  # taken from the cache: nothing was converted or written
    peak_kb: int = 0  # the worker's peak resident memory after this file
    changed: bool = False  # the conversion differs from the input
    written: str = ""  # what happened to the output file (batch.written: new, merged, conflicted, refused ...)
    target: str | None = None  # the output file as shown to the user
    note: str = ""  # why the output was not written as converted, or what was merged
    failed_uses: int = 0  # a failed file: the torch uses its text shows (they were not converted)


def display_path(path: str) -> str:
    """The path as the user would write it: relative to the working directory
    when below it, absolute otherwise."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def names_a_directory(target: str) -> bool:
    """``-o newdir/`` (a trailing separator) or an existing directory."""
    return target.endswith(("/", os.sep)) or os.path.isdir(target)


def single_target(source: str, target: str) -> str:
    """Where a single input file goes: ``target``, or into it when it names a directory."""
    out = os.path.abspath(target)
    if names_a_directory(target):
        out = os.path.join(out, os.path.basename(source))
    return out


def check_paths(source: str, target: str | None, force: bool, cache_root: str) -> None:
    """Refuse outputs that would overwrite the input or existing results
    (an output this conversion wrote before is continued, file by file
    without losing edits: see cache.record_run and batch.written)."""
    if not os.path.exists(source):
        raise UsageError(f"{source}: no such file or directory")
    if target is None:
        return
    src, out = os.path.realpath(source), os.path.realpath(target)
    if src == out:
        raise UsageError(f"{target}: refusing to overwrite the input; choose another output path")
    if os.path.isdir(src) and (out + os.sep).startswith(src + os.sep):
        raise UsageError(f"{target}: output is inside the input tree {source}; choose a path outside it")
    if names_a_directory(target) and os.path.exists(out) and not os.path.isdir(out):
        raise UsageError(f"{target}: not a directory")
    if os.path.isfile(src):
        out = os.path.realpath(single_target(source, target))
        if out == src:
            raise UsageError(f"{target}: refusing to overwrite the input; choose another output path")
        if os.path.isdir(out):
            raise UsageError(f"{target}: {display_path(out)} is a directory")
        return  # a file written before is settled as a tree's files are: never overwritten blindly
    if os.path.exists(out) and not force:
        if os.path.isdir(out) and (not os.listdir(out) or belongs_to(out, source, cache_root)):
            return  # empty, or an earlier run of this conversion: continue it
        raise UsageError(f"{target}: already exists; use --force to overwrite")


def process(job: Job) -> FileSummary:
    """Convert (or copy) one file. Never raises."""
    summary = _process(job)
    summary.peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return summary


def _process(job: Job) -> FileSummary:
    timings: dict[str, float] = {}
    start = time.perf_counter()
    try:
        with open(job.source, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        return _failed(job, 1, 1, f"cannot read: {exc.strerror or exc}")
    if job.dry_run and job.cache is not None:
        job = replace(job, cache=None)  # a hit may vouch for the output; nothing is put
    timings["read"] = time.perf_counter() - start
    key = None
    if job.cache is not None and not job.want_text:
        start = time.perf_counter()
        # the output depends on what the siblings define too
        siblings = job.siblings.digest().encode() if job.siblings is not None else b""
        key = job.cache.key(job.source, job.target, data + siblings)
        entry = job.cache.get(key, job.display)
        timings["cache"] = time.perf_counter() - start
        if entry is not None and entry.output_in_place(job.target):
            return FileSummary(job.display, entry.status, entry.diagnostics, timings, cached=True)
    if job.kind == "copy":
        summary, cacheable = _copy(job, data, timings)
    else:
        summary, cacheable = _convert(job, data, timings)
    if key is not None and cacheable:
        job.cache.put(key, summary.status, summary.diagnostics, job.target)
    return summary


def _convert(job: Job, data: bytes, timings) -> tuple[FileSummary, bool]:
    """The summary, and whether it depends on the file's content alone (cacheable)."""
    try:
        decoded = decode_source(data)
    except DecodeError as exc:
        return _failed(job, exc.line, exc.col, str(exc), data), True
    rules = load_rules(job.rules)
    if job.kind == "notebook":
        result: FileResult = convert_notebook(decoded.text, job.display, job.keep_outputs, rules, job.line_length,
                                              job.jit_steps, job.runtime_settings)
    else:
        result = convert_source(decoded.text, job.display, rules, siblings=job.siblings, line_length=job.line_length,
                                jit_steps=job.jit_steps, runtime_settings=job.runtime_settings)
    timings.update(result.timings)
    if result.status == "failed" or result.output is None:
        summary = FileSummary(job.display, "failed", result.diagnostics, timings)
        summary.failed_uses = uses_in_text(data)
        return summary, True
    summary = FileSummary(job.display, result.status, result.diagnostics, timings,
                          changed=result.output != decoded.text)
    start = time.perf_counter()
    cacheable = True
    if job.target is not None:
        try:
            cacheable = _settle(job, summary, encode_source(result.output, decoded), decoded.encoding)
        except (OSError, UnicodeEncodeError) as exc:
            return _failed(job, 1, 1, f"cannot write {display_path(job.target)}: {_reason(exc)}", data), False
    timings["write"] = time.perf_counter() - start
    if job.want_text:
        summary.original, summary.output = decoded.text, result.output
    return summary, cacheable


def _settle(job: Job, summary: FileSummary, data: bytes, encoding: str | None) -> bool:
    """Write the output without losing the user's edits; whether the cache may vouch for it."""
    settled = settle(job.target, data, bases=Bases(job.bases) if job.bases else None, kind=job.kind,
                     encoding=encoding, force=job.force, dry_run=job.dry_run, mode_from=job.source)
    summary.written, summary.note, summary.target = settled.action, settled.message, display_path(job.target)
    return settled.cacheable and not job.dry_run


def _reason(exc: Exception) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


def _copy(job: Job, data: bytes, timings) -> tuple[FileSummary, bool]:
    summary = FileSummary(job.display, "copied", [], timings)
    cacheable = True
    if job.target is not None:
        start = time.perf_counter()
        try:
            cacheable = _settle(job, summary, data, None)
        except OSError as exc:
            return _failed(job, 1, 1, f"cannot copy to {display_path(job.target)}: {_reason(exc)}"), False
        timings["write"] = time.perf_counter() - start
    return summary, cacheable


def _failed(job: Job, line: int, col: int, message: str, data: bytes | None = None) -> FileSummary:
    diagnostic = Diagnostic(job.display, line, col, "input", Severity.ERROR, message)
    summary = FileSummary(job.display, "failed", [diagnostic])
    if data is not None and job.kind != "copy":
        summary.failed_uses = uses_in_text(data)
    return summary


_USE = re.compile(rb"\b(?:torch|nn|F)\.[A-Za-z_]")
_IMPORT = re.compile(rb"^\s*(?:import|from)\s")


def uses_in_text(data: bytes) -> int:
    """The torch uses a file that failed to convert shows, counted from its
    text (no parse): at least one, so that a failed file always counts
    against the conversion rate."""
    count = sum(len(_USE.findall(line)) for line in data.splitlines() if not _IMPORT.match(line))
    return max(1, count)


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity, as ruff counts
    them), the default number of workers."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def run(jobs: list[Job], workers: int = 1, on_result=None) -> list[FileSummary]:
    """Process jobs, in parallel when workers > 1, in input order.

    Ctrl-C (KeyboardInterrupt) propagates after a clean stop: files being
    written finish or leave nothing (writes are atomic), queued files are
    dropped. ``on_result`` has seen every file that was done."""
    summaries: list[FileSummary] = []
    workers = min(workers, len(jobs))
    if workers <= 1:
        with collector.tuned() if len(jobs) > 1 else nullcontext():  # one file: a collection or two at most
            for job in jobs:
                summary = process(job)
                summaries.append(summary)
                if on_result:
                    on_result(summary)
        return summaries
    from concurrent.futures import ProcessPoolExecutor  # here: a run with one worker (one file) never needs it

    chunk = max(1, min(16, len(jobs) // (workers * 8)))
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_warm_up)
    try:
        for summary in pool.map(process, jobs, chunksize=chunk):
            summaries.append(summary)
            if on_result:
                on_result(summary)
    except BaseException:
        # Let the running files finish (each is short), cancel the rest.
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return summaries


def _warm_up() -> None:
    # Ctrl-C reaches the whole process group; the parent alone decides how to stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from rewrite_rules.registry import load_rules

    load_rules()
    collector.tune()  # a worker converts until the batch ends
