"""Framework-free result values and their comparison.

The worker turns each framework's result into a ``Value`` tree (numpy arrays,
Python scalars), so the comparison below needs neither torch nor MindSpore and
runs in the test process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

COMPARE_MODES = ("values", "structural", "shape")
# "structural" compares like "values": the snippet itself reduced the random
# result to what both frameworks must agree on (rewrite_rules.spec.Example).
_AS_VALUES = {"structural": "values"}


@dataclass(frozen=True)
class Value:
    kind: str  # "tensor", "sequence", "scalar", "dtype", "none", "other"
    dtype: str = ""  # tensor dtype name ("float32") or scalar type name ("float")
    shape: tuple[int, ...] = ()
    data: object = None  # ndarray, list[Value], scalar, or repr text

    def describe(self) -> str:
        if self.kind == "tensor":
            return f"tensor {self.dtype}{list(self.shape)}"
        if self.kind == "sequence":
            return f"sequence of {len(self.data)}"
        if self.kind == "scalar":
            return f"{self.dtype} {self.data!r}"
        if self.kind == "dtype":
            return f"dtype {self.dtype}"
        return self.kind if self.kind == "none" else f"{self.kind} {self.data}"


def tensor_value(dtype: str, array: np.ndarray) -> Value:
    return Value("tensor", dtype, tuple(array.shape), array)


def python_value(value) -> Value | None:
    """Values that need no framework: None, scalars, sequences thereof, arrays."""
    if value is None:
        return Value("none")
    if isinstance(value, (bool, np.bool_)):
        return Value("scalar", "bool", (), bool(value))
    if isinstance(value, (int, np.integer)):
        return Value("scalar", "int", (), int(value))
    if isinstance(value, (float, np.floating)):
        return Value("scalar", "float", (), float(value))
    if isinstance(value, complex):
        return Value("scalar", "complex", (), value)
    if isinstance(value, str):
        return Value("scalar", "str", (), value)
    if isinstance(value, np.ndarray):
        return Value("tensor", f"ndarray {value.dtype.name}", value.shape, value)
    return None


def compare(
    expected: Value,
    actual: Value,
    *,
    rtol: float,
    atol: float,
    dtype_map: Mapping[str, str],
    mode: str = "values",
    path: str = "result",
) -> list[str]:
    """Differences between the torch value and the MindSpore value (empty if they agree)."""
    mode = _AS_VALUES.get(mode, mode)
    if expected.kind != actual.kind:
        return [f"{path}: torch gives {expected.describe()}, MindSpore gives {actual.describe()}"]
    if expected.kind == "sequence":
        if len(expected.data) != len(actual.data):
            return [f"{path}: torch gives {len(expected.data)} items, MindSpore {len(actual.data)}"]
        problems: list[str] = []
        for i, (e, a) in enumerate(zip(expected.data, actual.data)):
            problems += compare(e, a, rtol=rtol, atol=atol, dtype_map=dtype_map, mode=mode, path=f"{path}[{i}]")
        return problems
    if expected.kind == "tensor":
        return _compare_tensors(expected, actual, rtol, atol, dtype_map, mode, path)
    if expected.kind == "scalar":
        if expected.dtype != actual.dtype:
            return [f"{path}: torch gives {expected.describe()}, MindSpore gives {actual.describe()}"]
        if mode == "values" and not _scalars_close(expected.data, actual.data, rtol, atol):
            return [f"{path}: torch gives {expected.data!r}, MindSpore gives {actual.data!r}"]
        return []
    if expected.kind == "dtype":
        if expected.dtype != actual.dtype and dtype_map.get(expected.dtype) != actual.dtype:
            return [f"{path}: torch dtype {expected.dtype}, MindSpore dtype {actual.dtype}"]
        return []
    if expected.kind == "none":
        return []
    return [f"{path}: cannot compare {expected.describe()} with {actual.describe()}"]


def _scalars_close(e, a, rtol, atol) -> bool:
    if isinstance(e, float) and isinstance(a, float):
        return bool(np.isclose(e, a, rtol=rtol, atol=atol, equal_nan=True))
    return e == a


def _compare_tensors(expected, actual, rtol, atol, dtype_map, mode, path) -> list[str]:
    problems = []
    if expected.dtype != actual.dtype and dtype_map.get(expected.dtype) != actual.dtype:
        problems.append(f"{path}: dtype torch {expected.dtype}, MindSpore {actual.dtype}")
    if tuple(expected.shape) != tuple(actual.shape):
        problems.append(f"{path}: shape torch {list(expected.shape)}, MindSpore {list(actual.shape)}")
        return problems
    if mode != "values":
        return problems
    e, a = np.asarray(expected.data), np.asarray(actual.data)
    if e.dtype.kind in "fc" or a.dtype.kind in "fc":
        e64, a64 = e.astype(np.complex128 if e.dtype.kind == "c" else np.float64), a.astype(
            np.complex128 if a.dtype.kind == "c" else np.float64
        )
        close = np.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=True)
    else:
        close = e == a
    if not np.all(close):
        bad = np.argwhere(~np.asarray(close))
        first = tuple(int(i) for i in bad[0]) if bad.size and e.ndim else ()
        detail = f"{int((~np.asarray(close)).sum())} of {e.size} elements differ"
        if e.dtype.kind in "fiu" and a.dtype.kind in "fiu":
            diff = np.abs(e.astype(np.float64) - a.astype(np.float64))
            detail += f", max abs diff {np.nanmax(diff):.3g}"
        detail += f"; first at {list(first)}: torch {e[first]!r}, MindSpore {a[first]!r} (rtol={rtol}, atol={atol})"
        problems.append(f"{path}: values differ: {detail}")
    return problems
