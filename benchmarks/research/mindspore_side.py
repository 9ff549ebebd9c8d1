"""The MindSpore side of the research benchmark, run in a child process with
torch, torchvision and torchaudio made unimportable (the converted code must
not need them).

    python mindspore_side.py run --path DIR... --converted DIR REFERENCE_NPZ MODEL_ID
    python mindspore_side.py imports --path DIR... --converted DIR TOP [PART...]

``run`` imports the converted module, builds the model the way the torch side
did (``mindspore.set_seed(0)``), loads the torch weights with
``convert_state_dict`` and ``load_param_into_net(strict_load=True)``, runs it
with ``set_train(False)`` on the same inputs and compares every output tensor
with benchmarks/zoo/verdict.py; a model that matches runs again in GRAPH_MODE
(``graph``: benchmarks/zoo/graph.py; ``--no-graph`` skips it); prints one JSON
line (verdict, max error, graph, first error as ``file:line`` of the converted
code under --converted).

``imports`` imports every converted module and prints {module: "" or the error}.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from benchmarks.research import model_by_id  # noqa: E402
from benchmarks.research.build import build, call_inputs, flatten, method  # noqa: E402
from benchmarks.zoo import graph  # noqa: E402
from benchmarks.zoo.mindspore_side import _failure  # noqa: E402
from benchmarks.zoo.verdict import output_verdict  # noqa: E402
from transpiler.proof.no_torch import block_torch  # noqa: E402


def run(reference: str, model_id: str, converted: str, graph: bool = True) -> dict:
    import numpy as np

    stage = "import"
    try:
        import mindspore

        from transpiler.proof.weights import convert_state_dict

        spec = model_by_id(model_id)
        data = np.load(reference)
        arrays = {k: data[k] for k in data.files}
        __import__(spec.module)
        stage = "construct"
        mindspore.set_seed(0)
        model = build(spec)
        stage = "weights"
        weights = {k[len("weight:"):]: v for k, v in arrays.items() if k.startswith("weight:")}
        params = convert_state_dict(weights, model)
        mindspore.load_param_into_net(model, params, strict_load=True)
        stage = "forward"
        model.set_train(False)
        args, kwargs = call_inputs(spec, arrays, mindspore.Tensor)
        outputs = flatten(method(model, spec)(*args, **kwargs), lambda v: isinstance(v, mindspore.Tensor), lambda t: t.asnumpy())
    except BaseException as exc:  # noqa: BLE001 - every failure is a verdict
        return _failure(stage, exc, converted)
    result = compare(outputs, arrays)
    if graph and result["verdict"] == "match":
        # the verdict stands if graph compilation kills the process (the parent reads the last line)
        print(json.dumps({**result, "graph": "fails: the process died in GRAPH_MODE"}), flush=True)
        result["graph"] = graph_check(model, spec, arrays, converted)
    return result


def graph_check(model, spec, arrays: dict, converted: str) -> str:
    """The same model, same weights, run again in GRAPH_MODE (benchmarks/zoo/graph.py)."""
    import mindspore

    try:
        graph.graph_mode()
        args, kwargs = call_inputs(spec, arrays, mindspore.Tensor)
        call = graph.compiled(method(model, spec), not spec.method)
        outputs = flatten(call(*args, **kwargs), lambda v: isinstance(v, mindspore.Tensor), lambda t: t.asnumpy())
    except BaseException as exc:  # noqa: BLE001 - a failure is the column's value
        return graph.failure(exc, converted)
    result = compare(outputs, arrays)
    return "match" if result["verdict"] == "match" else f"mismatch: {result['error']}"[:200]


def compare(outputs: list, arrays: dict) -> dict:
    """One verdict for all outputs: each tensor by output_verdict, the first that fails speaks."""
    expected = [arrays[f"output:{i}"] for i in range(sum(k.startswith("output:") for k in arrays))]
    if len(outputs) != len(expected):
        return {"verdict": "mismatch", "error": f"{len(outputs)} output tensors, torch {len(expected)}"}
    rows = []
    for i, (output, wanted) in enumerate(zip(outputs, expected)):
        row = output_verdict(output, wanted, arrays.get(f"output64:{i}"))
        if row["verdict"] == "match" and output.dtype != wanted.dtype:
            row = {"verdict": "mismatch", "max_error": row.get("max_error", 0.0),
                   "error": f"dtype {output.dtype} != torch {wanted.dtype}"}
        rows.append(row)
    errors = [r.get("max_error") for r in rows if r.get("max_error") is not None]
    result = {"verdict": "match", "error": ""}
    if errors:
        result["max_error"] = max(errors)
    prefix = (lambda i: f"output {i}: ") if len(rows) > 1 else (lambda i: "")
    notes = [prefix(i) + r["note"] for i, r in enumerate(rows) if r.get("note")]
    if notes:
        result["note"] = notes[0]
    for i, r in enumerate(rows):
        if r["verdict"] != "match":
            return {**result, "verdict": r["verdict"], "error": prefix(i) + r["error"]}
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("run", "imports"))
    parser.add_argument("--path", action="append", default=[])
    parser.add_argument("--converted", required=True, help="the folder holding every converted tree (for file:line)")
    parser.add_argument("--no-graph", action="store_true", help="skip the GRAPH_MODE run of a matching model")
    parser.add_argument("rest", nargs="+")
    args = parser.parse_args(argv)
    block_torch()
    for path in reversed(args.path):
        sys.path.insert(0, path)
    converted = os.path.abspath(args.converted)
    if args.mode == "imports":
        from benchmarks.research.imports import import_each

        top, *parts = args.rest
        print(json.dumps(import_each(top, tuple(parts), lambda exc: _failure("import", exc, converted)["error"])))
        return 0
    reference, model_id = args.rest
    print(json.dumps(run(reference, model_id, converted, not args.no_graph)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
