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
from transpiler.proof.declared_dtypes import DeclaredDtypes
from transpiler.proof.marked_lines import marked_frame
from transpiler.proof.replay import ReplayMismatch, Tape
from transpiler.proof.verify_float64 import FLOAT32_ROUNDING
from transpiler.proof.verify_inputs import InputSpec, make_inputs
from transpiler.proof.verify_runs import ZERO_GRAD, CellCheck, Divergence, Run
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
    export: bool = False  # also export the Cell as MindIR and compare the loaded graph with PyNative


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
    exported: list[Difference] = field(default_factory=list)  # verify --export: MindIR graph vs PyNative

    @property
    def not_compared(self) -> list[Difference]:
        return [d for d in self.outputs + self.grads if not d.compared]

    @property
    def status(self) -> int:
        if self.error:
            return ERROR
        if self.weights is not None and not self.weights.ok:
            return MISMATCH
        if self.replay or not self.outputs or not all(d.ok for d in self.outputs + self.grads + self.exported
                                                      if d.compared):
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
            rounding = sum(d.note.startswith(FLOAT32_ROUNDING) for d in self.grads)
            if rounding:
                out.append(f"{rounding} gradients differ from torch's float32 ones but are within tolerance of torch's "
                           "float64 gradients, or no more than four times as far from them as torch's own float32 ones "
                           "(largest and root-mean-square error, where torch's float32 is within 1% (rms) of float64): "
                           "float32 rounding")
            zero = sum(ZERO_GRAD in d.note for d in self.grads)
            if zero:
                out.append(f"{zero} of {len(self.grads)} parameters get a gradient of zero in torch (nothing reaches "
                           "them from the outputs, e.g. a branch scaled by a zero-initialised weight): their "
                           "comparison proves little")
        if self.exported:
            out.append("exported MindIR (nn.GraphCell(mindspore.load(...))) against the Cell in PyNative:")
            out += format_table(self.exported)
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
        allowed = DeclaredDtypes(sources, request.rules)
        stage = "building the models"
        torch_class = _model_class(torch_module, request.model, request.original)

        def build_torch():
            return torch_class(*request.args, **request.kwargs)

        torch.manual_seed(request.seed)
        torch_model = _built(build_torch(), torch.nn.Module, request.model, request.original)
        mindspore.set_seed(request.seed)
        ms_model = _model_class(ms_module, request.model, request.converted)(*request.args, **request.kwargs)
        ms_model = _built(ms_model, mindspore.nn.Cell, request.model, request.converted)
        stage = "converting the weights"
        params, result.weights = map_weights(torch_model, ms_model)
        mindspore.load_param_into_net(ms_model, params, strict_load=True)
        torch_model.train(request.train)
        ms_model.set_train(request.train)
        stage = "running the models"
        arrays = make_inputs(request.inputs, request.seed)
        tape = Tape(request.seed)
        run = Run(torch_model, ms_model, arrays, request, tape, allowed, build_torch)
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
        if request.export:
            stage = "exporting MindIR"
            from transpiler.proof.verify_export import export_differences

            result.exported = export_differences(ms_model, arrays, request.rtol, request.atol)
    except Exception as exc:  # any failure is an ERROR verdict, reported with where it happened
        if isinstance(exc, _Stage):
            result.error = f"{stage}: {exc}"
        else:
            result.error = f"{stage}: {_marked(exc, request.converted)}{type(exc).__name__}: {exc}\n{_short_traceback(exc)}"
    return result


def _marked(exc: BaseException, converted: str) -> str:
    """The marker of the converted statement the failure ran into, if it ran into one."""
    package = package_name(converted)
    folder = os.path.join(package[0], package[1].split(".")[0]) if package else os.path.dirname(os.path.abspath(converted))
    marked = marked_frame(exc, folder)
    if marked is None:
        return ""
    filename, lineno, marker = marked
    return f"reached a statement ms-migrate marked as not converted ({filename}:{lineno}): {marker}\n"


def load_module(path: str, name: str, sources: list[str] | None = None):
    """Import a file under a private name; modules it imported from its own
    directory are forgotten afterwards so the other file gets its own (their
    files are appended to ``sources`` when given). A file inside a package
    (``timm/models/resnet.py``) is imported as a module of its package instead,
    so its relative and package-absolute imports work; see ``_load_in_package``."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    if package_name(path) is not None:
        return _load_in_package(path, sources)
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


def package_name(path: str) -> tuple[str, str] | None:
    """(the folder holding the top package, the dotted module name) of a file
    inside packages (folders with ``__init__.py``); None for a plain file."""
    folder, module = os.path.split(os.path.abspath(path))
    parts = [] if module == "__init__.py" else [os.path.splitext(module)[0]]
    if not os.path.exists(os.path.join(folder, "__init__.py")):
        return None
    while os.path.exists(os.path.join(folder, "__init__.py")):
        folder, package = os.path.split(folder)
        parts.insert(0, package)
    return folder, ".".join(parts)


def _load_in_package(path: str, sources: list[str] | None):
    """Import ``path`` by its dotted name from its top package's parent folder.
    The original and the converted file usually belong to packages of the same
    name (``timm`` and the converted ``timm``): modules of that name already
    imported are set aside during the import and put back afterwards, and the
    ones this import added are forgotten, so each side gets its own package."""
    base, dotted = package_name(path)
    top = dotted.split(".")[0]

    def of_package(module_name: str) -> bool:
        return module_name == top or module_name.startswith(top + ".")

    root = os.path.join(base, top) + os.sep
    set_aside = {k: sys.modules.pop(k) for k in [k for k in sys.modules if of_package(k)]}
    before = set(sys.modules)
    folders = [base, os.path.dirname(path)]  # the file's folder too: plain imports of its siblings, as for a file
    sys.path[:0] = folders
    importlib.invalidate_caches()
    try:
        return importlib.import_module(dotted)
    finally:
        for folder in folders:
            sys.path.remove(folder)
        for added in set(sys.modules) - before:
            file = os.path.abspath(getattr(sys.modules[added], "__file__", None) or "")
            if of_package(added) or file.startswith(root):
                del sys.modules[added]
                if sources is not None and file.endswith(".py"):
                    sources.append(file)
        sys.modules.update(set_aside)


def _model_class(module, name: str, path: str):
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise _Stage(f"{path} has no {name!r}")
        obj = getattr(obj, part)
    return obj


def _built(model, kind: type, name: str, path: str):
    """``model`` if it is a ``kind`` (a factory may return anything)."""
    if not isinstance(model, kind):
        raise _Stage(f"{name} in {path} returned {type(model).__name__}, not a {kind.__module__.split('.')[0]} "
                     f"{kind.__name__}")
    return model


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
