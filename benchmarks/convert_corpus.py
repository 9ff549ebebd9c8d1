"""Converts two corpora of real torch code and prints, for each, the figures
of issues 7 and 13: throughput, the libcst floor and the ratio to it, the time
split across pipeline stages, peak memory per worker, the -j 2 speedup and the
speedup of a second run over an unchanged tree (the cache); then the time of
a single-file ``ms-migrate convert FILE --diff`` in a fresh process, in-process
and through a warm server (``--server``).

The corpora: timm's source (dense model code from the package registry, the
wheel the model-zoo benchmark uses, unpacked into ~/.cache/ms-migrate-zoo),
and the Python source of the installed torch package plus ``samples/``
(mostly statements with nothing to convert). Run from the repository root:

    .venv/bin/python benchmarks/convert_corpus.py                  # both corpora, whole (many minutes)
    .venv/bin/python benchmarks/convert_corpus.py --step 10        # every 10th file: a quick look
    .venv/bin/python benchmarks/convert_corpus.py --corpus timm    # one corpus
    .venv/bin/python benchmarks/convert_corpus.py --corpus none    # the single-file figures only

All runs convert the same files through ``transpiler.batch.runner`` (read, convert,
write atomically, cache) into fresh temporary output directories; nothing is
timed in a test, this only prints. The ratio to the floor is taken in CPU
seconds, so a neighbour's load on a shared machine moves it less than wall
time, and with the floor taken file by file between the conversions of the
-j 1 run (in this process), so a machine whose speed drifts during the run
moves both sides alike. The floor of the whole corpus, taken before and after
that run, is printed next to it: the difference is the drift.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.corpus import CORPORA, Corpus, load_corpus  # noqa: E402
from benchmarks.measure import Floor, Run, SingleFile, convert_tree, floor_seconds, single_file  # noqa: E402

FLOOR_TARGET = 2.5  # -j 1 CPU seconds over the floor's (issue 13)
SINGLE_FILE_TARGET = 0.3  # seconds of wall time for one --diff of a 100-line model


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default=",".join(CORPORA),
                        help=f"comma-separated corpora to convert, or 'none' (default: {','.join(CORPORA)})")
    parser.add_argument("--step", type=int, default=1, help="take every STEP-th file of each corpus (default: all)")
    parser.add_argument("--jobs", type=int, default=2, help="workers for the parallel run (default 2)")
    parser.add_argument("--single", default=os.path.join(ROOT, "samples", "gpt_block.py"), metavar="FILE",
                        help="the model timed as a single-file convert --diff (default: samples/gpt_block.py)")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    names = [n for n in args.corpus.split(",") if n and n != "none"]

    import black  # noqa: F401 - a conversion imports it at its first changed statement
    from rewrite_rules.registry import load_rules

    load_rules().api_names()  # warm (every rule module imported): not part of any timing
    print(f"machine: {os.cpu_count()} cores, load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print()
    all_figures: dict = {}
    for name in names:
        corpus = load_corpus(ROOT, args.step, name)
        print(f"corpus {corpus.describe()}")
        figures, serial = _measure(corpus, args.jobs)
        _print(figures, serial, args.jobs)
        all_figures[name] = figures
        print()
    all_figures["single_file"] = _print_single(single_file(args.single))
    all_figures["single_file_server"] = _print_single(single_file(args.single, server=True))
    if len(names) > 1:
        print()
        print("ratio to the floor, -j 1 (CPU seconds): "
              + "; ".join(f"{n} {all_figures[n]['ratio_to_floor']}x" for n in names))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(all_figures, handle, indent=2)
    return 0


def _measure(corpus: Corpus, jobs: int) -> tuple[dict, Run]:
    before = floor_seconds(corpus)
    work = tempfile.mkdtemp(prefix="ms-migrate-bench-")
    try:
        serial = convert_tree(corpus, os.path.join(work, "j1"), workers=1, paired_floor=True)
        after = floor_seconds(corpus)
        rerun = convert_tree(corpus, os.path.join(work, "j1"), workers=1)
        parallel = convert_tree(corpus, os.path.join(work, f"j{jobs}"), workers=jobs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return _figures(corpus, (before, after), serial, rerun, parallel, jobs), serial


def _figures(corpus: Corpus, whole: tuple[Floor, Floor], serial: Run, rerun: Run, parallel: Run, jobs: int) -> dict:
    floor = serial.paired_floor
    return {
        "files": corpus.files,
        "lines": corpus.lines,
        "floor_seconds": round(floor.seconds, 2),
        "floor_cpu_seconds": round(floor.cpu_seconds, 2),
        "floor_lines_per_second": round(corpus.lines / floor.seconds),
        "floor_whole_corpus_cpu_seconds_before_after": [round(f.cpu_seconds, 2) for f in whole],
        "j1_seconds": round(serial.seconds, 2),
        "j1_cpu_seconds": round(serial.cpu_seconds, 2),
        "j1_lines_per_second": round(corpus.lines / serial.seconds),
        "j1_files_per_second": round(corpus.files / serial.seconds, 1),
        "ratio_to_floor": round(serial.cpu_seconds / floor.cpu_seconds, 2),
        "ratio_to_floor_wall": round(serial.seconds / floor.seconds, 2),
        f"j{jobs}_seconds": round(parallel.seconds, 2),
        f"j{jobs}_lines_per_second": round(corpus.lines / parallel.seconds),
        f"j{jobs}_speedup": round(serial.seconds / parallel.seconds, 2),
        f"j{jobs}_cores_busy": round(parallel.cpu_seconds / parallel.seconds, 2),
        "j1_cores_busy": round(serial.cpu_seconds / serial.seconds, 2),
        "rerun_seconds": round(rerun.seconds, 2),
        "rerun_speedup": round(serial.seconds / rerun.seconds, 1),
        "rerun_from_cache": rerun.cached,
        "stages_seconds_j1": {k: round(v, 2) for k, v in serial.stages.items()},
        "peak_rss_mb_per_worker": [round(x / 1024) for x in parallel.peak_by_progress],
        "peak_rss_mb_parent": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "statuses": dict(serial.statuses),
        "failures": serial.failures[:20],
    }


def _print(f: dict, serial: Run, jobs: int) -> None:
    def row(label: str, value: str) -> None:
        print(f"  {label:<34} {value}")

    print("end to end")
    row("floor: libcst parse + codegen", f"{f['floor_seconds']:8.1f} s  {f['floor_lines_per_second']:>8,} lines/s  "
        f"{f['floor_cpu_seconds']:.1f} s CPU  (file by file with -j 1; whole corpus before/after it: "
        + " / ".join(f"{x:.1f}" for x in f["floor_whole_corpus_cpu_seconds_before_after"]) + " s CPU)")
    row("convert -j 1", f"{f['j1_seconds']:8.1f} s  {f['j1_lines_per_second']:>8,} lines/s  "
        f"{f['j1_cpu_seconds']:.1f} s CPU  {f['j1_files_per_second']:.1f} files/s")
    row(f"convert -j {jobs}", f"{f[f'j{jobs}_seconds']:8.1f} s  {f[f'j{jobs}_lines_per_second']:>8,} lines/s  "
        f"{f[f'j{jobs}_cores_busy']:.2f} cores busy on average")
    row("second run, unchanged tree (-j 1)", f"{f['rerun_seconds']:8.1f} s  ({f['rerun_from_cache']} files from the cache)")
    print()
    print("targets")
    _target(f"-j 1 within {FLOOR_TARGET}x of the floor (CPU s)", f["ratio_to_floor"], "x",
            f["ratio_to_floor"] <= FLOOR_TARGET, f"(wall: {f['ratio_to_floor_wall']}x)")
    _target(f"-j {jobs} at least 1.7x faster than -j 1", f[f"j{jobs}_speedup"], "x", f[f"j{jobs}_speedup"] >= 1.7)
    _target("second run at least 5x faster", f["rerun_speedup"], "x", f["rerun_speedup"] >= 5.0)
    peaks = f["peak_rss_mb_per_worker"]
    flat = peaks[-1] <= peaks[0] * 1.5 + 50
    print(f"  {'peak memory per worker flat':<44} {' / '.join(map(str, peaks))} MB after 25/50/75/100% of the files"
          f"  {'met' if flat else 'NOT MET'}")
    print()
    print("time per stage, -j 1 (sum over files)")
    total = serial.seconds
    for stage, seconds in f["stages_seconds_j1"].items():
        print(f"  {stage:<34} {seconds:8.1f} s  {seconds / total:6.1%}")
    print()
    print(f"files: {', '.join(f'{v} {k}' for k, v in sorted(f['statuses'].items()))}; "
          f"parent peak memory {f['peak_rss_mb_parent']} MB")
    for line in f["failures"]:
        print(f"  {line}")


def _print_single(single: SingleFile) -> dict:
    figures = {
        "path": os.path.relpath(single.path),
        "lines": single.lines,
        "median_wall_seconds": round(single.median_wall, 3),
        "median_cpu_seconds": round(single.median_cpu, 3),
        "wall_seconds": [round(x, 3) for x in single.wall],
        "python_start_wall_seconds": round(single.python_wall, 3),
    }
    served = single.server_cpu is not None
    if served:
        figures["server_cpu_seconds_per_run"] = round(single.server_cpu, 3)
    how = (f"CPU: client {figures['median_cpu_seconds']} s + server {figures.get('server_cpu_seconds_per_run')} s"
           if served else f"in-process, CPU {figures['median_cpu_seconds']} s")
    print(f"single file{' --server' if served else ''}: ms-migrate convert {figures['path']} --diff "
          f"({single.lines} lines), fresh process, median of {len(single.wall)} after a warm-up run")
    _target(f"wall time at most {SINGLE_FILE_TARGET} s", figures["median_wall_seconds"], " s",
            single.median_wall <= SINGLE_FILE_TARGET,
            f"({how}; a bare `python -c pass` takes "
            f"{figures['python_start_wall_seconds']} s here)")
    return figures


def _target(label: str, value: float, unit: str, met: bool, note: str = "") -> None:
    print(f"  {label:<44} {value:>6}{unit}  {'met' if met else 'NOT MET'}  {note}".rstrip())


if __name__ == "__main__":
    sys.exit(main())
