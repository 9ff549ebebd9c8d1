"""Random replay: torch's random draws, recorded and fed to MindSpore.

A stochastic model (a VAE's reparameterisation, dropout in training mode, a
sampling head, ``nn.init``) gives other numbers on every run, so its
conversion can be compared only if both frameworks see the same draws.

- While a ``Tape`` records, every torch random op (``replay_torch``: torch.randn,
  Tensor.normal_, F.dropout, torch.multinomial, ... and ``nn.init`` through
  them) runs for real; its result is kept as a ``Draw``.
- While the tape replays to MindSpore, every MindSpore random primitive
  (``replay_mindspore``: StandardNormal, UniformReal, UniformInt, Multinomial,
  RandpermV2, Dropout/Dropout2D/Dropout3D, the initializers' samplers) also
  runs for real, so its dtype and shape stay MindSpore's own, but its numbers
  are replaced by the next torch draw put through the MindSpore op's own
  parameters (mean, bounds, probability, keep_prob ...). A wrong parameter in
  the conversion therefore still shows as a wrong value.
- While the tape replays to torch (a second torch run, reseeded), each torch
  random op gives its recorded result again: an output that still changes
  comes from randomness the replay does not cover (``unreplayable`` names the
  ops it knows of), so it cannot be compared.

Draws are matched in order. A MindSpore op asks for base numbers of one kind:
``normal`` (standard normal) or ``uniform`` (in [0, 1)). A torch draw of the
same kind gives them directly ((y - mean) / std, (y - low) / (high - low)). A
discrete torch draw (bernoulli, randint, randperm, multinomial, a dropout
mask, rrelu slopes, exponential) gives uniform numbers chosen inside the cell
that reproduces its outcome under torch's parameters, with a margin of 1e-3
of the cell so that float32 rounding cannot move them out. Anything else (a
MindSpore op asking for another kind or shape, a draw torch never made, a
torch draw MindSpore never asks for) raises ``ReplayMismatch`` naming both
sides.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

import numpy as np

RECORD, TORCH_REPLAY, MINDSPORE_REPLAY = "record", "torch replay", "mindspore replay"
_MARGIN = 1e-3  # keep conditional uniforms this far (relative) inside their cell


class ReplayMismatch(Exception):
    """The MindSpore side's random draws do not correspond to torch's."""


class ReplayModelError(Exception):
    """A framework op did not behave as the replay models it (a bug in the
    replay, not in the conversion): the draw cannot be trusted."""


@dataclass
class Draw:
    """One torch random op's outcome.

    kind and values:
      normal       standard normal numbers z (y = mean + std * z)
      uniform      numbers u in [0, 1) (y = low + (high - low) * u)
      exponential  standard exponential numbers e (y = e / lambd)
      bernoulli    the 0/1 outcome; params["p"] its probability
      integers     the integers; params["low"], params["high"] (excluded)
      permutation  the permutation
      multinomial  the sampled indices (rows, k); params["probs"] (rows, n),
                   params["replacement"]
      dropout      True where kept; params["p"] the drop probability
      rrelu        the slope of every element; params["lower"], params["upper"]
    torch_value: what torch's op returned (or the dropout noise), given back
    to torch when the tape replays to torch.
    """

    source: str
    kind: str
    values: np.ndarray
    params: dict = field(default_factory=dict)
    torch_value: object = None
    _base: dict = field(default_factory=dict, repr=False)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.values.shape)

    def describe(self) -> str:
        return f"{self.source} ({self.kind} draw of shape {self.shape})"

    def base(self, kind: str, shape: tuple[int, ...], rng: np.random.Generator, convention: str) -> np.ndarray | None:
        """Base numbers of ``kind`` and ``shape`` equivalent to this draw, or
        None if it cannot give them. Computed once: every replay of the tape
        gets the same numbers."""
        key = (kind, convention)
        if key not in self._base:
            convert = _CONVERSIONS.get((self.kind, kind))
            self._base[key] = None if convert is None else convert(self, rng, convention)
        values = self._base[key]
        if values is None or not _same_layout(values.shape, shape):
            return None
        return values.reshape(shape)


def _same_layout(a, b) -> bool:
    """Same number of elements in the same order: the same shape (size-1
    axes aside), or either one flat (MindSpore's multinomial draws its
    (rows, n) uniforms as one vector)."""
    if int(np.prod(a)) != int(np.prod(b)):
        return False
    return len(a) <= 1 or len(b) <= 1 or [d for d in a if d != 1] == [d for d in b if d != 1]


def _inside(rng, low, high, shape):
    """Uniform numbers strictly inside [low, high), away from both ends."""
    width = np.asarray(high, np.float64) - low
    return low + width * rng.uniform(_MARGIN, 1 - _MARGIN, shape)


def _normal_base(draw, rng, convention):
    return draw.values


def _uniform_base(draw, rng, convention):
    return draw.values


def _exponential_base(draw, rng, convention):
    # MindSpore code makes exponentials from uniforms either as -log(1 - u)
    # (ms-migrate's exponential_) or as -log(u) (ops.gumbel_softmax)
    e = draw.values
    return np.exp(-e) if convention == "neglog" else -np.expm1(-e)


def _bernoulli_base(draw, rng, convention):
    p = np.broadcast_to(np.asarray(draw.params["p"], np.float64), draw.shape)
    hit = draw.values.astype(bool)
    return np.where(hit, _inside(rng, 0.0, p, draw.shape), _inside(rng, p, 1.0, draw.shape))


def _dropout_base(draw, rng, convention):
    # dropped where u < p
    p = float(draw.params["p"])
    kept = draw.values.astype(bool)
    return np.where(kept, _inside(rng, p, 1.0, draw.shape), _inside(rng, 0.0, p, draw.shape))


def _integers_base(draw, rng, convention):
    low, high = draw.params["low"], draw.params["high"]
    n = high - low
    return (draw.values.astype(np.float64) - low + rng.uniform(_MARGIN, 1 - _MARGIN, draw.shape)) / n


def _permutation_base(draw, rng, convention):
    """Uniforms whose ascending order is the permutation."""
    n = draw.values.size
    ranks = (np.arange(n) + rng.uniform(_MARGIN, 1 - _MARGIN, n)) / n
    u = np.empty(n)
    u[draw.values.astype(np.int64)] = ranks
    return u


def _multinomial_base(draw, rng, convention):
    probs = draw.params["probs"]
    indices = draw.values.astype(np.int64)
    if draw.params["replacement"]:
        # inverse CDF: sample k lies in [cdf[i - 1], cdf[i])
        cdf = np.cumsum(probs, axis=1)
        upper = np.take_along_axis(cdf, indices, axis=1)
        lower = upper - np.take_along_axis(probs, indices, axis=1)
        return _inside(rng, lower, upper, indices.shape)
    # without replacement: exponential race times T = E / p, the drawn
    # indices first in their order (MindSpore ranks log(u) / p, u = exp(-E))
    rows, n = probs.shape
    u = np.empty((rows, n))
    for row in range(rows):
        p = probs[row]
        times = np.empty(n)
        left = np.ones(n, bool)
        t = 0.0
        for index in indices[row]:
            t += rng.exponential() / max(p[left].sum(), 1e-300)
            times[index] = t
            left[index] = False
        rest = np.flatnonzero(left)
        times[rest] = t + rng.exponential(size=rest.size) / np.maximum(p[rest], 1e-300)
        u[row] = np.exp(-times * p)
    return u


def _rrelu_base(draw, rng, convention):
    lower, upper = draw.params["lower"], draw.params["upper"]
    if upper == lower:
        return rng.uniform(0.0, 1.0, draw.shape)
    return (draw.values - lower) / (upper - lower)


# (torch draw kind, requested kind) -> base numbers
_CONVERSIONS = {
    ("normal", "normal"): _normal_base,
    ("uniform", "uniform"): _uniform_base,
    ("exponential", "uniform"): _exponential_base,
    ("bernoulli", "uniform"): _bernoulli_base,
    ("dropout", "uniform"): _dropout_base,
    ("integers", "uniform"): _integers_base,
    ("permutation", "uniform"): _permutation_base,
    ("multinomial", "uniform"): _multinomial_base,
    ("rrelu", "uniform"): _rrelu_base,
}


class Tape:
    """The draws of one torch run, in order, and a cursor for replaying them."""

    def __init__(self, seed: int = 0):
        self.draws: list[Draw] = []
        self.unreplayable: list[str] = []  # torch random ops that drew but cannot be replayed
        self.torch_divergence: str = ""  # the first difference of a torch replay run
        self.failure: ReplayMismatch | None = None  # the first MindSpore mismatch (kept if MindSpore wraps it)
        self.cursor = 0
        self._end: int | None = None
        self.rng = np.random.default_rng(seed + 7919)  # conditional uniforms
        self.conventions: list[str] = []  # innermost last: how MindSpore code turns uniforms into exponentials

    # -- recording (torch) ---------------------------------------------------
    def record(self, draw: Draw) -> None:
        self.draws.append(draw)

    def note_unreplayable(self, source: str) -> None:
        if source not in self.unreplayable:
            self.unreplayable.append(source)

    def discard_from(self, position: int) -> None:
        """Forget the draws recorded since ``position`` (draws of a layer
        constructor whose weights are copied over anyway)."""
        del self.draws[position:]

    # -- replaying -------------------------------------------------------------
    def _limit(self) -> int:
        return len(self.draws) if self._end is None else self._end

    def next_for_torch(self, source: str, shape: tuple[int, ...]) -> Draw | None:
        """The recorded draw for a torch op of the second run; None (and the
        divergence noted) if the run no longer follows the recorded one."""
        if self.cursor >= self._limit():
            self._diverge(f"the torch run makes more random draws than recorded ({source})")
            return None
        draw = self.draws[self.cursor]
        if draw.source != source or tuple(getattr(draw.torch_value, "shape", ())) != tuple(shape):
            self._diverge(f"draw #{self.cursor + 1}: recorded {draw.describe()}, now {source} {tuple(shape)}")
            return None
        self.cursor += 1
        return draw

    def _diverge(self, text: str) -> None:
        if not self.torch_divergence:
            self.torch_divergence = text

    def take(self, consumer: str, kind: str, shape) -> np.ndarray:
        """Base numbers for a MindSpore op: the next torch draw, converted."""
        shape = tuple(int(d) for d in shape)
        convention = self.conventions[-1] if self.conventions else ""
        if self.cursor >= self._limit():
            made = self._limit()
            self._fail(f"MindSpore {consumer} asks for a {kind} draw of shape {shape}, but torch made "
                       f"{'no' if made == 0 else f'only {made}'} random draw{'s' if made != 1 else ''}"
                       f"{' here' if self._end is not None else ''}{self._unreplayable_note()}")
        draw = self.draws[self.cursor]
        values = draw.base(kind, shape, self.rng, convention)
        if values is None:
            self._fail(f"MindSpore {consumer} asks for a {kind} draw of shape {shape}; torch's draw "
                       f"#{self.cursor + 1} is {draw.describe()}{self._unreplayable_note()}")
        self.cursor += 1
        return values

    def check_consumed(self) -> None:
        """Every torch draw was asked for by MindSpore."""
        if self.cursor < self._limit():
            left = self.draws[self.cursor:self._limit()]
            names = ", ".join(f"#{self.cursor + 1 + i} {d.describe()}" for i, d in enumerate(left[:3]))
            more = f" and {len(left) - 3} more" if len(left) > 3 else ""
            self._fail(f"MindSpore never asked for torch's draw{'s' if len(left) > 1 else ''} {names}{more}")

    def _fail(self, text: str):
        error = ReplayMismatch(text)
        if self.failure is None:
            self.failure = error
        raise error

    def _unreplayable_note(self) -> str:
        if not self.unreplayable:
            return ""
        return f" (torch also drew with {', '.join(self.unreplayable)}, which cannot be replayed)"

    # -- modes -------------------------------------------------------------------
    @contextlib.contextmanager
    def recording(self):
        with _activate(self, RECORD):
            yield self

    @contextlib.contextmanager
    def replaying_torch(self, start: int = 0, end: int | None = None):
        self.cursor, self._end = start, end
        with _activate(self, TORCH_REPLAY):
            yield self

    @contextlib.contextmanager
    def replaying_mindspore(self, start: int | None = 0, end: int | None = None, check: bool = True):
        """Replay draws ``start:end`` (``start=None``: go on from the cursor);
        with ``check``, every one of them must have been asked for at the end."""
        if start is not None:
            self.cursor, self._end = start, end
        with _activate(self, MINDSPORE_REPLAY):
            yield self
            if check:
                self.check_consumed()

    @contextlib.contextmanager
    def convention(self, name: str):
        self.conventions.append(name)
        try:
            yield
        finally:
            self.conventions.pop()


class _State:
    tape: Tape | None = None
    mode: str | None = None
    busy: bool = False  # inside a patched op: nested random calls are its own business


_state = _State()


@contextlib.contextmanager
def _activate(tape: Tape, mode: str):
    saved = (_state.tape, _state.mode)
    _state.tape, _state.mode = tape, mode
    try:
        yield
    finally:
        _state.tape, _state.mode = saved


def active_mode() -> str | None:
    return _state.mode


def active(*modes: str) -> Tape | None:
    """The tape, if one is active in one of ``modes`` and no patched op is running."""
    if _state.tape is None or _state.busy or _state.mode not in modes:
        return None
    return _state.tape


@contextlib.contextmanager
def busy():
    saved = _state.busy
    _state.busy = True
    try:
        yield
    finally:
        _state.busy = saved


def install() -> None:
    """Patch the random ops of both frameworks (idempotent). Patched ops
    behave exactly as before while no tape is active."""
    from transpiler.proof import replay_mindspore, replay_torch

    replay_torch.install()
    replay_mindspore.install()
