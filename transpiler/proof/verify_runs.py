"""The runs behind ``verify`` (``transpiler.proof.verify``): forward, the
second torch run that finds what replay does not cover, per-sub-Cell checks,
and gradients.

Every run goes through the random tape: torch's first run records its draws,
the MindSpore runs replay them, and torch's later runs (reseeded) replay them
to torch. A sub-Cell checked on its own replays the draws its torch
sub-module made, and only those.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from transpiler.proof.compare import Difference, Leaf, compare, compare_leaf, dtype_name, flatten, map_leaves, to_leaf, to_numpy
from transpiler.proof.replay import ReplayMismatch
from transpiler.proof.verify_float64 import accept_float32_rounding, as_float64, float64_copy

_UNSTABLE = "changes between two torch runs with replayed random draws"
ZERO_GRAD = "zero in torch"  # the note of a gradient that is zero everywhere: its comparison proves little


class StageError(Exception):
    """A problem of the request (not of the conversion), reported with the stage it happened in."""


@dataclass
class Divergence:
    path: str
    torch_class: str
    ms_class: str
    max_abs: float
    inputs_match: bool  # True: the Cell is wrong on its own inputs; False: its inputs already differ
    parent: str = ""  # inputs differ: the Cell whose construct computes them ("" for the model)

    def describe(self) -> str:
        where = repr(self.path) if self.path else "the model itself"
        text = f"first diverging Cell: {where} ({self.torch_class} -> {self.ms_class}), max abs diff {self.max_abs:.3g}"
        if self.inputs_match:
            return text + "; given the same inputs as its torch sub-module, its output differs: fix this Cell"
        if not self.path:
            return text + "; every sub-Cell matches on the same inputs, so the difference comes from the model's own code"
        parent = self.parent
        return text + (
            "; every sub-Cell matches on the same inputs, so the difference comes from code between "
            f"sub-Cells (in the construct of {repr(parent) if parent else 'the model'} or a caller) before this Cell runs"
        )


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


class _Recorder:
    """Forward hooks on every sub-module (torch) or sub-Cell (MindSpore):
    path -> inputs and output of the first call, plus completion order and,
    with a recording tape, the span of random draws the call made."""

    def __init__(self, named, tape=None):
        self.outputs: dict[str, object] = {}
        self.inputs: dict[str, object] = {}  # the positional arguments, as numpy, structure kept
        self.classes: dict[str, str] = {}
        self.order: list[str] = []
        self.spans: dict[str, tuple[int, int]] = {}
        self._starts: dict[str, int] = {}
        self.tape = tape
        self.handles = []
        for path, sub in named:
            self.classes[path] = type(sub).__name__
            if tape is not None:
                self.handles.append(sub.register_forward_pre_hook(self._pre_hook(path)))
            self.handles.append(sub.register_forward_hook(self._hook(path)))

    def _pre_hook(self, path):
        def hook(_module, _args):
            self._starts.setdefault(path, len(self.tape.draws))

        return hook

    def _hook(self, path):
        def hook(_module, args, output):
            if path not in self.outputs:
                self.inputs[path] = map_leaves(tuple(args), to_numpy)
                self.outputs[path] = flatten(output)
                self.order.append(path)
                if self.tape is not None:
                    self.spans[path] = (self._starts[path], len(self.tape.draws))

        return hook

    def remove(self):
        for handle in self.handles:
            handle.remove()
        self.handles = []


class Run:
    """Both models on the same inputs, through one random tape."""

    def __init__(self, torch_model, ms_model, arrays, request, tape, allowed, build_torch=None):
        self.torch_model = torch_model
        self.build_torch = build_torch  # makes another torch model (for the float64 reference), or None
        self.ms_model = ms_model
        self.arrays = arrays
        self.request = request
        self.tape = tape
        self.allowed = allowed

    @property
    def tolerances(self):
        return self.request.rtol, self.request.atol

    # -- forward ----------------------------------------------------------------------------------------
    def forward(self):
        """(output diffs, divergence, per-Cell checks, replay problem or None)."""
        import torch

        torch_rec = _Recorder(self.torch_model.named_modules(), self.tape)
        ms_rec = _Recorder(self.ms_model.cells_and_names())
        problem = None
        try:
            with torch.no_grad(), self.tape.recording():
                expected = self.torch_model(*_torch_args(self.arrays))
            torch_rec.remove()
            actual = self._mindspore(lambda: self.ms_model(*_ms_args(self.arrays)))
        except ReplayMismatch as exc:
            problem = str(exc)
        finally:
            torch_rec.remove()
            ms_rec.remove()
        unstable = self._unstable(expected)
        diffs = [] if problem else compare(expected, actual, *self.tolerances, allowed=self.allowed)
        for d in diffs:
            if d.name in unstable:
                self.not_compared(d)
        checks, divergence = [], None
        if problem or not all(d.ok for d in diffs if d.compared):
            checks = self.check_cells(torch_rec)
            divergence = first_divergence(torch_rec, ms_rec, checks, *self.tolerances, self.allowed)
        return diffs, divergence, checks, problem

    def _mindspore(self, call, start=0, end=None):
        """Run MindSpore code replaying draws ``start:end``; a mismatch that
        MindSpore wrapped in its own exception is still reported as one."""
        try:
            with self.tape.replaying_mindspore(start, end):
                return call()
        except Exception as exc:
            failure, self.tape.failure = self.tape.failure, None
            if failure is not None and not isinstance(exc, ReplayMismatch):
                raise failure from None
            raise

    def _unstable(self, expected) -> set[str]:
        """Outputs that change when torch runs again on the replayed draws
        with another seed: randomness the replay does not cover."""
        import torch

        torch.manual_seed(self.request.seed + 1)
        with torch.no_grad(), self.tape.replaying_torch():
            again = self.torch_model(*_torch_args(self.arrays))
        return {d.name for d in compare(expected, again, 0.0, 0.0) if not d.ok}

    def not_compared(self, diff: Difference) -> None:
        """The values of ``diff`` cannot be compared; a wrong dtype, shape or
        structure is wrong whatever the values, so it stays a mismatch."""
        why = _UNSTABLE
        if self.tape.unreplayable:
            why += f" (torch draws with {', '.join(self.tape.unreplayable)}, which cannot be replayed)"
        elif self.tape.torch_divergence:
            why += f" ({self.tape.torch_divergence})"
        if not diff.ok and diff.problem != "values differ":
            diff.problem = f"{diff.problem.removesuffix('; values differ')}; values not compared: {why}"
            return
        diff.compared, diff.ok, diff.problem, diff.note = False, False, why, ""

    # -- sub-Cells ---------------------------------------------------------------------------------------
    def check_cells(self, torch_rec: _Recorder) -> list[CellCheck]:
        """Run each sub-Cell on the inputs (and random draws) its torch
        sub-module got, in the order the torch calls finished."""
        import mindspore

        cells = dict(self.ms_model.cells_and_names())
        checks = []
        for path in torch_rec.order:
            if not path or path not in cells:
                continue
            args = map_leaves(torch_rec.inputs[path], lambda a: mindspore.Tensor(a) if isinstance(a, np.ndarray) else a)
            start, end = torch_rec.spans.get(path, (0, 0))
            try:
                output = self._mindspore(lambda: cells[path](*args), start, end)
            except Exception as exc:  # the Cell cannot even run on torch's inputs, or asks for other draws
                what = "random draws: " if isinstance(exc, ReplayMismatch) else f"{type(exc).__name__}: "
                diffs = [Difference("out", "", "", float("inf"), float("inf"), False, f"{what}{exc}")]
            else:
                diffs = _compare_leaves(torch_rec.outputs[path], flatten(output), *self.tolerances, self.allowed)
            checks.append(CellCheck(path, torch_rec.classes[path], type(cells[path]).__name__, diffs))
        return checks

    # -- gradients ---------------------------------------------------------------------------------------
    def gradients(self, weights, skipped: set[str]) -> list[Difference]:
        """Gradients of sum_i <output_i, R_i> (R_i seeded random, one per
        compared float output) w.r.t. every trainable torch parameter vs its
        MindSpore parameter. torch computes them twice (another seed, the
        same replayed draws): a gradient that changes is not compared."""
        import mindspore

        rng = np.random.RandomState(self.request.seed + 1)
        expected, projections = self._torch_gradients(skipped, rng, self.request.seed)
        again, _ = self._torch_gradients(skipped, None, self.request.seed + 1, projections)
        trainable = self.ms_model.trainable_params()

        def reduction(*inputs):
            leaves = [t for name, t in _tensor_leaves(self.ms_model(*inputs))
                      if mindspore.ops.is_floating_point(t) and name not in skipped]
            total = 0
            for t, r in zip(leaves, projections):
                total = total + (t * mindspore.Tensor(r).astype(t.dtype)).sum()
            return total

        grad_fn = mindspore.value_and_grad(reduction, None, trainable)
        _, grads = self._mindspore(lambda: grad_fn(*_ms_args(self.arrays)))
        ms_grads = {id(p): to_leaf(g) for p, g in zip(trainable, grads)}
        diffs, differing = [], {}
        for key, leaf in expected.items():
            name = weights.placed.get(key)
            target = weights.targets.get(key)
            label = f"grad {key}" + (f" -> {name}" if name and name != key else "")
            if target is None or id(target) not in ms_grads:
                why = "no MindSpore parameter" if target is None else f"{name} is not trainable in MindSpore"
                diffs.append(Difference(label, "", "", float("inf"), float("inf"), False, why))
                continue
            leaf = Leaf(weights.to_mindspore_layout(key, leaf.array), leaf.dtype)
            diff = compare_leaf(label, leaf, ms_grads[id(target)], *self.tolerances, self.allowed)
            if isinstance(leaf.array, np.ndarray) and not leaf.array.any():
                diff.note = "; ".join(filter(None, [diff.note, ZERO_GRAD]))
            if not compare_leaf(label, expected[key], again[key], 0.0, 0.0).ok:
                self.not_compared(diff)
            elif diff.problem == "values differ":
                differing[key] = (diff, leaf.array, ms_grads[id(target)].array)
            diffs.append(diff)
        if differing:
            float64 = self._float64_gradients(skipped, projections)
            if float64 is not None:
                layout = {key: weights.to_mindspore_layout(key, grad) for key, grad in float64.items()}
                accept_float32_rounding(differing, layout, *self.tolerances)
        return diffs

    def _float64_gradients(self, skipped, projections) -> dict | None:
        """torch key -> torch's gradient computed in float64; None when the
        model cannot run in float64 (code that fixes float32, ...)."""
        if self.build_torch is None:
            return None
        try:
            model = float64_copy(self.build_torch, self.torch_model, self.request.seed)
            grads, _ = self._torch_gradients(skipped, None, self.request.seed, projections, model)
        except Exception:  # noqa: BLE001 - no float64 reference: the mismatch stands
            return None
        return {key: leaf.array for key, leaf in grads.items()}

    def _torch_gradients(self, skipped, rng, seed, projections=None, model=None):
        """(torch key -> gradient Leaf, the projections used); ``model``: a
        float64 copy instead of the torch model (float inputs widened)."""
        import torch

        arrays = self.arrays if model is None else map_leaves(tuple(self.arrays), as_float64)
        model = self.torch_model if model is None else model
        torch.manual_seed(seed)
        model.zero_grad()
        with self.tape.replaying_torch():
            out = model(*_torch_args(arrays))
        leaves = [t for name, t in _tensor_leaves(out) if t.is_floating_point() and name not in skipped]
        if not leaves:
            raise StageError("--grad: the model returns no compared floating-point tensor to reduce")
        if projections is None:
            projections = [rng.standard_normal(tuple(t.shape)).astype(np.float32) for t in leaves]
        loss = sum((t * torch.from_numpy(r).to(t.dtype)).sum() for t, r in zip(leaves, projections))
        loss.backward()
        grads = {}
        for key, param in model.named_parameters():
            if param.requires_grad:
                grads[key] = (Leaf(np.zeros(tuple(param.shape), np.float32), dtype_name(param.dtype))
                              if param.grad is None else to_leaf(param.grad))
        return grads, projections


def first_divergence(torch_rec: _Recorder, ms_rec: _Recorder, checks, rtol, atol, allowed=None) -> Divergence | None:
    """The innermost, earliest sub-Cell that is wrong on its own (given
    torch's inputs); failing that, the first whose output differs in the full
    run (the difference then comes from code between sub-Cells)."""
    for check in checks:
        if not check.ok:
            return Divergence(check.path, check.torch_class, check.ms_class, check.max_abs, True)
    for path in torch_rec.order:
        if path not in ms_rec.outputs:
            continue
        diffs = _compare_leaves(torch_rec.outputs[path], ms_rec.outputs[path], rtol, atol, allowed)
        if all(d.ok for d in diffs):
            continue
        worst = max((d.max_abs for d in diffs if not d.ok), default=float("inf"))
        return Divergence(path, torch_rec.classes[path], ms_rec.classes[path], worst, False, _origin(torch_rec, path))
    return None


def _origin(torch_rec: _Recorder, path: str) -> str:
    """The Cell whose own code computes ``path``'s inputs: the parent, or
    further up while a parent passes its inputs straight to its first child."""
    parent = path.rpartition(".")[0]
    while parent and parent in torch_rec.inputs and _same(torch_rec.inputs[parent], torch_rec.inputs[path]):
        path, parent = parent, parent.rpartition(".")[0]
    return parent


def _same(left, right) -> bool:
    a, b = flatten(left), flatten(right)
    return len(a) == len(b) and all(
        type(x) is type(y) and (np.array_equal(x.array, y.array) if isinstance(x, Leaf) else x == y)
        for (_, x), (_, y) in zip(a, b))


def _torch_args(arrays):
    import torch

    return map_leaves(tuple(arrays), lambda a: torch.from_numpy(a.copy()))


def _ms_args(arrays):
    import mindspore

    return map_leaves(tuple(arrays), mindspore.Tensor)


def _compare_leaves(left, right, rtol, atol, allowed=None) -> list[Difference]:
    if len(left) != len(right):
        return [Difference("structure", "", "", float("inf"), float("inf"), False, "different number of values")]
    return [compare_leaf(name, a, b, rtol, atol, allowed) for (name, a), (_, b) in zip(left, right)]


def _tensor_leaves(value, name="out"):
    """Flatten keeping the framework tensors (for building the reduction)."""
    if isinstance(value, dict):
        return [leaf for k in value for leaf in _tensor_leaves(value[k], f"{name}[{k!r}]")]
    if isinstance(value, (tuple, list)):
        return [leaf for i, v in enumerate(value) for leaf in _tensor_leaves(v, f"{name}[{i}]")]
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return [(name, value)]
    return []
