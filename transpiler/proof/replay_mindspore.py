"""MindSpore's side of the random replay (``transpiler.proof.replay``).

MindSpore's random functions all sample through a few primitives and the
initializers' samplers; those are wrapped. With no tape replaying, a wrapper
only calls the original. While a tape replays to MindSpore, the original
still runs (its output gives the dtype and shape, and is checked against how
the replay models the op), then its values are replaced by the next torch
draw put through the op's own parameters:

  StandardNormal(shape)           z                     ops.randn, randn_like, normal, standard_normal
  UniformReal(shape)              u                     ops.rand, rand_like, uniform, rrelu, gumbel_softmax,
                                                        multinomial without replacement
  UniformInt(shape, low, high)    low + floor(u * (high - low))   ops.randint, randint_like, uniform(int32)
  Multinomial(p, k)               inverse CDF of u under p        ops.multinomial with replacement
  RandpermV2(n)                   the order of n uniforms          ops.randperm
  Dropout(keep_prob)(x)           x * (u >= 1 - keep_prob) / keep_prob    nn.Dropout, ops.dropout
  Dropout2D/3D(keep_prob)(x)      the same per (N, C) channel      nn.Dropout1d/2d/3d, ops.dropout1d/2d/3d
  initializer samplers            mean + sigma * z, a + (b - a) * u, truncated normal by inverse CDF,
                                  Sparse's row permutations        mindspore.common.initializer
"""

from __future__ import annotations

import functools
import sys

import numpy as np

from transpiler.proof import replay
from transpiler.proof.replay import MINDSPORE_REPLAY, ReplayModelError

_ORIGINAL = "_ms_migrate_replay_original"


def _tensor_like(real, values: np.ndarray):
    """``values`` as a MindSpore tensor of ``real``'s dtype and shape."""
    import mindspore

    kind = np.int64 if np.issubdtype(values.dtype, np.integer) or values.dtype == bool else np.float64
    return mindspore.Tensor(values.astype(kind).reshape(real.shape)).astype(real.dtype)


def _run(original):
    with replay.busy():
        return original()


def _require(condition: bool, text: str) -> None:
    if not condition:
        raise ReplayModelError(f"MindSpore {text}: the replay's model of this op is wrong, its draws cannot be trusted")


def _scalar(value) -> float:
    return float(value.asnumpy()) if hasattr(value, "asnumpy") else float(value)


# --- primitives ------------------------------------------------------------------------------------


def _standard_normal(tape, prim, original, args):
    real = _run(original)
    return _tensor_like(real, tape.take("StandardNormal", "normal", real.shape))


def _uniform_real(tape, prim, original, args):
    real = _run(original)
    return _tensor_like(real, tape.take("UniformReal", "uniform", real.shape))


def _uniform_int(tape, prim, original, args):
    real = _run(original)
    low, high = int(_scalar(args[1])), int(_scalar(args[2]))
    sample = real.asnumpy()
    _require(sample.size == 0 or (sample.min() >= low and sample.max() < high), f"UniformInt gave values outside [{low}, {high})")
    u = tape.take("UniformInt", "uniform", real.shape)
    return _tensor_like(real, np.clip(low + np.floor(u * (high - low)), low, high - 1).astype(np.int64))


def _multinomial(tape, prim, original, args):
    real = _run(original)
    weights = np.atleast_2d(args[0].asnumpy().astype(np.float64))
    cdf = np.cumsum(weights / weights.sum(axis=1, keepdims=True), axis=1)
    rows, n = weights.shape
    k = int(_scalar(args[1]))
    sample = real.asnumpy()
    _require(sample.size == 0 or (sample.min() >= 0 and sample.max() < n), "Multinomial gave indices out of range")
    u = tape.take("Multinomial", "uniform", (rows, k))
    indices = np.stack([np.searchsorted(cdf[r], u[r], side="right") for r in range(rows)])
    return _tensor_like(real, np.minimum(indices, n - 1))


def _randperm(tape, prim, original, args):
    real = _run(original)
    u = tape.take("RandpermV2", "uniform", real.shape)
    return _tensor_like(real, np.argsort(u, kind="stable"))


def _dropout(channels: bool):
    """Dropout (every element) or Dropout2D/3D (whole (N, C) channels)."""

    def consumer(tape, prim, original, args):
        import mindspore

        keep = float(prim.keep_prob)
        if keep >= 1.0:
            return _run(original)
        x = args[0]
        real_out, real_mask = _run(original)
        name = type(prim).__name__
        _check_dropout(name, x.asnumpy(), real_out.asnumpy(), real_mask.asnumpy() != 0, keep, channels)
        shape = tuple(x.shape[:2]) if channels else tuple(x.shape)
        kept = tape.take(name, "uniform", shape) >= 1.0 - keep
        if channels:
            kept = np.broadcast_to(kept.reshape(shape + (1,) * (len(x.shape) - 2)), tuple(x.shape))
        scale = mindspore.Tensor((kept / keep).astype(np.float32)).astype(x.dtype)
        return x * scale, _tensor_like(real_mask, kept)

    return consumer


def _check_dropout(name, x, out, mask, keep, channels):
    tolerance = 1e-3 if x.dtype == np.float16 else 1e-5
    expected = np.where(mask, x.astype(np.float64) / keep, 0.0)
    _require(np.allclose(out, expected, rtol=tolerance, atol=tolerance), f"{name} did not give x * mask / keep_prob")
    if channels and mask.ndim > 2:
        per_channel = mask.reshape(mask.shape[:2] + (-1,))
        _require(bool((per_channel == per_channel[..., :1]).all()), f"{name} did not drop whole channels")


# --- initializers (mindspore.common.initializer) ---------------------------------------------------


def _normal_values(tape, mean, sigma, shape):
    return mean + sigma * tape.take("initializer (normal)", "normal", shape)


def _uniform_values(tape, a, b, shape):
    return a + (b - a) * tape.take("initializer (uniform)", "uniform", shape)


def _truncated_values(tape, a, b, mean, sigma, shape, real):
    """Inverse-CDF sampling: mean + sigma * ndtri(cdf(a) + u * (cdf(b) - cdf(a)))."""
    from scipy.special import ndtr, ndtri

    _require(real.size == 0 or (real.min() >= a - 1e-6 and real.max() <= b + 1e-6),
             f"TruncatedNormal gave values outside [{a}, {b}]")
    low, high = ndtr((a - mean) / sigma), ndtr((b - mean) / sigma)
    u = tape.take("initializer (TruncatedNormal)", "uniform", shape)
    return np.clip(mean + sigma * ndtri(low + u * (high - low)), a, b)


def _sampler(values_of, in_place: bool, truncated: bool = False):
    """A replacement for one of the initializer module's samplers:
    ``f(*params, shape)`` returns an array, ``f(*params, arr)`` fills arr."""

    def wrap(original):
        def sampler(*args):
            tape = replay.active(MINDSPORE_REPLAY)
            result = _run(lambda: original(*args))
            if tape is None:
                return result
            *params, target = args
            real = target if in_place else result
            shape = tuple(real.shape)
            extra = (real,) if truncated else ()
            values = values_of(tape, *params, shape, *extra).astype(real.dtype)
            real[...] = values
            return None if in_place else real

        return sampler

    return wrap


def _sparse(original):
    """Sparse draws row permutations with numpy: replay them while it runs."""

    def initialize(self, arr):
        tape = replay.active(MINDSPORE_REPLAY)
        if tape is None:
            return original(self, arr)
        permutation = np.random.permutation

        def replayed(x):
            items = np.asarray(x if not isinstance(x, int) else range(x))
            permutation(items)  # MindSpore's own draw, discarded
            return items[np.argsort(tape.take("initializer Sparse (permutation)", "uniform", (len(items),)), kind="stable")]

        np.random.permutation = replayed
        try:
            return original(self, arr)
        finally:
            np.random.permutation = permutation

    return initialize


def _gumbel(original):
    """ops.gumbel_softmax makes its Gumbel noise as -log(-log(u))."""

    def gumbel_softmax(*args, **kwargs):
        tape = replay.active(MINDSPORE_REPLAY)
        if tape is None:
            return original(*args, **kwargs)
        with tape.convention("neglog"):
            return original(*args, **kwargs)

    return gumbel_softmax


# --- installing ------------------------------------------------------------------------------------


def _patch_primitive(cls, consumer) -> None:
    original = cls.__call__
    if hasattr(original, _ORIGINAL):
        return

    def __call__(self, *args, **kwargs):
        tape = replay.active(MINDSPORE_REPLAY)
        if tape is None:
            return original(self, *args, **kwargs)
        return consumer(tape, self, lambda: original(self, *args, **kwargs), args)

    functools.update_wrapper(__call__, original)
    setattr(__call__, _ORIGINAL, original)
    cls.__call__ = __call__


def _patch_function(owner, name: str, make) -> None:
    """Replace a function in ``owner`` and wherever MindSpore re-exports it."""
    original = getattr(owner, name)
    if hasattr(original, _ORIGINAL):
        return
    wrapper = functools.update_wrapper(make(original), original)
    setattr(wrapper, _ORIGINAL, original)
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("mindspore") and getattr(module, name, None) is original:
            setattr(module, name, wrapper)
    setattr(owner, name, wrapper)


def install() -> None:
    import mindspore.common.initializer as init
    import mindspore.ops.function.math_func as math_func
    from mindspore.ops import operations as P
    from mindspore.ops.auto_generate.gen_ops_prim import RandpermV2

    for cls, consumer in ((P.StandardNormal, _standard_normal), (P.UniformReal, _uniform_real),
                          (P.UniformInt, _uniform_int), (P.Multinomial, _multinomial), (RandpermV2, _randperm),
                          (P.Dropout, _dropout(False)), (P.Dropout2D, _dropout(True)), (P.Dropout3D, _dropout(True))):
        _patch_primitive(cls, consumer)
    for name, make in (("_init_random_normal", _sampler(_normal_values, False)),
                       ("_init_random_normal_inplace", _sampler(_normal_values, True)),
                       ("_init_random_uniform", _sampler(_uniform_values, False)),
                       ("_init_random_uniform_inplace", _sampler(_uniform_values, True)),
                       ("_init_truncated_normal", _sampler(_truncated_values, False, truncated=True)),
                       ("_init_truncated_normal_inplace", _sampler(_truncated_values, True, truncated=True))):
        _patch_function(init, name, make)
    if not hasattr(init.Sparse._initialize, _ORIGINAL):
        wrapped = _sparse(init.Sparse._initialize)
        setattr(wrapped, _ORIGINAL, init.Sparse._initialize)
        init.Sparse._initialize = wrapped
    _patch_function(math_func, "gumbel_softmax", _gumbel)

