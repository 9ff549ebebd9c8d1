"""The MindSpore side of the zoo benchmark, run in a child process per model
on the converted timm package, with torch and torchvision made unimportable
(the converted package must not need them): build the model through the
converted package's own ``create_model``, load the torch weights with
``convert_state_dict``, run it in eval mode on the same input and compare.

    python mindspore_side.py [--no-graph] CONVERTED_DIR REFERENCE_NPZ NAME

Prints one JSON line: verdict, max error, first error line (see verdict.py
for when outputs match), and for a model that matches, ``graph``: the same
model run again in GRAPH_MODE (benchmarks/zoo/graph.py), and for one that
matches there too, ``export``: what ``ms-migrate verify --export`` checks, the
model exported as MindIR and loaded back as an ``nn.GraphCell`` gives the
Cell's outputs (transpiler/proof/verify_export.py).
"""

from __future__ import annotations

import json
import os
import sys
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from benchmarks.zoo.verdict import output_verdict  # noqa: E402
from transpiler.proof.marked_lines import marked_frame  # noqa: E402
from transpiler.proof.no_torch import block_torch  # noqa: E402


def _failure(stage: str, exc: BaseException, converted_dir: str) -> dict:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(converted_dir)]
    message = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]
    marked = marked_frame(exc, converted_dir)
    if marked is not None:
        filename, lineno, marker = marked
        return {"verdict": "marked", "error": f"{os.path.relpath(filename, converted_dir)}:{lineno}: {marker}"[:300]}
    if frames:
        last = frames[-1]
        message = f"{os.path.relpath(last.filename, converted_dir)}:{last.lineno}: {message}"
    return {"verdict": stage, "error": message[:300]}


def run(converted_dir: str, reference: str, name: str, graph: bool = True) -> dict:
    block_torch()
    sys.path.insert(0, converted_dir)
    import numpy as np

    stage = "import"
    try:
        import mindspore
        import timm

        from transpiler.proof.weights import convert_state_dict

        stage = "construct"
        mindspore.set_seed(0)
        model = timm.create_model(name, pretrained=False)
        stage = "weights"
        data = np.load(reference)
        weights = {k[len("weight:"):]: data[k] for k in data.files if k.startswith("weight:")}
        params = convert_state_dict(weights, model)
        mindspore.load_param_into_net(model, params, strict_load=True)
        stage = "forward"
        model.set_train(False)
        output = model(mindspore.Tensor(data["input"])).asnumpy()
    except BaseException as exc:  # noqa: BLE001 - every failure is a verdict
        return _failure(stage, exc, converted_dir)
    expected_float64 = data["output_float64"] if "output_float64" in data.files else None
    result = output_verdict(output, data["output"], expected_float64)
    if graph and result["verdict"] == "match":
        # the verdict stands if graph compilation kills the process (the parent reads the last line)
        print(json.dumps({**result, "graph": "fails: the process died in GRAPH_MODE"}), flush=True)
        result["graph"] = graph_check(model, data, expected_float64, converted_dir)
        if result["graph"] == "match":
            print(json.dumps({**result, "export": "fails: the process died exporting"}), flush=True)
            result["export"] = export_check(model, data, converted_dir)
    return result


def graph_check(model, data, expected_float64, converted_dir: str) -> str:
    """The same model, same weights, run again in GRAPH_MODE (benchmarks/zoo/graph.py)."""
    import mindspore

    from benchmarks.zoo import graph as graph_mode

    try:
        graph_mode.graph_mode()
        output = model(mindspore.Tensor(data["input"])).asnumpy()
    except BaseException as exc:  # noqa: BLE001 - a failure is the column's value
        return graph_mode.failure(exc, converted_dir)
    result = output_verdict(output, data["output"], expected_float64)
    return "match" if result["verdict"] == "match" else f"mismatch: {result['error']}"[:200]


def export_check(model, data, converted_dir: str) -> str:
    """``verify --export``'s check: MindIR exported and loaded back against the Cell."""
    from benchmarks.zoo import graph as graph_mode
    from transpiler.proof.verify_export import export_differences

    try:
        differences = export_differences(model, [data["input"]], rtol=1e-4, atol=1e-4)
    except BaseException as exc:  # noqa: BLE001 - a failure is the column's value
        return graph_mode.failure(exc, converted_dir)
    bad = [d for d in differences if not d.ok]
    return "match" if not bad else f"mismatch: {bad[0].name} {bad[0].verdict()} max abs {bad[0].max_abs:.2e}"[:200]


def main() -> int:
    args = sys.argv[1:]
    graph = "--no-graph" not in args
    converted_dir, reference, name = [a for a in args if a != "--no-graph"]
    print(json.dumps(run(os.path.abspath(converted_dir), reference, name, graph)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
