"""The input language of execution cases.

An input spec is a tiny expression parsed with ``ast`` (never evaluated):
a call of one of the generators below with literal arguments, or a plain
literal (a Python value given to both frameworks as is).

    randn(2, 3)                     standard normal, float32
    rand(2, 3)                      uniform [0, 1), float32
    uniform(0.5, 2.0, (2, 3))       uniform [low, high), float32
    randint(0, 5, (4,))             integers in [low, high), int64
    arange(6)  arange(1, 7)         like numpy.arange (int64 unless a float is given)
    tensor([[1., 2.], [3., 4.]])    literal data (floats -> float32, ints -> int64)
    bool((2, 3))                    random booleans
    zeros(2, 3)  ones(2, 3)  full((2, 3), 7.)
    perm(5)                         a random permutation of range(5), int64
    3   2.5   (2, 3)   "mean"       plain Python values

``nan`` and ``inf`` may appear in literal data: ``tensor([1.0, nan, -inf])``.

Every tensor generator takes ``dtype="float64"`` etc. Shapes may be written as
varargs (``randn(2, 3)``) or as one tuple (``randn((2, 3))``). The numbers come
from a numpy Generator seeded per case, so both frameworks (and every rerun)
see the same values.
"""

from __future__ import annotations

import ast
from typing import Callable

import numpy as np

_FLOAT = "float32"
_INT = "int64"


def _shape(args: tuple) -> tuple[int, ...]:
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return tuple(args)


def _randn(rng, *shape, dtype=_FLOAT):
    return rng.standard_normal(_shape(shape)).astype(dtype)


def _rand(rng, *shape, dtype=_FLOAT):
    return rng.random(_shape(shape)).astype(dtype)


def _uniform(rng, low, high, shape, dtype=_FLOAT):
    return rng.uniform(low, high, _shape((shape,))).astype(dtype)


def _randint(rng, low, high, shape, dtype=_INT):
    return rng.integers(low, high, _shape((shape,))).astype(dtype)


def _arange(rng, *args, dtype=None):
    if dtype is None:
        dtype = _FLOAT if any(isinstance(a, float) for a in args) else _INT
    return np.arange(*args).astype(dtype)


def _tensor(rng, data, dtype=None):
    array = np.array(data)
    if dtype is None:
        kind = array.dtype.kind
        dtype = {"f": _FLOAT, "i": _INT, "b": "bool"}.get(kind, array.dtype.name)
    return array.astype(dtype)


def _bool(rng, *shape):
    return rng.random(_shape(shape)) < 0.5


def _zeros(rng, *shape, dtype=_FLOAT):
    return np.zeros(_shape(shape), dtype=dtype)


def _ones(rng, *shape, dtype=_FLOAT):
    return np.ones(_shape(shape), dtype=dtype)


def _full(rng, shape, value, dtype=None):
    if dtype is None:
        dtype = _FLOAT if isinstance(value, float) else ("bool" if isinstance(value, bool) else _INT)
    return np.full(_shape((shape,)), value, dtype=dtype)


def _perm(rng, n, dtype=_INT):
    return rng.permutation(n).astype(dtype)


GENERATORS: dict[str, Callable[..., np.ndarray]] = {
    "randn": _randn,
    "rand": _rand,
    "uniform": _uniform,
    "randint": _randint,
    "arange": _arange,
    "tensor": _tensor,
    "bool": _bool,
    "zeros": _zeros,
    "ones": _ones,
    "full": _full,
    "perm": _perm,
}


class InputSpecError(ValueError):
    pass


class _SpecialFloats(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name):
        if node.id in ("nan", "inf"):
            return ast.copy_location(ast.Constant(float(node.id)), node)
        return node


def parse_spec(spec: str) -> tuple[str | None, tuple, dict]:
    """(generator name or None for a plain value, args, kwargs)."""
    try:
        node = _SpecialFloats().visit(ast.parse(spec, mode="eval")).body
    except SyntaxError as error:
        raise InputSpecError(f"input spec {spec!r} does not parse: {error}") from None
    if not isinstance(node, ast.Call):
        try:
            return None, (ast.literal_eval(node),), {}
        except ValueError:
            raise InputSpecError(f"input spec {spec!r} is neither a literal nor a generator call") from None
    if not isinstance(node.func, ast.Name) or node.func.id not in GENERATORS:
        raise InputSpecError(f"input spec {spec!r}: unknown generator; known: {', '.join(sorted(GENERATORS))}")
    try:
        args = tuple(ast.literal_eval(a) for a in node.args)
        kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
    except ValueError:
        raise InputSpecError(f"input spec {spec!r}: generator arguments must be literals") from None
    return node.func.id, args, kwargs


def build(spec: str, rng: np.random.Generator):
    """A numpy array (for generator specs) or a Python value."""
    name, args, kwargs = parse_spec(spec)
    if name is None:
        return args[0]
    return GENERATORS[name](rng, *args, **kwargs)


def build_all(specs: dict[str, str], seed: int) -> dict[str, object]:
    rng = np.random.default_rng(seed)
    return {name: build(spec, rng) for name, spec in specs.items()}
