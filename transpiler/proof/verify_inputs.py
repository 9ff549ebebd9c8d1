"""``--input`` specs for ``ms-migrate verify`` and the seeded values they make.

Syntax: ``SHAPE[:DTYPE[:LOW-HIGH]]``

    4,3,32,32            float32 from a standard normal
    4,3,32,32:float64    float64 from a standard normal
    4,3:float32:-1-1     float32 uniform in [-1, 1)
    2,16:int64:0-100     integer ids uniform in [0, 100) (high excluded, like torch.randint)
    8:int64              integers in [0, 10)
    8:bool               random booleans
    scalar:float32       a 0-d tensor
    2,2,8+2,2,8          a tuple of two tensors as one argument (e.g. an LSTM's (h0, c0))

The same numpy array is handed to both frameworks, so both see identical values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

_RANGE = re.compile(r"^(-?\d+(?:\.\d*)?(?:e-?\d+)?)-(-?\d+(?:\.\d*)?(?:e-?\d+)?)$")
_FLOATS = {"float16", "float32", "float64"}
_INTS = {"int8", "int16", "int32", "int64", "uint8"}


class InputSpecError(ValueError):
    pass


@dataclass(frozen=True)
class InputSpec:
    shape: tuple[int, ...]
    dtype: str = "float32"
    low: float | None = None
    high: float | None = None

    def make(self, rng: np.random.RandomState) -> np.ndarray:
        if self.dtype == "bool":
            return rng.randint(0, 2, self.shape).astype(bool)
        if self.dtype in _INTS:
            low = 0 if self.low is None else int(self.low)
            high = 10 if self.high is None else int(self.high)
            return rng.randint(low, high, self.shape).astype(self.dtype)
        if self.low is None:
            return rng.standard_normal(self.shape).astype(self.dtype)
        return rng.uniform(self.low, self.high, self.shape).astype(self.dtype)

    def __str__(self) -> str:
        text = ",".join(map(str, self.shape)) or "scalar"
        text += f":{self.dtype}"
        if self.low is not None:
            text += f":{self.low:g}-{self.high:g}"
        return text


@dataclass(frozen=True)
class TupleSpec:
    """One argument that is a tuple of tensors: ``SPEC+SPEC[+...]``."""

    items: tuple[InputSpec, ...]

    def make(self, rng: np.random.RandomState) -> tuple:
        return tuple(item.make(rng) for item in self.items)

    def __str__(self) -> str:
        return "+".join(map(str, self.items))


def parse_input(text: str) -> InputSpec | TupleSpec:
    if "+" in text:
        return TupleSpec(tuple(_parse_one(part) for part in text.split("+")))
    return _parse_one(text)


def _parse_one(text: str) -> InputSpec:
    parts = text.split(":")
    if len(parts) > 3 or not parts[0]:
        raise InputSpecError(f"bad --input {text!r}: expected SHAPE[:DTYPE[:LOW-HIGH]], e.g. 2,16:int64:0-100")
    shape = _parse_shape(parts[0], text)
    dtype = parts[1] if len(parts) > 1 and parts[1] else "float32"
    if dtype not in _FLOATS | _INTS | {"bool"}:
        raise InputSpecError(f"bad dtype {dtype!r} in --input {text!r}: use one of {', '.join(sorted(_FLOATS | _INTS))}, bool")
    low = high = None
    if len(parts) == 3:
        match = _RANGE.match(parts[2])
        if not match:
            raise InputSpecError(f"bad range {parts[2]!r} in --input {text!r}: expected LOW-HIGH, e.g. 0-100 or -1-1")
        low, high = float(match.group(1)), float(match.group(2))
        if not low < high:
            raise InputSpecError(f"empty range {parts[2]!r} in --input {text!r}")
    return InputSpec(shape, dtype, low, high)


def _parse_shape(text: str, whole: str) -> tuple[int, ...]:
    if text in ("scalar", "()"):
        return ()
    try:
        shape = tuple(int(s) for s in text.split(","))
    except ValueError:
        raise InputSpecError(f"bad shape {text!r} in --input {whole!r}: expected comma-separated sizes") from None
    if any(s < 0 for s in shape):
        raise InputSpecError(f"negative size in --input {whole!r}")
    return shape


def make_inputs(specs, seed: int) -> list:
    rng = np.random.RandomState(seed)
    return [spec.make(rng) for spec in specs]
