"""What the research benchmark runs: public repositories at pinned commits
(or packages at pinned versions from the package registry) and the models
built from them.

A ``Source`` is where code comes from; a ``Model`` says how to build one
architecture from it and what to feed it. Both sides (torch and the converted
MindSpore code) build the model the same way: import ``module`` from the
source's import root, call ``factory(*args, **kwargs)`` (a class or a
function, dotted names allowed), put it in eval mode and call it on
``inputs`` (positional) and ``keyword_inputs``. Every tensor in the output
(a tensor, or tuples/lists/dicts of them, walked in order) is compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Source:
    """One repository or package.

    name: ``owner/repo`` for GitHub, the distribution name for the registry.
    kind: ``"github"`` (a snapshot at ``pin``, a full commit hash) or ``"pypi"``
          (``pin`` is the version; the wheel or sdist is unpacked).
    root: the directory inside the source that goes on ``sys.path``
          (``"."`` for a repository whose modules sit at the top).
    convert: directories or files under ``root`` to convert (default: all of ``root``).
    needs: other sources (by name) whose converted code must be importable too
           (a repository that imports timm gets the zoo's converted timm: ``"timm"``).
    """

    name: str
    kind: str
    pin: str
    root: str = "."
    convert: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    license: str = ""


@dataclass(frozen=True)
class Input:
    """A seeded input: ``dtype`` float32 (standard normal), int64 (uniform in
    [low, high)), or bool (``high`` > 0: True with probability 1/2)."""

    shape: tuple[int, ...]
    dtype: str = "float32"
    low: int = 0
    high: int = 10

    def make(self, rng: np.random.Generator) -> np.ndarray:
        """The array, drawn from ``rng`` (both sides get the arrays the torch side drew)."""
        if self.dtype == "float32":
            return rng.standard_normal(self.shape).astype(np.float32)
        if self.dtype == "int64":
            return rng.integers(self.low, self.high, self.shape).astype(np.int64)
        if self.dtype == "bool":
            return rng.random(self.shape) < 0.5 if self.high > 0 else np.zeros(self.shape, dtype=bool)
        raise ValueError(f"Input dtype {self.dtype!r}: float32, int64 or bool")


@dataclass(frozen=True)
class Call:
    """An argument built by calling the source's own code, the same way on both
    sides: ``factory(*args, **kwargs)`` from ``module`` (default: the model's
    module). For models that take a built part, e.g.
    ``TransformerWrapper(attn_layers=Decoder(dim=32, depth=1))``. ``args`` and
    ``kwargs`` may hold ``Call``s too."""

    factory: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    module: str = ""


@dataclass(frozen=True)
class Ref:
    """An argument that is a name from the source's code, passed as it is (a
    block class given to a network class): ``module.name`` (module default:
    the model's module)."""

    name: str
    module: str = ""


@dataclass(frozen=True)
class Model:
    """One architecture.

    id: a unique row name; source: ``Source.name``; module: the dotted module
    to import; factory: attribute of that module to call (dotted allowed).
    kind: what the model is, for the table (``vit``, ``diffusion-unet``, ``llm``,
    ``speech``, ``segmentation``, ``detection``, ``ssm``, ``gnn``, ``super-resolution``, ...).
    args, kwargs: may hold ``Call``s (a part built from the source's code)
    and ``Ref``s (a class or function of the source's code).
    inputs, keyword_inputs: ``Input``s; any other value (an int, a bool, a
    string) is passed as it is.
    method: a method of the model to call instead of the model itself (a
    layer whose work is a method, e.g. ``rotate_queries_or_keys``).
    timeout: seconds the MindSpore side may take (0: the benchmark's default).
    """

    id: str
    source: str
    module: str
    factory: str
    kind: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    inputs: tuple[Input, ...] = ()
    keyword_inputs: dict = field(default_factory=dict)
    note: str = ""
    method: str = ""
    timeout: int = 0
