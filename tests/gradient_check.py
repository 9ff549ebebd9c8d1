"""Test helper: forward values and gradients of torch code and of its conversion,
on the same inputs and weights.

The torch side runs in the test process. The converted module runs in a child
process where importing torch fails (``transpiler.proof.no_torch``), so the
comparison also proves that the conversion does not need torch. Each case is a
callable of the module (a function, or a class made with ``args`` and then
called), its inputs, and fixed cotangents: the loss is ``sum((out_i * c_i).sum())``
over the outputs, and its gradients are taken with respect to every input and,
for a Module, every parameter (torch ``.backward()`` against
``mindspore.value_and_grad``; weights moved with ``convert_state_dict``'s
mapping, gradients compared by torch key).
"""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field

import numpy as np

_CHILD = textwrap.dedent(
    """
    import json, sys
    from transpiler.proof.no_torch import block_torch
    block_torch()
    import importlib
    import numpy as np
    import mindspore
    from transpiler.proof.weights import map_weights

    spec = json.loads(sys.argv[1])
    sys.path.insert(0, spec["directory"])
    module = importlib.import_module(spec["module"])
    for case in spec["cases"]:
        data = np.load(case["data"])
        inputs = [mindspore.Tensor(data[f"x{i}"]) for i in range(case["inputs"])]
        cotangents = [mindspore.Tensor(data[f"c{i}"]) for i in range(case["outputs"])]
        run = getattr(module, case["name"])
        keys, weights = [], []
        if case["args"] is not None:
            run = run(*case["args"])
            state = {k[2:]: data[k] for k in data.files if k.startswith("w:")}
            params, report = map_weights(state, run)
            assert report.ok, report.problems()
            assert not mindspore.load_param_into_net(run, params)[0]
            keys = [k for k in report.placed if k in case["parameters"]]  # not the buffers
            weights = [report.targets[k] for k in keys]

        def loss(*xs):
            out = run(*xs)
            outs = out if isinstance(out, (tuple, list)) else (out,)
            total = 0
            for o, c in zip(outs, cotangents):
                total = total + (o * c).sum()
            return total

        out = run(*inputs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        grad = mindspore.value_and_grad(loss, grad_position=tuple(range(len(inputs))), weights=weights or None)
        if case["jit"]:  # the forward and backward compiled as one graph
            eager = grad

            def grad(*xs):
                return eager(*xs)

            grad = mindspore.jit(grad)
        _, grads = grad(*inputs)
        if weights:
            input_grads, weight_grads = grads
        else:
            input_grads, weight_grads = grads, ()
        if not isinstance(input_grads, (tuple, list)):
            input_grads = (input_grads,)
        saved = {f"out{i}": o.asnumpy() for i, o in enumerate(outs)}
        saved.update({f"dx{i}": g.asnumpy() for i, g in enumerate(input_grads)})
        saved.update({f"dw:{k}": g.asnumpy() for k, g in zip(keys, weight_grads)})
        np.savez(case["result"], **saved)
    print("done")
    """
)


@dataclass
class Case:
    """``name``: a function of the module, or a class when ``args`` is given."""

    name: str
    inputs: list[np.ndarray]
    args: list | None = None
    outputs: int = 1
    seed: int = 0
    jit: bool = False  # MindSpore side: value_and_grad compiled with mindspore.jit
    cotangents: list[np.ndarray] = field(default_factory=list)
    parameters: list[str] = field(default_factory=list)  # the torch parameter names (not buffers)


def torch_side(module, case: Case) -> dict[str, np.ndarray]:
    """Run ``case`` on the torch module; returns the values and gradients, and
    fills in the weights and cotangents the MindSpore side uses."""
    import torch

    torch.manual_seed(case.seed)
    run = getattr(module, case.name)
    weights = {}
    if case.args is not None:
        run = run(*case.args)
        weights = {k: v for k, v in run.named_parameters()}
    inputs = [torch.tensor(x, requires_grad=True) for x in case.inputs]
    out = run(*inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    rng = np.random.RandomState(case.seed + 1)
    case.cotangents = [rng.randn(*o.shape).astype(np.float32) for o in outs]
    case.outputs = len(outs)
    loss = sum((o * torch.tensor(c)).sum() for o, c in zip(outs, case.cotangents))
    loss.backward()
    result = {f"out{i}": o.detach().numpy() for i, o in enumerate(outs)}
    result.update({f"dx{i}": (x.grad if x.grad is not None else torch.zeros_like(x)).numpy()
                   for i, x in enumerate(inputs)})
    result.update({f"dw:{k}": (p.grad if p.grad is not None else torch.zeros_like(p)).numpy()
                   for k, p in weights.items()})
    if case.args is not None:
        result.update({f"w:{k}": v.detach().numpy() for k, v in run.state_dict().items()})
    case.parameters = list(weights)
    return result


def mindspore_side(converted: pathlib.Path, cases: list[Case], torch_results: list[dict], work: pathlib.Path):
    """Run the cases on the converted module in a process without torch."""
    specs = []
    for index, (case, result) in enumerate(zip(cases, torch_results)):
        data = work / f"case{index}_in.npz"
        arrays = {f"x{i}": x for i, x in enumerate(case.inputs)}
        arrays.update({f"c{i}": c for i, c in enumerate(case.cotangents)})
        arrays.update({k: v for k, v in result.items() if k.startswith("w:")})
        np.savez(data, **arrays)
        specs.append({"name": case.name, "args": case.args, "inputs": len(case.inputs), "outputs": case.outputs,
                      "jit": case.jit, "parameters": case.parameters,
                      "data": str(data), "result": str(work / f"case{index}_out.npz")})
    spec = {"directory": str(converted.parent), "module": converted.stem, "cases": specs}
    root = pathlib.Path(__file__).resolve().parents[1]
    script = work / "mindspore_side.py"  # a file: mindspore.jit reads the source of what it compiles
    script.write_text(_CHILD)
    done = subprocess.run([sys.executable, str(script), json.dumps(spec)], capture_output=True, text=True,
                          timeout=900, cwd=work, env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr[-4000:]
    return [dict(np.load(s["result"])) for s in specs]


def load_torch_module(path: pathlib.Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def differences(torch_result: dict, ms_result: dict, rtol=1e-4, atol=1e-5) -> list[str]:
    """What differs between the two sides (values and gradients, by name)."""
    problems = []
    for key, expected in torch_result.items():
        if key.startswith("w:"):
            continue
        if key not in ms_result:
            problems.append(f"{key}: not computed by MindSpore")
            continue
        got = ms_result[key]
        if got.size == expected.size and got.shape != expected.shape:
            got = got.reshape(expected.shape)  # a weight MindSpore keeps in another layout
        if got.shape != expected.shape:
            problems.append(f"{key}: shape {got.shape} != torch {expected.shape}")
        elif not np.allclose(got, expected, rtol=rtol, atol=atol):
            problems.append(f"{key}: max difference {np.abs(got - expected).max():.3g}")
    return problems
