"""Prove a conversion by running it: build the torch model and the converted
Cell, convert the weights, feed both the same seeded inputs, compare every
output (and, on request, every parameter gradient), and when they differ name
the first sub-Cell whose output diverges from its torch sub-module's.

``verify(VerifyRequest(...)) -> VerifyResult``; the CLI is
``transpiler/commands/verify.py``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import traceback
from dataclasses import dataclass, field

import numpy as np

from transpiler.proof.compare import Difference, compare, compare_leaf, flatten, format_table, map_leaves, to_numpy
from transpiler.proof.verify_inputs import InputSpec, make_inputs
from transpiler.proof.weights import WeightReport, map_weights

MATCH, MISMATCH, ERROR = 0, 1, 2


@dataclass
class VerifyRequest:
    original: str
    converted: str
    model: str
    inputs: list[InputSpec]
    args: list = field(default_factory=list)
    kwargs: dict = field(default_factory=dict)
    rtol: float = 1e-4
    atol: float = 1e-4
    grad: bool = False
    seed: int = 0


@dataclass
class Divergence:
    path: str
    torch_class: str
    ms_class: str
    max_abs: float
    inputs_match: bool  # True: the Cell is wrong on its own inputs; False: its inputs already differ

    def describe(self) -> str:
        where = repr(self.path) if self.path else "the model itself"
        text = f"first diverging Cell: {where} ({self.torch_class} -> {self.ms_class}), max abs diff {self.max_abs:.3g}"
        if self.inputs_match:
            return text + "; given the same inputs as its torch sub-module, its output differs: fix this Cell"
        parent = self.path.rpartition(".")[0]
        return text + (
            "; every sub-Cell matches on the same inputs, so the difference comes from code between "
            f"sub-Cells (in the construct of {repr(parent) if parent else 'the model'} or a caller) before this Cell runs"
        )


@dataclass
class VerifyResult:
    outputs: list[Difference] = field(default_factory=list)
    grads: list[Difference] = field(default_factory=list)
    weights: WeightReport | None = None
    divergence: Divergence | None = None
    cells: list = field(default_factory=list)  # CellCheck: sub-Cells run on torch's recorded inputs
    error: str | None = None

    @property
    def status(self) -> int:
        if self.error:
            return ERROR
        if self.weights is not None and not self.weights.ok:
            return MISMATCH
        if not self.outputs or not all(d.ok for d in self.outputs + self.grads):
            return MISMATCH
        if not all(check.ok for check in self.cells):
            return MISMATCH
        return MATCH

    def lines(self) -> list[str]:
        out: list[str] = []
        if self.weights is not None:
            out.append(f"weights: {self.weights.summary()}")
            out += [f"  {p}" for p in self.weights.problems()]
        if self.outputs:
            out += format_table(self.outputs)
        if self.grads:
            random = [d.name for d in self.outputs if d.note]
            out.append("gradients of the seeded scalar reduction"
                       + (f" (random outputs left out: {', '.join(random)}):" if random else ":"))
            out += format_table(self.grads)
        if self.cells:
            bad = [c for c in self.cells if not c.ok]
            out.append(f"sub-Cells run on the inputs their torch sub-modules received: {len(self.cells) - len(bad)} "
                       f"of {len(self.cells)} match")
        if self.divergence is not None:
            out.append(self.divergence.describe())
        if self.error:
            out.append(f"error: {self.error}")
        out.append({MATCH: "MATCH", MISMATCH: "MISMATCH", ERROR: "ERROR"}[self.status])
        return out


class _Stage(Exception):
    pass


def verify(request: VerifyRequest) -> VerifyResult:
    result = VerifyResult()
    stage = "loading"
    try:
        import mindspore
        import torch

        stage = f"loading {request.original}"
        torch_module = load_module(request.original, "_ms_migrate_verify_original")
        stage = f"loading {request.converted}"
        ms_module = load_module(request.converted, "_ms_migrate_verify_converted")
        stage = "building the models"
        torch.manual_seed(request.seed)
        torch_model = _model_class(torch_module, request.model, request.original)(*request.args, **request.kwargs)
        mindspore.set_seed(request.seed)
        ms_model = _model_class(ms_module, request.model, request.converted)(*request.args, **request.kwargs)
        stage = "converting the weights"
        params, result.weights = map_weights(torch_model, ms_model)
        mindspore.load_param_into_net(ms_model, params, strict_load=True)
        torch_model.eval()
        ms_model.set_train(False)
        stage = "running the models"
        arrays = make_inputs(request.inputs, request.seed)
        result.outputs, result.divergence, result.cells = compare_forward(
            torch_model, ms_model, arrays, request.rtol, request.atol
        )
        if request.grad:
            stage = "computing gradients"
            random = {d.name for d in result.outputs if d.note}
            result.grads = compare_gradients(torch_model, ms_model, arrays, result.weights, request, random)
    except Exception as exc:  # any failure is an ERROR verdict, reported with where it happened
        if isinstance(exc, _Stage):
            result.error = f"{stage}: {exc}"
        else:
            result.error = f"{stage}: {type(exc).__name__}: {exc}\n{_short_traceback(exc)}"
    return result


def load_module(path: str, name: str):
    """Import a file under a private name; modules it imported from its own
    directory are forgotten afterwards so the other file gets its own."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    before = set(sys.modules)
    sys.path.insert(0, folder)
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(folder)
        for added in set(sys.modules) - before - {name}:
            file = getattr(sys.modules[added], "__file__", None) or ""
            if os.path.abspath(file).startswith(folder + os.sep):
                del sys.modules[added]
    return module


def _model_class(module, name: str, path: str):
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise _Stage(f"{path} has no {name!r}")
        obj = getattr(obj, part)
    return obj


# --- forward -------------------------------------------------------------------------------------------


class _Recorder:
    """Forward hooks on every sub-module (torch) or sub-Cell (MindSpore):
    path -> inputs and output of the first call, plus completion order."""

    def __init__(self, named):
        self.outputs: dict[str, object] = {}
        self.inputs: dict[str, object] = {}  # the positional arguments, as numpy, structure kept
        self.classes: dict[str, str] = {}
        self.order: list[str] = []
        self.handles = []
        for path, sub in named:
            self.classes[path] = type(sub).__name__
            self.handles.append(sub.register_forward_hook(self._hook(path)))

    def _hook(self, path):
        def hook(_module, args, output):
            if path not in self.outputs:
                self.inputs[path] = map_leaves(tuple(args), to_numpy)
                self.outputs[path] = flatten(output)
                self.order.append(path)

        return hook

    def remove(self):
        for handle in self.handles:
            handle.remove()


@dataclass
class CellCheck:
    """One sub-Cell run on the inputs its torch sub-module received."""

    path: str
    torch_class: str
    ms_class: str
    diffs: list[Difference]

    @property
    def ok(self) -> bool:
        return all(d.ok for d in self.diffs)

    @property
    def max_abs(self) -> float:
        return max((d.max_abs for d in self.diffs), default=0.0)


def compare_forward(torch_model, ms_model, arrays, rtol, atol):
    """(output diffs, divergence, per-Cell checks). Outputs that differ
    between two torch runs on the same input are random (sampling in eval
    mode): they are not compared, and every sub-Cell is checked instead on
    the inputs its torch sub-module received."""
    import mindspore
    import torch

    torch_rec = _Recorder(torch_model.named_modules())
    ms_rec = _Recorder(ms_model.cells_and_names())
    try:
        with torch.no_grad():
            expected = torch_model(*_torch_args(arrays))
        actual = ms_model(*_ms_args(arrays))
    finally:
        torch_rec.remove()
        ms_rec.remove()
    with torch.no_grad():
        again = torch_model(*_torch_args(arrays))
    random = {d.name for d in compare(expected, again, 0.0, 0.0) if not d.ok}
    diffs = compare(expected, actual, rtol, atol)
    for d in diffs:
        if d.name in random:
            d.ok, d.note = True, "random: differs between two torch runs; checked per Cell"
    checks: list[CellCheck] = []
    divergence = None
    if random or not all(d.ok for d in diffs):
        checks = check_cells(ms_model, torch_rec, rtol, atol)
        if not all(d.ok for d in diffs) or not all(c.ok for c in checks):
            divergence = first_divergence(torch_rec, ms_rec, checks, rtol, atol)
    return diffs, divergence, checks


def check_cells(ms_model, torch_rec: _Recorder, rtol, atol) -> list[CellCheck]:
    """Run each sub-Cell on the inputs its torch sub-module got (in the order
    the torch calls finished) and compare the outputs."""
    import mindspore

    cells = dict(ms_model.cells_and_names())
    checks = []
    for path in torch_rec.order:
        if not path or path not in cells:
            continue
        args = map_leaves(torch_rec.inputs[path], lambda a: mindspore.Tensor(a) if isinstance(a, np.ndarray) else a)
        try:
            output = cells[path](*args)
        except Exception as exc:  # the Cell cannot even run on torch's inputs
            diffs = [Difference("out", "", "", float("inf"), float("inf"), False, f"{type(exc).__name__}: {exc}")]
        else:
            diffs = _compare_leaves(torch_rec.outputs[path], flatten(output), rtol, atol)
        checks.append(CellCheck(path, torch_rec.classes[path], type(cells[path]).__name__, diffs))
    return checks


def first_divergence(torch_rec: _Recorder, ms_rec: _Recorder, checks, rtol, atol) -> Divergence | None:
    """The innermost, earliest sub-Cell that is wrong on its own (given
    torch's inputs); failing that, the first whose output differs in the full
    run (the difference then comes from code between sub-Cells)."""
    for check in checks:
        if not check.ok:
            return Divergence(check.path, check.torch_class, check.ms_class, check.max_abs, True)
    for path in torch_rec.order:
        if path not in ms_rec.outputs:
            continue
        diffs = _compare_leaves(torch_rec.outputs[path], ms_rec.outputs[path], rtol, atol)
        if all(d.ok for d in diffs):
            continue
        worst = max((d.max_abs for d in diffs if not d.ok), default=float("inf"))
        return Divergence(path, torch_rec.classes[path], ms_rec.classes[path], worst, False)
    return None


def _torch_args(arrays):
    import torch

    return map_leaves(tuple(arrays), lambda a: torch.from_numpy(a.copy()))


def _ms_args(arrays):
    import mindspore

    return map_leaves(tuple(arrays), mindspore.Tensor)


def _compare_leaves(left, right, rtol, atol) -> list[Difference]:
    if len(left) != len(right):
        return [Difference("structure", "", "", float("inf"), float("inf"), False, "different number of values")]
    return [compare_leaf(name, a, b, rtol, atol) for (name, a), (_, b) in zip(left, right)]


# --- gradients -----------------------------------------------------------------------------------------


def compare_gradients(torch_model, ms_model, arrays, weights: WeightReport, request: VerifyRequest,
                      random: set[str] = frozenset()):
    """Gradients of sum_i <output_i, R_i> (R_i seeded random, one per float
    output; random outputs left out) w.r.t. every trainable torch parameter
    vs its MindSpore parameter."""
    import mindspore
    import torch

    rng = np.random.RandomState(request.seed + 1)
    torch_model.zero_grad()
    out = torch_model(*_torch_args(arrays))
    leaves = [t for name, t in _tensor_leaves(out) if t.is_floating_point() and name not in random]
    if not leaves:
        raise _Stage("--grad: the model returns no floating-point tensor to reduce")
    projections = [rng.standard_normal(tuple(t.shape)).astype(np.float32) for t in leaves]
    loss = sum((t * torch.from_numpy(r).to(t.dtype)).sum() for t, r in zip(leaves, projections))
    loss.backward()

    trainable = ms_model.trainable_params()

    def reduction(*inputs):
        ms_out = ms_model(*inputs)
        ms_leaves = [t for name, t in _tensor_leaves(ms_out)
                     if mindspore.ops.is_floating_point(t) and name not in random]
        total = 0
        for t, r in zip(ms_leaves, projections):
            total = total + (t * mindspore.Tensor(r).astype(t.dtype)).sum()
        return total

    _, grads = mindspore.value_and_grad(reduction, None, trainable)(*_ms_args(arrays))
    ms_grads = {id(p): g.asnumpy() for p, g in zip(trainable, grads)}
    diffs = []
    for key, param in torch_model.named_parameters():
        if not param.requires_grad:
            continue
        expected = np.zeros(tuple(param.shape), np.float32) if param.grad is None else param.grad.numpy()
        expected = weights.to_mindspore_layout(key, expected)
        name = weights.placed.get(key)
        target = weights.targets.get(key)
        label = f"grad {key}" + (f" -> {name}" if name and name != key else "")
        if target is None or id(target) not in ms_grads:
            why = "no MindSpore parameter" if target is None else f"{name} is not trainable in MindSpore"
            diffs.append(Difference(label, "", "", float("inf"), float("inf"), False, why))
            continue
        diffs.append(compare_leaf(label, expected, ms_grads[id(target)], request.rtol, request.atol))
    return diffs


def _tensor_leaves(value, name="out"):
    """Flatten keeping the framework tensors (for building the reduction)."""
    if isinstance(value, dict):
        return [leaf for k in value for leaf in _tensor_leaves(value[k], f"{name}[{k!r}]")]
    if isinstance(value, (tuple, list)):
        return [leaf for i, v in enumerate(value) for leaf in _tensor_leaves(v, f"{name}[{i}]")]
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return [(name, value)]
    return []


def _short_traceback(exc: BaseException, limit: int = 4) -> str:
    """The last frames in the user's files (not the frameworks' internals):
    where the converted code fails is what the user must fix."""
    frames = traceback.extract_tb(exc.__traceback__)
    own = os.path.dirname(os.path.abspath(__file__))
    user = [f for f in frames if "site-packages" not in f.filename and not f.filename.startswith(own)]
    shown = (user or frames)[-limit:]
    return "".join(traceback.format_list(shown)).rstrip()


def parse_json_arg(text: str | None, kind: type, flag: str):
    if not text:
        return kind()
    value = json.loads(text)
    if not isinstance(value, kind):
        raise ValueError(f"{flag} must be a JSON {kind.__name__}, got {type(value).__name__}")
    return value
