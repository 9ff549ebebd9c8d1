"""Prove a conversion by running it: build the torch model and the converted
Cell, convert the weights, feed both the same seeded inputs, compare every
output (and, on request, every parameter gradient): shape, dtype and values,
and when they differ name the first sub-Cell whose output diverges from its
torch sub-module's.

Random ops are replayed (``transpiler.proof.replay``): the MindSpore side gets
torch's draws, so stochastic models (a VAE's sampling, dropout in training
mode, a sampling head) compare exactly. torch runs twice with the replayed
draws and another seed; an output (or gradient) that still changes depends
on randomness the replay does not cover and is reported as not compared,
which fails verify unless the request allows it. A dtype that differs fails
unless a rule for an API the original file uses declares the difference.

``verify(VerifyRequest(...)) -> VerifyResult``; the CLI is
``transpiler/commands/verify.py``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import traceback
from dataclasses import dataclass, field, replace

from transpiler.proof.compare import Difference, format_table
from transpiler.proof.declared_dtypes import declared_dtype_differences
from transpiler.proof.replay import ReplayMismatch, Tape
from transpiler.proof.verify_inputs import InputSpec, make_inputs
from transpiler.proof.verify_runs import CellCheck, Divergence, Run
from transpiler.proof.verify_runs import StageError as _Stage
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
    train: bool = False  # run both in training mode (dropout active, batch statistics)
    allow_not_compared: bool = False  # values that cannot be compared do not fail verify (still reported)
    rules: object = None  # the RuleSet whose declared dtype differences apply (default: ms-migrate's rules)


@dataclass
class VerifyResult:
    outputs: list[Difference] = field(default_factory=list)
    grads: list[Difference] = field(default_factory=list)
    weights: WeightReport | None = None
    divergence: Divergence | None = None
    cells: list[CellCheck] = field(default_factory=list)  # sub-Cells run on torch's recorded inputs
    error: str | None = None
    replay: str | None = None  # the MindSpore side's random draws do not correspond to torch's
    draws: list[str] = field(default_factory=list)  # the torch random ops replayed, in order
    unreplayable: list[str] = field(default_factory=list)  # torch random ops that could not be replayed
    allow_not_compared: bool = False

    @property
    def not_compared(self) -> list[Difference]:
        return [d for d in self.outputs + self.grads if not d.compared]

    @property
    def status(self) -> int:
        if self.error:
            return ERROR
        if self.weights is not None and not self.weights.ok:
            return MISMATCH
        if self.replay or not self.outputs or not all(d.ok for d in self.outputs + self.grads if d.compared):
            return MISMATCH
        if self.not_compared and not self.allow_not_compared:
            return MISMATCH
        if not all(check.ok for check in self.cells):
            return MISMATCH
        return MATCH

    def lines(self) -> list[str]:
        out: list[str] = []
        if self.weights is not None:
            out.append(f"weights: {self.weights.summary()}")
            out += [f"  {p}" for p in self.weights.problems()]
        if self.draws:
            out.append(f"random draws replayed from torch to MindSpore: {len(self.draws)} ({_counted(self.draws)})")
        if self.unreplayable:
            out.append(f"random ops that cannot be replayed: {', '.join(self.unreplayable)}")
        if self.replay:
            out.append(f"random draws do not correspond: {self.replay}")
        if self.outputs:
            out += format_table(self.outputs)
        if self.grads:
            out.append("gradients of the seeded scalar reduction of the compared outputs:")
            out += format_table(self.grads)
        if self.cells:
            bad = [c for c in self.cells if not c.ok]
            out.append(f"sub-Cells run on the inputs their torch sub-modules received: {len(self.cells) - len(bad)} "
                       f"of {len(self.cells)} match")
        if self.divergence is not None:
            out.append(self.divergence.describe())
        if self.error:
            out.append(f"error: {self.error}")
        out.append(self.verdict())
        return out

    def verdict(self) -> str:
        status = self.status
        skipped = ", ".join(d.name for d in self.not_compared)
        if status == MATCH and skipped:
            return f"MATCH OF THE COMPARED VALUES; NOT COMPARED: {skipped}"
        if status == MISMATCH and skipped and replace(self, allow_not_compared=True).status == MATCH:
            return f"NOT COMPARED: {skipped} (--allow-not-compared accepts that)"
        return {MATCH: "MATCH", MISMATCH: "MISMATCH", ERROR: "ERROR"}[status]


def _counted(names: list[str]) -> str:
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(f"{name} x{n}" if n > 1 else name for name, n in counts.items())


def verify(request: VerifyRequest) -> VerifyResult:
    result = VerifyResult(allow_not_compared=request.allow_not_compared)
    stage = "loading"
    try:
        import mindspore
        import torch

        from transpiler.proof import replay

        replay.install()  # before the files import anything random
        stage = f"loading {request.original}"
        sources: list[str] = [request.original]
        torch_module = load_module(request.original, "_ms_migrate_verify_original", sources)
        stage = f"loading {request.converted}"
        ms_module = load_module(request.converted, "_ms_migrate_verify_converted")
        stage = "reading the dtype differences rules declare"
        allowed = declared_dtype_differences(sources, request.rules)
        stage = "building the models"
        torch.manual_seed(request.seed)
        torch_model = _model_class(torch_module, request.model, request.original)(*request.args, **request.kwargs)
        mindspore.set_seed(request.seed)
        ms_model = _model_class(ms_module, request.model, request.converted)(*request.args, **request.kwargs)
        stage = "converting the weights"
        params, result.weights = map_weights(torch_model, ms_model)
        mindspore.load_param_into_net(ms_model, params, strict_load=True)
        torch_model.train(request.train)
        ms_model.set_train(request.train)
        stage = "running the models"
        arrays = make_inputs(request.inputs, request.seed)
        tape = Tape(request.seed)
        run = Run(torch_model, ms_model, arrays, request, tape, allowed)
        result.outputs, result.divergence, result.cells, result.replay = run.forward()
        result.draws = [draw.source for draw in tape.draws]
        if request.grad and result.replay is None:
            stage = "computing gradients"
            skipped = {d.name for d in result.outputs if not d.compared}
            try:
                result.grads = run.gradients(result.weights, skipped)
            except ReplayMismatch as exc:
                result.replay = f"computing gradients: {exc}"
        result.unreplayable = list(tape.unreplayable)
    except Exception as exc:  # any failure is an ERROR verdict, reported with where it happened
        if isinstance(exc, _Stage):
            result.error = f"{stage}: {exc}"
        else:
            result.error = f"{stage}: {type(exc).__name__}: {exc}\n{_short_traceback(exc)}"
    return result


def load_module(path: str, name: str, sources: list[str] | None = None):
    """Import a file under a private name; modules it imported from its own
    directory are forgotten afterwards so the other file gets its own (their
    files are appended to ``sources`` when given)."""
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
                if sources is not None and file.endswith(".py"):
                    sources.append(file)
    return module


def _model_class(module, name: str, path: str):
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise _Stage(f"{path} has no {name!r}")
        obj = getattr(obj, part)
    return obj


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
