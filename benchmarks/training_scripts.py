"""The training-script benchmark: real public training scripts, copied byte for
byte with the repository around them, run on synthetic data with tiny
configurations through their own command-line arguments, first with torch,
then converted by ``python -m transpiler convert`` (the whole repository, as a
user would) and run with torch unimportable (transpiler/proof/no_torch.py).

    .venv/bin/python benchmarks/training_scripts.py                 # every script
    .venv/bin/python benchmarks/training_scripts.py pygat glow      # some of them
    .venv/bin/python benchmarks/training_scripts.py --json out.json --work /tmp/ts
    .venv/bin/python benchmarks/training_scripts.py --table a.json b.json     # rows saved by earlier runs
    .venv/bin/python benchmarks/training_scripts.py --distributed   # DDP scripts: torchrun vs msrun (distributed.py)
    .venv/bin/python benchmarks/training_scripts.py bigram --jit    # converted with `convert --jit`

Per script it prints the verdict on both sides (trains: it ran and its last
printed loss is below its first; flat: it ran, the loss did not fall; no-loss;
fails at file:line with the first error line; marked: it failed in a statement
the converter marked as not converted; timeout), the first and last loss each
side printed (read from the script's own output with a per-script regular
expression), the wall time of each side and their ratio; where the corpus has the same training
written by hand in MindSpore (``Script.by_hand``, benchmarks/training_scripts/by_hand),
that runs too and the converted script's time is also given against it. Where a side writes
files (checkpoints, images, logs: whatever was not in its run directory before it ran), a
line compares them with the other side's (a MindSpore checkpoint carries the ``.ckpt``
mindspore.save_checkpoint appends to the torch file's name). Initial weights and
random draws are each framework's own: the losses should fall on both sides,
not match.

The corpus: benchmarks/training_scripts/corpus.py (``SOURCES``, ``SCRIPTS``;
spec.py says what an entry holds; data.py writes the data). The sources stay
outside this repository:

- a GitHub repository ``owner/name`` is read from the git snapshot
  ``SOURCES/owner+name/repo`` (--sources, default /work/.mirror; where the
  ``fetch`` tool puts ``github:owner/name``, or a ``git clone --bare`` placed
  there) at the pinned commit, with ``git archive`` (benchmarks/research/fetch.py);
- registry packages that a script imports and this environment lacks
  (``Script.packages``) are downloaded with ``pip download --no-deps`` and put
  on the path of both sides, converted on the MindSpore side;
- the torch side gets torchvision's Python part as benchmarks/research does.

Everything is written under --work (default ~/.cache/ms-migrate-training-scripts):
``src/`` (sources), ``converted/`` (converted once per pin; --no-convert reuses
it), ``runs/<script>/torch|mindspore`` (the copy each side runs in, with its
data and whatever the script writes: checkpoints, images, logs).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.research import safe_name  # noqa: E402
from benchmarks.research.fetch import SourceMissing, fetch_torchvision_python, get_source  # noqa: E402
from benchmarks.research.spec import Source  # noqa: E402
from benchmarks.training_scripts import SCRIPTS, SOURCES, work_and_chosen  # noqa: E402
from benchmarks.training_scripts.run import prepare_run, run_side  # noqa: E402
from benchmarks.training_scripts.spec import Script  # noqa: E402
from benchmarks.training_scripts.table import print_table  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--distributed" in argv:  # DDP scripts under torchrun and msrun: benchmarks/training_scripts/distributed.py
        from benchmarks.training_scripts.distributed import main as distributed_main

        return distributed_main([a for a in argv if a != "--distributed"])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="scripts to run (default: all)")
    parser.add_argument("--work", default=os.path.join(os.path.expanduser("~"), ".cache",
                                                       "ms-migrate-training-scripts"),
                        help="where sources, converted code and runs go (outside the repository)")
    parser.add_argument("--sources", default="/work/.mirror",
                        help="where GitHub snapshots are: SOURCES/owner+name/repo is a git directory")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    parser.add_argument("--no-convert", action="store_true", help="reuse the converted code in --work")
    parser.add_argument("--torch-only", action="store_true", help="run the torch side only (checks the corpus)")
    parser.add_argument("--timeout", type=int, default=0, help="seconds per side (default: each script's own)")
    parser.add_argument("--jit", action="store_true",
                        help="convert with `convert --jit` (training steps compiled) into converted-jit/")
    parser.add_argument("--table", nargs="+", metavar="JSON",
                        help="print the table of rows saved with --json by earlier runs (the last row of a script "
                             "wins), in corpus order; nothing is run")
    args = parser.parse_args(argv)
    if args.table:
        saved: dict[str, dict] = {}
        for path in args.table:
            with open(path) as handle:
                saved.update({row["id"]: row for row in json.load(handle)})
        order = [s.id for s in SCRIPTS]
        print_table(sorted(saved.values(), key=lambda r: order.index(r["id"]) if r["id"] in order else len(order)))
        return 0
    work, chosen = work_and_chosen(parser, args.work, args.names, SCRIPTS)
    os.makedirs(work, exist_ok=True)
    by_name = {s.name: s for s in SOURCES}
    torchvision = fetch_torchvision_python(work)
    rows = []
    for script in chosen:
        row = run_script(script, by_name[script.source], work, args, torchvision)
        rows.append(row)
        ms = row.get("mindspore", {})
        print(f"[{len(rows)}/{len(chosen)}] {script.id}: torch {row.get('torch', {}).get('verdict', row.get('verdict'))}"
              f", mindspore {ms.get('verdict', '-')} {ms.get('where', '')} {ms.get('error', '')[:120]}",
              file=sys.stderr, flush=True)
        if args.json:  # after each script: a long run that is stopped keeps what it measured
            with open(args.json, "w") as handle:
                json.dump(rows, handle, indent=1)
    print_table(rows)
    return 0


def run_script(script: Script, source: Source, work: str, args, torchvision: str) -> dict:
    row = {"id": script.id, "source": script.source, "script": script.path, "note": script.note}
    try:
        original = get_source(source, work, args.sources)
        packages = [get_source(_package(spec), work, args.sources) for spec in script.packages]
    except SourceMissing as exc:
        return dict(row, verdict="source", why=str(exc))
    timeout = args.timeout or script.timeout
    torch_cwd = prepare_run(script, original, os.path.join(work, "runs", script.id, "torch"))
    row["torch"] = run_side(script, "torch", torch_cwd, packages, timeout, torchvision)
    if args.torch_only:
        return row
    folder = "converted-jit" if args.jit else "converted"
    options = ["--jit"] if args.jit else []
    try:
        converted = convert(original, os.path.join(work, folder, os.path.basename(original)), not args.no_convert,
                            options)
        converted_packages = [convert(p, os.path.join(work, folder, os.path.basename(p)), not args.no_convert,
                                      options) for p in packages]
    except RuntimeError as exc:
        row["mindspore"] = {"side": "mindspore", "verdict": "convert", "error": str(exc)[:300], "seconds": None}
        return row
    ms_cwd = prepare_run(script, converted, os.path.join(work, "runs", script.id, "mindspore"))
    row["mindspore"] = run_side(script, "mindspore", ms_cwd, converted_packages, timeout)
    if script.by_hand:  # the same training written by hand in MindSpore, run where the converted script ran
        hand_cwd = prepare_run(script, converted, os.path.join(work, "runs", script.id, "by_hand"))
        name = f"by_hand_{script.by_hand}"
        shutil.copy(os.path.join(ROOT, "benchmarks", "training_scripts", "by_hand", script.by_hand),
                    os.path.join(hand_cwd, name))
        hand = replace(script, path=os.path.join(script.cwd, name), argv=script.by_hand_argv or script.argv)
        row["by_hand"] = run_side(hand, "mindspore", hand_cwd, converted_packages, timeout)
    return row


def _package(spec: str) -> Source:
    name, version = spec.split("==")
    return Source(name, "pypi", version)


_converted_now: set[str] = set()


def convert(source: str, output: str, again: bool, options: list[str] = ()) -> str:
    """``python -m transpiler convert SOURCE -o OUTPUT [OPTIONS]`` (once per run of the benchmark)."""
    if output in _converted_now or (not again and os.path.isdir(output)):
        return output
    done = subprocess.run([sys.executable, "-m", "transpiler", "convert", source, "-o", output, "--force", "-q",
                           "--report", output + ".report.json", *options],
                          cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode not in (0, 1) or not os.path.isdir(output):
        raise RuntimeError(f"ms-migrate convert {safe_name(os.path.basename(source))}: exit {done.returncode}: "
                           + (done.stderr.strip().splitlines() or [""])[-1])
    _converted_now.add(output)
    return output


if __name__ == "__main__":
    sys.exit(main())
