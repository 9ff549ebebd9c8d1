"""Element-by-element comparison of a torch result with a MindSpore result.

Results may be tensors, numbers, None, or tuples/lists/dicts of them (a model
returning ``(loss, logits)`` or ``{"logits": ...}``); both are flattened into
named leaves (``out[0]``, ``out['logits']``) and compared pairwise: shape,
dtype and values. A dtype that differs passes only when a rule declares that
difference (``allowed``: (torch dtype, MindSpore dtype) -> who declares it and
why); the Difference then names the declaration.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Difference:
    name: str
    shape: str
    dtypes: str  # "torch -> MindSpore"
    max_abs: float
    max_rel: float
    ok: bool
    problem: str = ""  # structure, shape, dtype or value-kind mismatch
    note: str = ""  # shown after "ok" (e.g. a declared dtype difference)
    compared: bool = True  # False: the value could not be compared (never counts as a match)

    def verdict(self) -> str:
        if not self.compared:
            return f"NOT COMPARED: {self.problem}"
        if not self.ok:
            return f"MISMATCH {self.problem}"
        return f"ok ({self.note})" if self.note else "ok"


@dataclass(frozen=True)
class Leaf:
    """A tensor of either framework as numpy, with the framework's dtype name
    (``float32``, ``bfloat16``, ``int64``, ``bool``): numpy has no bfloat16."""

    array: np.ndarray
    dtype: str


def dtype_name(dtype) -> str:
    """``torch.int64`` / MindSpore ``Int64`` / numpy ``int64`` -> ``int64``."""
    return str(dtype).removeprefix("torch.").lower()


def to_numpy(value):
    """A tensor of either framework -> numpy; other values unchanged."""
    if hasattr(value, "detach"):
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":
            value = value.float()
        return value.numpy()
    if hasattr(value, "asnumpy"):
        return value.asnumpy()
    return value


def map_leaves(value, fn):
    """``value`` with the same tuple/list/dict structure and ``fn`` applied to each leaf."""
    if isinstance(value, dict):
        return {k: map_leaves(v, fn) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(map_leaves(v, fn) for v in value) if not hasattr(value, "_fields") else tuple(
            map_leaves(v, fn) for v in value)
    return fn(value)


def to_leaf(value):
    """A tensor of either framework (or a numpy array) -> Leaf; other values unchanged."""
    if hasattr(value, "detach") or hasattr(value, "asnumpy"):
        return Leaf(to_numpy(value), dtype_name(value.dtype))
    if isinstance(value, np.ndarray):
        return Leaf(value, value.dtype.name)
    return value


def flatten(value, name: str = "out") -> list[tuple[str, object]]:
    if isinstance(value, dict):
        leaves = []
        for key in value:
            leaves += flatten(value[key], f"{name}[{key!r}]")
        return leaves
    if isinstance(value, (tuple, list)):
        leaves = []
        for i, item in enumerate(value):
            leaves += flatten(item, f"{name}[{i}]")
        return leaves
    if hasattr(value, "_fields"):  # namedtuple-like
        return flatten(tuple(value), name)
    return [(name, to_leaf(value))]


DtypeAllowances = dict  # (torch dtype, MindSpore dtype) -> who declares the difference and why (any .get() mapping)


def compare(torch_result, ms_result, rtol: float, atol: float, name: str = "out",
            allowed: DtypeAllowances | None = None) -> list[Difference]:
    left = flatten(torch_result, name)
    right = dict(flatten(ms_result, name))
    diffs = [compare_leaf(leaf, value, right.pop(leaf, _MISSING), rtol, atol, allowed) for leaf, value in left]
    for leaf in right:
        diffs.append(Difference(leaf, "", "", float("inf"), float("inf"), False, "only in the MindSpore result"))
    return diffs


class _Missing:
    pass


_MISSING = _Missing()


def compare_leaf(name: str, expected, actual, rtol: float, atol: float,
                 allowed: DtypeAllowances | None = None) -> Difference:
    if actual is _MISSING:
        return Difference(name, "", "", float("inf"), float("inf"), False, "missing from the MindSpore result")
    expected, actual = to_leaf(expected), to_leaf(actual)
    if not isinstance(expected, Leaf) or not isinstance(actual, Leaf):
        if isinstance(expected, Leaf) != isinstance(actual, Leaf):
            expected, actual = _as_arrays(*(v.array if isinstance(v, Leaf) else v for v in (expected, actual)))
            if expected is None:
                return Difference(name, "", "", float("inf"), float("inf"), False, "tensor vs non-tensor")
            return _compare_arrays(name, expected, actual, rtol, atol, "")
        same = _plain_equal(expected, actual, rtol, atol)
        return Difference(name, "", type(expected).__name__, 0.0 if same else float("inf"), 0.0, same,
                          "" if same else f"{expected!r} != {actual!r}")
    dtype_note = ""
    if expected.dtype != actual.dtype:
        declared = (allowed or {}).get((expected.dtype, actual.dtype))
        if declared is None:
            diff = _compare_arrays(name, expected.array, actual.array, rtol, atol, "")
            diff.dtypes, diff.ok = f"{expected.dtype} -> {actual.dtype}", False
            diff.problem = f"dtype {expected.dtype} -> {actual.dtype} (no rule declares it)" + (
                f"; {diff.problem}" if diff.problem else "")
            return diff
        dtype_note = f"dtype declared by {declared}"
    diff = _compare_arrays(name, expected.array, actual.array, rtol, atol, dtype_note)
    diff.dtypes = f"{expected.dtype} -> {actual.dtype}"
    return diff


def _compare_arrays(name, expected: np.ndarray, actual: np.ndarray, rtol, atol, note) -> Difference:
    dtypes = f"{expected.dtype} -> {actual.dtype}"
    if expected.shape != actual.shape:
        return Difference(name, f"{expected.shape} vs {actual.shape}", dtypes, float("inf"), float("inf"), False,
                          "shape differs")
    a = expected.astype(np.float64)
    b = actual.astype(np.float64)
    if a.size == 0:
        return Difference(name, str(expected.shape), dtypes, 0.0, 0.0, True, note=note)
    diff = np.abs(a - b)
    nan_mismatch = np.isnan(a) != np.isnan(b)
    diff = np.where(np.isnan(a) & np.isnan(b), 0.0, diff)
    max_abs = float(np.nanmax(diff)) if not nan_mismatch.any() else float("inf")
    # relative difference where the expected value is not ~0 (atol covers those)
    scale = np.abs(a)
    significant = scale > atol
    max_rel = float(np.max(diff[significant] / scale[significant])) if significant.any() else 0.0
    ok = bool(not nan_mismatch.any() and np.all(diff <= atol + rtol * np.abs(a)))
    return Difference(name, str(tuple(expected.shape)), dtypes, max_abs, max_rel, ok, "" if ok else "values differ",
                      note=note)


def _as_arrays(expected, actual):
    """A 0-d tensor against a Python number is fine."""
    try:
        return np.asarray(expected, dtype=np.float64), np.asarray(actual, dtype=np.float64)
    except (TypeError, ValueError):
        return None, None


def _plain_equal(expected, actual, rtol, atol) -> bool:
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return abs(expected - actual) <= atol + rtol * abs(expected)
    return expected == actual


def format_table(diffs: list[Difference]) -> list[str]:
    headers = ("output", "shape", "dtype", "max abs", "max rel", "")
    rows = [(d.name, d.shape, d.dtypes, _num(d.max_abs), _num(d.max_rel), d.verdict()) for d in diffs]
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]
    return ["  ".join(str(cell).ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [headers, *rows]]


def _num(x: float) -> str:
    return "inf" if x == float("inf") else f"{x:.3g}"
