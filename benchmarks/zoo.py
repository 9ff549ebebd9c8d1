"""The model-zoo benchmark: convert the whole timm package with ms-migrate,
build each listed architecture through the converted package's own
``create_model(name, pretrained=False)``, load the torch model's weights with
``convert_state_dict`` and compare outputs with torch in eval mode on the same
seeded input (atol 1e-4, rtol 1e-3, or as close to torch's float64 output as
torch's own float32 output is: benchmarks/zoo/verdict.py). The converted side
runs with torch and torchvision made unimportable.

    .venv/bin/python benchmarks/zoo.py                 # every model of benchmarks/zoo/models.py
    .venv/bin/python benchmarks/zoo.py resnet18 vgg11  # some of them
    .venv/bin/python benchmarks/zoo.py --json zoo.json
    .venv/bin/python benchmarks/zoo.py --grad          # one gradient check per model file (benchmarks/zoo/grad.py)

Downloads only from the package registry (timm's and torchvision's wheels,
unpacked into --work). Verdicts: match, mismatch, weights (conversion of the
state dict failed), forward, construct, import, marked (it failed in a
statement ms-migrate marked as not converted; the marker is the reason).
Column ``graph``: a model that matches runs again, same weights, in GRAPH_MODE
(benchmarks/zoo/graph.py; ``--no-graph`` skips it). Column ``export``: a model
that matches in GRAPH_MODE is exported as MindIR, loaded back as an
``nn.GraphCell`` and must give the Cell's outputs, as ``ms-migrate verify
--export`` checks (``--no-graph`` skips it too).
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

from benchmarks.zoo import grad  # noqa: E402
from benchmarks.zoo.fetch import fetch  # noqa: E402
from benchmarks.zoo.graph import summary as graph_summary  # noqa: E402
from benchmarks.zoo.models import MODELS  # noqa: E402

HERE = os.path.join(ROOT, "benchmarks", "zoo")
TIMEOUT = 900


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="models to run (default: all of benchmarks/zoo/models.py)")
    parser.add_argument("--work", default=os.path.join(os.path.expanduser("~"), ".cache", "ms-migrate-zoo"),
                        help="where the wheels, the converted package and the torch references go")
    parser.add_argument("--jobs", type=int, default=2, help="models run at once (default 2)")
    parser.add_argument("--json", metavar="PATH", help="also write the table as JSON")
    parser.add_argument("--grad", action="store_true",
                        help="instead: ms-migrate verify --grad on one architecture per model file (names: its factory)")
    parser.add_argument("--no-graph", action="store_true",
                        help="skip running the models that match again in GRAPH_MODE (the graph column)")
    parser.add_argument("--no-convert", action="store_true",
                        help="use the converted package already in --work (default: convert timm again)")
    args = parser.parse_args(argv)
    models = [m for m in MODELS if not args.names or m[0] in args.names]
    os.makedirs(args.work, exist_ok=True)

    timm_dir, torchvision_dir = fetch(args.work)
    converted = os.path.join(args.work, "converted")
    if not (args.no_convert and os.path.isdir(os.path.join(converted, "timm"))):
        print(_convert(os.path.join(timm_dir, "timm"), os.path.join(converted, "timm")))
    if args.grad:
        return _grad_checks(args, timm_dir, torchvision_dir, converted)
    references = os.path.join(args.work, "references")
    os.makedirs(references, exist_ok=True)
    _torch_references(timm_dir, torchvision_dir, references, [name for name, _ in models], args.jobs)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(lambda m: _row(m, converted, references, not args.no_graph), models))
    _print(rows)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=1)
    return 0


def _grad_checks(args, timm_dir: str, torchvision_dir: str, converted: str) -> int:
    checks = [c for c in grad.GRAD_CHECKS if not args.names or c[1] in args.names]
    logs = os.path.join(args.work, "grad-logs")
    os.makedirs(logs, exist_ok=True)
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(lambda c: grad.run_check(c, timm_dir, torchvision_dir, converted, logs), checks))
    grad.print_table(rows)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=1)
    return 0


def _convert(source: str, output: str) -> str:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "transpiler", "convert", source, "-o", output, "--force", "-q", "-j", "2"],
        capture_output=True, text=True,
    )
    lines = [line for line in done.stderr.splitlines() + done.stdout.splitlines() if line.startswith("ms-migrate:")]
    return f"converted timm in {time.perf_counter() - start:.0f} s\n" + "\n".join(lines)


def _torch_references(timm_dir: str, torchvision_dir: str, out: str, names: list[str], jobs: int) -> None:
    todo = [n for n in names if not _current_reference(os.path.join(out, f"{n}.npz"))]
    chunks = [todo[i::jobs] for i in range(jobs) if todo[i::jobs]]
    script = os.path.join(HERE, "torch_side.py")
    processes = [subprocess.Popen([sys.executable, script, timm_dir, torchvision_dir, out, *chunk]) for chunk in chunks]
    for process in processes:
        process.wait()


def _current_reference(path: str) -> bool:
    # references made before the float64 output was saved are made again
    if not os.path.exists(path):
        return False
    with np.load(path) as data:
        return "output_float64" in data.files or "float64_error" in data.files


def _row(model: tuple[str, str], converted: str, references: str, graph: bool = True) -> dict:
    name, family = model
    row = {"model": name, "file": family}
    reference = os.path.join(references, f"{name}.npz")
    if not os.path.exists(reference):
        error_file = os.path.join(references, f"{name}.error.json")
        error = json.load(open(error_file))["error"] if os.path.exists(error_file) else "no reference"
        return {**row, "verdict": "torch", "error": f"torch side failed: {error}"[:300]}
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, os.path.join(HERE, "mindspore_side.py"),
                               *([] if graph else ["--no-graph"]), converted, reference, name],
                              capture_output=True, text=True, timeout=TIMEOUT)
        lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
        result = json.loads(lines[-1]) if lines else {
            "verdict": "forward", "error": f"the process died (exit {done.returncode}): "
            + " ".join(done.stderr.strip().splitlines()[-1:])[:250]}
    except subprocess.TimeoutExpired:
        result = {"verdict": "forward", "error": f"timed out after {TIMEOUT} s"}
    return {**row, **result, "seconds": round(time.perf_counter() - start, 1)}


def _print(rows: list[dict]) -> None:
    width = max(len(r["model"]) for r in rows)
    print(f"\n{'model':{width}}  {'file':18}  {'verdict':9}  {'max err':>9}  {'graph':8}  {'export':8}  "
          "first error or note")
    for r in rows:
        error = f"{r['max_error']:.2e}" if "max_error" in r else ""
        graph = (r.get("graph") or "").split(":", 1)[0]
        export = (r.get("export") or "").split(":", 1)[0]
        print(f"{r['model']:{width}}  {r['file']:18}  {r['verdict']:9}  {error:>9}  {graph:8}  {export:8}  "
              f"{r.get('error') or r.get('note', '')}")
    graph_failures = [r for r in rows if r.get("graph", "match") != "match"]
    if graph_failures:
        print("\nGRAPH_MODE failures of models that match in PyNative:")
        for r in graph_failures:
            print(f"  {r['model']}: {r['graph']}")
    export_failures = [r for r in rows if r.get("export", "match") != "match"]
    if export_failures:
        print("\nMindIR export failures (verify --export) of models that match in GRAPH_MODE:")
        for r in export_failures:
            print(f"  {r['model']}: {r['export']}")
    matched = sum(r["verdict"] == "match" for r in rows)
    files = len({r["file"] for r in rows})
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    print(f"\n{matched} of {len(rows)} architectures ({len(rows) and 100 * matched // len(rows)}%) from {files} model files "
          "match torch after weight conversion; " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    if graph_summary(rows):
        print(graph_summary(rows))
    exported = [r for r in rows if r.get("export")]
    if exported:
        print(f"{sum(r['export'] == 'match' for r in exported)} of {len(exported)} models that match in GRAPH_MODE "
              "export as MindIR and, loaded back as nn.GraphCell, give the Cell's outputs (verify --export)")


if __name__ == "__main__":
    sys.exit(main())
