"""The research benchmark: public model code as researchers publish it (GitHub
repositories at pinned commits, packages at pinned versions from the package
registry), converted with ``ms-migrate convert`` as a user would, weights moved
with ``convert_state_dict``, outputs compared with torch in eval mode on the
same seeded inputs, torch unimportable on the MindSpore side.

    .venv/bin/python benchmarks/research.py                      # every model of the corpus
    .venv/bin/python benchmarks/research.py unet_r18 xt_decoder   # some of them
    .venv/bin/python benchmarks/research.py --source monai        # the models of one source
    .venv/bin/python benchmarks/research.py --json research.json --jobs 2

The corpus: benchmarks/research/corpus_pypi.py and corpus_github.py
(``SOURCES`` and ``MODELS``; benchmarks/research/spec.py says what an entry
holds). The sources stay outside this repository, in --work (default
~/.cache/ms-migrate-research):

- a ``pypi`` source is downloaded with ``pip download --no-deps name==version``
  (its wheel, or its sdist) and unpacked; nothing is installed. Packages that
  the original code imports and that are not converted (plain-Python ones such
  as einops, loguru) must be installed in the venv for the torch side.
- a ``github`` source is read from a git snapshot at --sources (default
  /work/.mirror): the repository ``owner/name`` is the git directory
  ``SOURCES/owner+name/repo`` (where the fetch tool puts it; a ``git clone
  --bare`` there does as well). The pinned commit is extracted with ``git
  archive``. A source whose snapshot or commit is missing gives its rows
  ``source`` with what to get; the rest go on.

Each source is converted once into WORK/converted/<source> (``--no-convert``
reuses it); a source that ``needs`` another (``"timm"``: timm 1.0.31 from the
registry, converted once; or another source of the corpus) gets the converted
one on the MindSpore side and the original on the torch side. Each model runs
in child processes: the torch side (benchmarks/research/torch_side.py, its
reference kept in WORK/references while the entry and pin stay the same), then
the MindSpore side (benchmarks/research/mindspore_side.py), TIMEOUT seconds
at most.

Verdicts: match (every output tensor within atol 1e-4, rtol 1e-3 of torch's,
or float32 rounding only, as benchmarks/zoo/verdict.py decides), mismatch (a
value, shape, dtype or the number of output tensors differs), weights
(convert_state_dict or load_param_into_net failed), forward, construct,
import (the converted code raised there), marked (it failed in a statement
ms-migrate marked as not converted; the marker is the reason), torch (the
original itself did not run: a harness or corpus problem), source (the code
could not be had).

Column ``graph``: a model that matches runs again, with the same weights, in
GRAPH_MODE (benchmarks/zoo/graph.py): match, mismatch or fails (the first line
of the error and the converted line it names are listed under the table);
``--no-graph`` skips it.

Two columns per source: ``no-torch`` says whether every converted file whose
original imports (with torch) imports without torch (``ok``, or how many fail);
``new deps`` names third-party packages the converted files import that the
original files do not (beyond mindspore and what it requires), a requirement
the user never had.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.research import corpus, safe_name  # noqa: E402
from benchmarks.research.fetch import SourceMissing, fetch_torchvision_python, get_source  # noqa: E402
from benchmarks.research.imports import first_party, new_requirements  # noqa: E402
from benchmarks.research.spec import Model, Source  # noqa: E402
from benchmarks.research.torch_side import REFERENCE_FORMAT  # noqa: E402
from benchmarks.zoo.fetch import fetch_timm  # noqa: E402
from benchmarks.zoo.graph import summary as graph_summary  # noqa: E402

HERE = os.path.join(ROOT, "benchmarks", "research")
TIMEOUT = 600
STAMP = ".research-converted.json"  # what WORK/converted/<source> was converted from (--no-convert checks it)
TIMM = Source(name="timm", kind="pypi", pin="1.0.31", root=".", convert=("timm",))


class Prepared:
    """A source on disk: its original and converted roots, or why it is missing."""

    def __init__(self, source: Source):
        self.source = source
        self.original = ""  # the directory that goes on sys.path on the torch side
        self.converted = ""  # the same on the MindSpore side
        self.missing = ""
        self.convert_note = ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="models to run (default: the whole corpus)")
    parser.add_argument("--source", action="append", default=[], metavar="NAME",
                        help="run the models of this source (repeatable)")
    parser.add_argument("--work", default=os.path.join(os.path.expanduser("~"), ".cache", "ms-migrate-research"),
                        help="where sources, converted code and torch references go")
    parser.add_argument("--sources", default="/work/.mirror",
                        help="where GitHub snapshots are: SOURCES/owner+name/repo is a git directory")
    parser.add_argument("--jobs", type=int, default=2, help="models run at once (default 2)")
    parser.add_argument("--json", metavar="PATH", help="also write the table as JSON")
    parser.add_argument("--no-convert", action="store_true",
                        help="use the converted code already in --work when it was converted from the same pin "
                             "and parts (default: convert each source again)")
    parser.add_argument("--no-import-check", action="store_true",
                        help="skip importing every converted file (the no-torch column)")
    parser.add_argument("--no-graph", action="store_true",
                        help="skip running the models that match again in GRAPH_MODE (the graph column)")
    parser.add_argument("--torch-only", action="store_true",
                        help="only make the torch references (checks the corpus entries; verdict 'reference')")
    args = parser.parse_args(argv)
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)

    sources, models = corpus()
    by_name = {s.name: s for s in sources}
    unknown = [n for n in args.names if n not in {m.id for m in models}]
    unknown += [n for n in args.source if n not in by_name]
    if unknown:
        parser.error("not in the corpus: " + ", ".join(unknown))
    chosen = [m for m in models if (not args.names or m.id in args.names)
              and (not args.source or m.source in args.source)]
    prepared = prepare(chosen, by_name, work, args.sources, not args.no_convert, args.jobs)
    fetch_torchvision_python(work)  # once, before the models run in threads

    source_info: dict[str, dict] = {}
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        wanted = sorted({m.source for m in chosen})
        checks = {} if args.torch_only else {
            name: pool.submit(check_source, prepared, name, work, not args.no_import_check) for name in wanted}
        done: list[dict] = []

        def run(model: Model) -> dict:
            result = row(model, prepared, work, args.torch_only, not args.no_graph)
            done.append(result)
            print(f"[{len(done)}/{len(chosen)}] {model.id}: {result['verdict']} ({result.get('seconds', 0)} s)",
                  file=sys.stderr, flush=True)
            return result

        rows = list(pool.map(run, chosen))
        for name, future in checks.items():
            source_info[name] = future.result()
    for r in rows:
        info = source_info.get(r["source"], {})
        r["no_torch"] = info.get("no_torch", "")
        r["new_deps"] = info.get("new_deps", [])
    print_table(rows, source_info)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"models": rows, "sources": source_info}, handle, indent=1)
    return 0


# ---------------------------------------------------------------- preparing sources


def prepare(models: list[Model], by_name: dict[str, Source], work: str, sources_dir: str,
            convert: bool, jobs: int) -> dict[str, Prepared]:
    """Fetch and convert every source the models need (their ``needs`` too)."""
    order: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        source = TIMM if name == "timm" else by_name.get(name)
        if source is not None:
            for need in source.needs:
                visit(need)
        order.append(name)

    for m in models:
        visit(m.source)
    prepared: dict[str, Prepared] = {}
    for name in order:
        source = TIMM if name == "timm" else by_name.get(name)
        item = prepared[name] = Prepared(source or Source(name=name, kind="?", pin=""))
        if source is None:
            item.missing = f"source not in the corpus: {name}"
            continue
        try:
            top = fetch_timm(work) if source is TIMM else get_source(source, work, sources_dir)
        except SourceMissing as exc:
            item.missing = str(exc)
            continue
        except Exception as exc:  # noqa: BLE001 - one source's failure leaves the rest running
            item.missing = f"source not available: {type(exc).__name__}: {exc}"[:300]
            continue
        item.original = os.path.normpath(os.path.join(top, source.root))
        item.converted = os.path.join(work, "converted", safe_name(name))
        missing_needs = [n for n in source.needs if prepared.get(n) is None or prepared[n].missing]
        if missing_needs:
            item.missing = f"needs {', '.join(missing_needs)}: " + "; ".join(
                prepared[n].missing for n in missing_needs if n in prepared)
            continue
        if convert or not _converted_as(item):
            item.convert_note = convert_source(item, jobs)
            print(item.convert_note, flush=True)
    return prepared


def _stamp(item: Prepared) -> dict:
    return {"name": item.source.name, "pin": item.source.pin, "root": item.source.root,
            "convert": list(item.source.convert)}


def _converted_as(item: Prepared) -> bool:
    """Whether WORK/converted/<source> holds a finished conversion of this pin and these parts."""
    stamp = os.path.join(item.converted, STAMP)
    if not os.path.exists(stamp):
        return False
    with open(stamp) as handle:
        return json.load(handle) == _stamp(item)


def convert_source(item: Prepared, jobs: int) -> str:
    """``python -m transpiler convert`` on the source (each of its ``convert`` parts), as a user runs it."""
    start = time.perf_counter()
    if os.path.exists(os.path.join(item.converted, STAMP)):
        os.remove(os.path.join(item.converted, STAMP))
    parts = item.source.convert or (".",)
    lines = []
    for part in parts:
        source = os.path.normpath(os.path.join(item.original, part))
        output = os.path.normpath(os.path.join(item.converted, part))
        done = subprocess.run(
            [sys.executable, "-m", "transpiler", "convert", source, "-o", output, "--force", "-q", "-j", str(jobs)],
            capture_output=True, text=True, cwd=ROOT,
        )
        lines += [line for line in done.stderr.splitlines() + done.stdout.splitlines() if line.startswith("ms-migrate:")]
        if done.returncode not in (0, 1) and not os.path.exists(output):
            lines.append(f"ms-migrate convert {part}: exit {done.returncode}: "
                         + " ".join(done.stderr.strip().splitlines()[-1:])[:200])
    os.makedirs(item.converted, exist_ok=True)
    with open(os.path.join(item.converted, STAMP), "w") as handle:
        json.dump(_stamp(item), handle)
    return f"converted {item.source.name} in {time.perf_counter() - start:.0f} s\n" + "\n".join(lines)


def closure(prepared: dict[str, Prepared], name: str) -> list[Prepared]:
    """The source and every source it needs, itself first."""
    found: list[Prepared] = []

    def visit(n: str) -> None:
        item = prepared.get(n)
        if item is None or item in found:
            return
        found.append(item)
        for need in item.source.needs:
            visit(need)

    visit(name)
    return found


def _torchvision(work: str) -> str:
    return fetch_torchvision_python(work)


# ---------------------------------------------------------------- per source: imports


def check_source(prepared: dict[str, Prepared], name: str, work: str, import_check: bool) -> dict:
    """{"no_torch": "ok" | "3 of 120 fail" | "", "first_import_error": ..., "new_deps": [...]}"""
    item = prepared[name]
    if item.missing:
        return {"no_torch": "", "new_deps": [], "missing": item.missing}
    parts = item.source.convert
    known: set[str] = set()
    for other in closure(prepared, name)[1:]:
        if other.original:
            known |= first_party(other.original)
    info = {"new_deps": new_requirements(item.original, item.converted, parts, known), "no_torch": ""}
    if not import_check:
        return info
    group = closure(prepared, name)
    originals = _child_json([sys.executable, os.path.join(HERE, "torch_side.py"), "imports",
                             *_paths(p.original for p in group[1:]), "--torchvision", _torchvision(work),
                             item.original, *parts], TIMEOUT * 2)
    converted = _child_json([sys.executable, os.path.join(HERE, "mindspore_side.py"), "imports",
                             *_paths(p.converted for p in group[1:]), "--converted", os.path.join(work, "converted"),
                             item.converted, *parts], TIMEOUT * 2)
    if "error" in originals or "error" in converted:
        info["no_torch"] = "?"
        info["first_import_error"] = originals.get("error") or converted.get("error")
        return info
    relevant = [m for m, error in originals.items() if not error]
    failing = [m for m in relevant if converted.get(m, "not converted")]
    info["modules"] = len(relevant)
    info["originals_failing"] = len(originals) - len(relevant)
    info["no_torch"] = "ok" if not failing else f"{len(failing)}/{len(relevant)} fail"
    if failing:
        info["first_import_error"] = f"{failing[0]}: {converted.get(failing[0], 'not converted')}"[:300]
        info["import_errors"] = {m: converted.get(m, "not converted") for m in failing}
    return info


def _paths(paths) -> list[str]:
    return [arg for path in paths for arg in ("--path", path)]


def _child_json(command: list[str], timeout: int) -> dict:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        return {"error": f"the process died (exit {done.returncode}): "
                + " ".join(done.stderr.strip().splitlines()[-1:])[:250]}
    return json.loads(lines[-1])


# ---------------------------------------------------------------- per model


def row(model: Model, prepared: dict[str, Prepared], work: str, torch_only: bool = False, graph: bool = True) -> dict:
    result = {"model": model.id, "source": model.source, "kind": model.kind}
    item = prepared.get(model.source)
    if item is None or item.missing:
        return {**result, "verdict": "source", "error": item.missing if item else "source not prepared"}
    group = closure(prepared, model.source)
    references = os.path.join(work, "references")
    os.makedirs(references, exist_ok=True)
    reference = os.path.join(references, f"{model.id}.npz")
    start = time.perf_counter()
    problem = torch_reference(model, item, group, reference, work)
    if problem:
        return {**result, "verdict": "torch", "error": f"torch side failed: {problem}"[:300]}
    if torch_only:
        return {**result, "verdict": "reference", "error": "", "seconds": round(time.perf_counter() - start, 1)}
    timeout = model.timeout or TIMEOUT
    outcome = _child_json([sys.executable, os.path.join(HERE, "mindspore_side.py"), "run",
                           *_paths(p.converted for p in group), "--converted", os.path.join(work, "converted"),
                           *([] if graph else ["--no-graph"]), reference, model.id], timeout)
    if "verdict" not in outcome:
        outcome = {"verdict": "forward", "error": outcome.get("error", "no verdict")}
    return {**result, **outcome, "seconds": round(time.perf_counter() - start, 1)}


def torch_reference(model: Model, item: Prepared, group: list[Prepared], reference: str, work: str) -> str:
    """Make the torch reference unless a current one exists; the error, or ""."""
    error_file = reference[: -len(".npz")] + ".error.json"
    if _current(reference, model):
        return ""
    for stale in (reference, error_file):
        if os.path.exists(stale):
            os.remove(stale)
    command = [sys.executable, os.path.join(HERE, "torch_side.py"), "reference",
               *_paths(p.original for p in group), "--torchvision", _torchvision(work), model.id, reference]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=model.timeout or TIMEOUT,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"timed out after {model.timeout or TIMEOUT} s"
    if os.path.exists(reference):
        return ""
    if os.path.exists(error_file):
        return json.load(open(error_file))["error"]
    return f"the process died (exit {done.returncode}): " + " ".join(done.stderr.strip().splitlines()[-1:])[:250]


def _current(reference: str, model: Model) -> bool:
    # a reference is kept while the entry (and with it the pin of its source's models) is unchanged
    if not os.path.exists(reference):
        return False
    try:
        with np.load(reference) as data:
            return ("format" in data.files and int(data["format"]) == REFERENCE_FORMAT
                    and "spec" in data.files and str(data["spec"]) == repr(model))
    except Exception:  # noqa: BLE001 - an unreadable reference is made again
        return False


# ---------------------------------------------------------------- the table


def print_table(rows: list[dict], sources: dict[str, dict] | None = None) -> None:
    if not rows:
        print("no models")
        return
    sources = sources or {}
    width = max(len("model"), *(len(r["model"]) for r in rows))
    source_width = min(32, max(len("source"), *(len(r["source"]) for r in rows)))
    kind_width = max(len("kind"), *(len(r.get("kind", "")) for r in rows))
    print(f"\n{'model':{width}}  {'source':{source_width}}  {'kind':{kind_width}}  {'verdict':9}  {'max err':>9}  "
          f"{'no-torch':11}  {'new deps':10}  {'graph':6}  first error or note")
    for r in rows:
        error = f"{r['max_error']:.2e}" if r.get("max_error") is not None else ""
        deps = ",".join(r.get("new_deps") or []) or "-"
        print(f"{r['model']:{width}}  {r['source'][:source_width]:{source_width}}  {r.get('kind', ''):{kind_width}}  "
              f"{r['verdict']:9}  {error:>9}  {r.get('no_torch') or '':11}  {deps:10}  "
              f"{_graph_cell(r):6}  {r.get('error') or r.get('note', '')}")
    failing_imports = {name: info for name, info in sources.items() if info.get("first_import_error")}
    if failing_imports:
        print("\nconverted files that do not import without torch (first per source):")
        for name, info in sorted(failing_imports.items()):
            print(f"  {name}: {info['no_torch']}: {info['first_import_error']}")
    graph_failures = [r for r in rows if r.get("graph", "match") != "match"]
    if graph_failures:
        print("\nGRAPH_MODE failures of models that match in PyNative:")
        for r in graph_failures:
            print(f"  {r['model']}: {r['graph']}")
    print("\n" + summary(rows, sources))


def _graph_cell(r: dict) -> str:
    """match, fails or mismatch (the error is listed under the table); empty when not run."""
    return (r.get("graph") or "").split(":", 1)[0]


def summary(rows: list[dict], sources: dict[str, dict] | None = None) -> str:
    matched = sum(r["verdict"] == "match" for r in rows)
    repositories = len({r["source"] for r in rows})
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    line = (f"{matched} of {len(rows)} architectures ({len(rows) and 100 * matched // len(rows)}%) from {repositories} "
            "repositories match torch after weight conversion; " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    if sources:
        checked = {n: i for n, i in sources.items() if i.get("no_torch")}
        clean = sum(i["no_torch"] == "ok" for i in checked.values())
        if checked:
            line += f"; {clean} of {len(checked)} sources import without torch in every converted file"
        new = sorted({d for i in sources.values() for d in i.get("new_deps", [])})
        line += "; new requirements: " + (", ".join(new) if new else "none")
    graph_line = graph_summary(rows)
    return line + ("; " + graph_line if graph_line else "")


if __name__ == "__main__":
    sys.exit(main())
