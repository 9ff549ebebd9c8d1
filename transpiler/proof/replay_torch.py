"""torch's side of the random replay (``transpiler.proof.replay``).

Each random op is wrapped. With no tape active the wrapper only calls the op.
While a tape records, the op runs for real and its outcome is kept as a Draw;
while the tape replays to torch, the op runs and its result is overwritten by
the recorded one. ``nn.init`` functions and ``torch.distributions`` sample
through these ops, so they are recorded too. Ops whose draws cannot be
replayed (Poisson, gamma, ...) are noted on the tape.

Dropout and rrelu are recorded through their noise: the op is run on ones to
get torch's own noise (mask / (1 - p), or the slopes), and the result is
``input * noise`` exactly as torch's CPU kernels compute it, so gradients flow
as in torch.
"""

from __future__ import annotations

import functools

import numpy as np

from transpiler.proof import replay
from transpiler.proof.replay import RECORD, TORCH_REPLAY, Draw, ReplayModelError

_ORIGINAL = "_ms_migrate_replay_original"


def _bind(args, kwargs, names: tuple[str, ...], defaults: dict | None = None) -> dict:
    bound = dict(defaults or {})
    bound.update(zip(names, args))
    bound.update((k, v) for k, v in kwargs.items() if k in names)
    return bound


def _numpy(value):
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().cpu().double().numpy()
    return np.asarray(value, np.float64)


def _give_back(tape, source: str, out):
    """Second torch run: the recorded result instead of a new one."""
    import torch

    draw = tape.next_for_torch(source, tuple(out.shape))
    if draw is not None:
        with torch.no_grad():
            out.copy_(draw.torch_value)
    return out


# --- ops whose result is the draw ------------------------------------------------------------------


def _traced(out) -> bool:
    import torch

    return torch.compiler.is_compiling() or (isinstance(out, torch.Tensor) and type(out) is not torch.Tensor
                                             and not isinstance(out, torch.nn.Parameter))


def _value_op(kind: str, params):
    """``params(args, kwargs, out, tape) -> (values, params)``: the draw in its kind's terms."""

    def handler(tape, original, source, args, kwargs):
        out = original(*args, **kwargs)
        if _traced(out):
            return out  # a draw torch.compile makes while tracing (fake tensors), not the program's
        if replay.active_mode() == TORCH_REPLAY:
            return _give_back(tape, source, out)
        values, draw_params = params(args, kwargs, out, tape)
        if values is None:  # this form of the op cannot be replayed
            tape.note_unreplayable(source)
            return out
        tape.record(Draw(source, kind, values, draw_params, out.detach().clone()))
        return out

    return handler


def _standard(mean: str, std: str, names: tuple[str, ...], defaults: dict):
    """normal draws: z = (y - mean) / std (fresh where std is 0)."""

    def params(args, kwargs, out, tape):
        bound = _bind(args, kwargs, names, defaults)
        m, s = _numpy(bound[mean]), _numpy(bound[std])
        y = _numpy(out)
        safe = np.where(s == 0, 1.0, s)
        z = np.where(np.broadcast_to(s, y.shape) == 0, tape.rng.standard_normal(y.shape), (y - m) / safe)
        return z, {"mean": m, "std": s}

    return params


def _unit_normal(args, kwargs, out, tape):
    return _numpy(out), {}


def _bounded(low: str, high: str, names: tuple[str, ...], defaults: dict):
    """uniform draws: u = (y - low) / (high - low)."""

    def params(args, kwargs, out, tape):
        bound = _bind(args, kwargs, names, defaults)
        a, b = float(bound[low]), float(bound[high])
        y = _numpy(out)
        u = tape.rng.uniform(0.0, 1.0, y.shape) if b == a else (y - a) / (b - a)
        return u, {"low": a, "high": b}

    return params


def _unit_uniform(args, kwargs, out, tape):
    return _numpy(out), {}


def _truncated(args, kwargs, out, tape):
    """nn.init.trunc_normal_ (rejection sampling in torch): as the uniform
    numbers inverse-CDF sampling would turn into the same values."""
    from scipy.special import ndtr

    bound = _bind(args, kwargs, ("tensor", "mean", "std", "a", "b"), {"mean": 0.0, "std": 1.0, "a": -2.0, "b": 2.0})
    mean, std, a, b = (float(bound[k]) for k in ("mean", "std", "a", "b"))
    low, high = ndtr((a - mean) / std), ndtr((b - mean) / std)
    u = (ndtr((_numpy(out) - mean) / std) - low) / (high - low)
    return np.clip(u, 0.0, np.nextafter(1.0, 0.0)), {"mean": mean, "std": std, "a": a, "b": b}


def _exponential(args, kwargs, out, tape):
    lambd = float(_bind(args, kwargs, ("self", "lambd"), {"lambd": 1.0})["lambd"])
    return _numpy(out) * lambd, {"lambd": lambd}


def _bernoulli(names: tuple[str, ...], default_p):
    def params(args, kwargs, out, tape):
        bound = _bind(args, kwargs, names, {"p": default_p})
        p = bound.get("p")
        probabilities = _numpy(bound[names[0]] if p is None else p)
        return _numpy(out) != 0, {"p": probabilities}

    return params


def _randint(args, kwargs, out, tape):
    """torch.randint(high, size) / (low, high, size), keywords too."""
    positional = list(args)
    if positional and not isinstance(positional[-1], int):  # the size: a tuple, list or torch.Size
        positional = positional[:-1]
    ints = dict(zip(("low", "high") if len(positional) == 2 else ("high",), positional))
    ints.update((k, kwargs[k]) for k in ("low", "high") if k in kwargs)
    return _integers(out, int(ints.get("low", 0)), int(ints["high"]))


def _randint_like(args, kwargs, out, tape):
    positional = list(args[1:])
    ints = dict(zip(("low", "high") if len(positional) == 2 else ("high",), positional))
    ints.update((k, kwargs[k]) for k in ("low", "high") if k in kwargs)
    return _integers(out, int(ints.get("low", 0)), int(ints["high"]))


def _random_(args, kwargs, out, tape):
    """Tensor.random_(from, to) / random_(to); bare random_() spans the dtype: not replayed."""
    positional = list(args[1:])
    bound = dict(zip(("from", "to") if len(positional) == 2 else ("to",), positional))
    bound.update((k, kwargs[k]) for k in ("from", "to") if k in kwargs)
    if bound.get("to") is None:
        return None, None
    return _integers(out, int(bound.get("from", 0)), int(bound["to"]))


def _integers(out, low: int, high: int):
    return _numpy(out).astype(np.int64), {"low": low, "high": high}


def _permutation(args, kwargs, out, tape):
    return _numpy(out).astype(np.int64), {}


def _multinomial(names: tuple[str, ...]):
    def params(args, kwargs, out, tape):
        bound = _bind(args, kwargs, names, {"replacement": False})
        weights = np.atleast_2d(_numpy(bound[names[0]]))
        probs = weights / weights.sum(axis=1, keepdims=True)
        indices = np.atleast_2d(_numpy(out).astype(np.int64))
        return indices, {"probs": probs, "replacement": bool(bound["replacement"])}

    return params


# --- ops that multiply their input by random noise -------------------------------------------------

# the leading axes the noise is drawn for, by op and number of dimensions (None: every element);
# an unbatched input gets a batch axis of 1 so the draw has the shape (N, C) MindSpore uses
_FEATURE_AXES = {
    "dropout": {},
    "dropout1d": {3: 2, 2: 1},
    "dropout2d": {4: 2, 3: 2},  # torch treats a 3-D input as (N, C, L)
    "dropout3d": {5: 2, 4: 1},
}


def _dropout(name: str):
    def handler(tape, original, source, args, kwargs):
        import torch

        bound = _bind(args, kwargs, ("input", "p", "training", "inplace"), {"p": 0.5, "training": True, "inplace": False})
        x, p = bound["input"], float(bound["p"])
        if not bound["training"] or p == 0 or x.numel() == 0:  # no draw in torch either
            return original(*args, **kwargs)
        noise = _noise(tape, source, x, lambda: original(torch.ones_like(x), p, True, False),
                       lambda noise: Draw(source, "dropout", _kept(name, noise), {"p": p}, noise))
        return x.mul_(noise) if bound["inplace"] else x * noise

    return handler


def _noise(tape, source: str, x, make, draw_of):
    """The op's noise for input ``x``: made by torch (and recorded as
    ``draw_of(noise)``), or the recorded one on a replay run."""
    import torch

    draw = tape.next_for_torch(source, tuple(x.shape)) if replay.active_mode() == TORCH_REPLAY else None
    if draw is not None:
        return draw.torch_value
    with torch.no_grad():
        noise = make()
    if replay.active_mode() == RECORD:
        tape.record(draw_of(noise))
    return noise


def _kept(name: str, noise) -> np.ndarray:
    kept = noise.detach().cpu().numpy() != 0
    if not _FEATURE_AXES[name]:  # every element
        return kept
    lead = _FEATURE_AXES[name].get(kept.ndim)
    if lead is None:
        raise ReplayModelError(f"torch.nn.functional.{name} on a {kept.ndim}-D input is not modelled")
    per_feature = kept.reshape(kept.shape[:lead] + (-1,))
    if not (per_feature == per_feature[..., :1]).all():
        raise ReplayModelError(f"torch.nn.functional.{name} did not drop whole channels")
    kept = per_feature[..., 0]
    return kept[None] if lead == 1 else kept


def _rrelu(in_place: bool):
    def handler(tape, original, source, args, kwargs):
        import torch

        bound = _bind(args, kwargs, ("input", "lower", "upper", "training"),
                      {"lower": 1.0 / 8, "upper": 1.0 / 3, "training": False})
        x = bound["input"]
        if not bound["training"]:
            return original(*args, **kwargs)
        bounds = {"lower": float(bound["lower"]), "upper": float(bound["upper"])}
        slopes = _noise(tape, source, x, lambda: -original(-torch.ones_like(x), bounds["lower"], bounds["upper"], True),
                        lambda slopes: Draw(source, "rrelu", _numpy(slopes), bounds, slopes))
        result = torch.where(x <= 0, x * slopes, x)  # torch: input * r where input <= 0
        return x.copy_(result) if in_place else result

    return handler


# --- ops that draw but cannot be replayed ----------------------------------------------------------


def _unreplayable(when=None):
    def handler(tape, original, source, args, kwargs):
        if replay.active_mode() == RECORD and (when is None or when(args, kwargs)):
            tape.note_unreplayable(source)
        return original(*args, **kwargs)

    return handler


def _training(args, kwargs) -> bool:
    return bool(_bind(args, kwargs, ("input", "p", "training"), {"training": False})["training"])


def _patches():
    import torch
    import torch.nn.functional as F

    tensor = torch.Tensor
    return [
        (torch, "randn", "torch.randn", _value_op("normal", _unit_normal)),
        (torch, "randn_like", "torch.randn_like", _value_op("normal", _unit_normal)),
        (torch, "normal", "torch.normal", _value_op("normal", _standard("mean", "std", ("mean", "std"), {"mean": 0.0, "std": 1.0}))),
        (tensor, "normal_", "Tensor.normal_", _value_op("normal", _standard("mean", "std", ("self", "mean", "std"), {"mean": 0.0, "std": 1.0}))),
        (torch, "rand", "torch.rand", _value_op("uniform", _unit_uniform)),
        (torch, "rand_like", "torch.rand_like", _value_op("uniform", _unit_uniform)),
        (tensor, "uniform_", "Tensor.uniform_", _value_op("uniform", _bounded("from", "to", ("self", "from", "to"), {"from": 0.0, "to": 1.0}))),
        (torch.nn.init, "trunc_normal_", "torch.nn.init.trunc_normal_", _value_op("uniform", _truncated)),
        (tensor, "exponential_", "Tensor.exponential_", _value_op("exponential", _exponential)),
        (torch, "bernoulli", "torch.bernoulli", _value_op("bernoulli", _bernoulli(("input", "p"), None))),
        (tensor, "bernoulli", "Tensor.bernoulli", _value_op("bernoulli", _bernoulli(("self", "p"), None))),
        (tensor, "bernoulli_", "Tensor.bernoulli_", _value_op("bernoulli", _bernoulli(("self", "p"), 0.5))),
        (torch, "randint", "torch.randint", _value_op("integers", _randint)),
        (torch, "randint_like", "torch.randint_like", _value_op("integers", _randint_like)),
        (tensor, "random_", "Tensor.random_", _value_op("integers", _random_)),
        (torch, "randperm", "torch.randperm", _value_op("permutation", _permutation)),
        (torch, "multinomial", "torch.multinomial", _value_op("multinomial", _multinomial(("input", "num_samples", "replacement")))),
        (tensor, "multinomial", "Tensor.multinomial", _value_op("multinomial", _multinomial(("self", "num_samples", "replacement")))),
        *((F, name, f"torch.nn.functional.{name}", _dropout(name)) for name in _FEATURE_AXES),
        (torch, "rrelu", "torch.rrelu", _rrelu(False)),
        (torch, "rrelu_", "torch.rrelu_", _rrelu(True)),
        *((torch, name, f"torch.{name}", _unreplayable()) for name in ("poisson", "binomial", "_standard_gamma", "_sample_dirichlet")),
        *((tensor, name, f"Tensor.{name}", _unreplayable()) for name in ("geometric_", "cauchy_", "log_normal_")),
        *((F, name, f"torch.nn.functional.{name}", _unreplayable(_training)) for name in ("alpha_dropout", "feature_alpha_dropout")),
    ]


def install() -> None:
    for owner, name, source, handler in _patches():
        original = getattr(owner, name, None)
        if original is None or hasattr(original, _ORIGINAL):
            continue
        setattr(owner, name, _wrapper(original, source, handler))


def _wrapper(original, source: str, handler):
    def wrapper(*args, **kwargs):
        tape = replay.active(RECORD, TORCH_REPLAY)
        if tape is None:
            return original(*args, **kwargs)
        with replay.busy():
            return handler(tape, original, source, args, kwargs)

    functools.update_wrapper(wrapper, original)
    setattr(wrapper, _ORIGINAL, original)
    return wrapper
