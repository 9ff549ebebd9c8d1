"""Saved graphs and whole saved models: torch's traced, exported and pickled
models -> a MindIR file written by ``mindspore.export``, or a checkpoint.

``mindspore.export(net, *inputs, file_name=..., file_format="MINDIR")`` compiles
the Cell for example inputs; torch's graph savers know those inputs only where
the graph was made, a statement (or more) before the save. So the trace (or
export) and its save are rewritten together, in one function or module scope::

    traced = torch.jit.trace(model, x)          traced = model
    y = traced(x)                          ->   y = traced(x)
    traced.save(path)                           mindspore.export(traced, x, file_name=path, file_format="MINDIR")
    (or torch.jit.save(traced, path))

    torch.jit.trace(model, (x, m)).save(p) ->   mindspore.export(model, x, m, file_name=p, file_format="MINDIR")

    ep = torch.export.export(model, (x,))       ep = model
    y = ep.module()(x)                     ->   y = ep(x)
    torch.export.save(ep, path)                 mindspore.export(ep, x, file_name=path, file_format="MINDIR")

    ep = torch.export.load(path)                ep = nn.GraphCell(mindspore.load(path + ".mindir"))
    net = ep.module()                      ->   net = ep           (the load itself: rewrite_rules/runtime/export.py)

Measured (torch 2.13, MindSpore 2.10, CPU): ``torch.jit.trace`` and
``torch.export.export`` keep the module's mode (a module traced or exported in
training mode keeps its Dropout random: two calls of ``ep.module()`` differ),
and ``mindspore.export`` compiles a MindIR graph in the Cell's current mode (its
ONNX path alone switches to eval): so the mode is left as it is. The traced
module shares the model's parameters, so the save exports the model as it is
when saved. A tuple of example inputs is several positional inputs (torch
unpacks it); torch.export's ``args`` is always a tuple (``*args``). The
example inputs are written again in the save: when a name in them is assigned
between the trace and the save (or in a loop around the save), when the module's
mode is switched between them, when they are computed by a call that is not a
tensor factory (``next(iter(loader))``, which would run twice), or when the
save is in another function than the trace, the save is marked with the
reason. ``mindspore.export`` appends ``.mindir`` to the file name; the loads
(``torch.jit.load``, ``torch.export.load``) read that name.

``torch.save(model, path)`` of a whole Module (the file shows the object is a
Cell or a layer) writes ``mindspore.save_checkpoint(model, path)``: the
weights. Not MindIR, even where example inputs are at hand: ``torch.load``
gives back a Module the code goes on using as one (trains it, reads its
``state_dict()``, moves it), and a MindIR graph loads as an ``nn.GraphCell``
that can only be called. MindSpore cannot pickle a Cell, so the
``torch.load`` of such a file, where the code uses the loaded object as a model
(calls it, ``.eval()``, ``.parameters()`` ...) or reads the path a whole
model was saved to, is marked: the Cell is built again and the checkpoint loaded
into it (``mindspore.load_param_into_net(net, mindspore.load_checkpoint(...))``).

An ExportedProgram (``torch.export.export`` / ``load``) is rewritten only where
its uses are ``.module()`` and ``torch.export.save``; one used otherwise (its
graph, returned) is marked.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from transpiler.convert.engine import code_of, keyword_arg
from transpiler.convert.structural.checkpoints import checkpoint_file
from transpiler.convert.structural.provenance import CELL, LAYER, origin_of
from transpiler.convert.walk import LAYOUT_TYPES, StatementVisitor, walk

TRACE, SCRIPT = "torch.jit.trace", "torch.jit.script"
JIT_SAVE, SCRIPT_SAVE = "torch.jit.save", "torch.jit.ScriptModule.save"
EXPORT, EXPORT_SAVE, EXPORT_LOAD = "torch.export.export", "torch.export.save", "torch.export.load"
PROGRAM_MODULE = "torch.export.ExportedProgram.module"
SAVE, LOAD = "torch.save", "torch.load"
_APIS = frozenset({TRACE, JIT_SAVE, EXPORT, EXPORT_SAVE, EXPORT_LOAD, SAVE, LOAD})
# calls whose result is a TorchScript module that has no example inputs
_SCRIPTED = frozenset({SCRIPT, "torch.jit.trace_module", "torch.jit.freeze", "torch.jit.optimize_for_inference"})
_MODE_METHODS = frozenset({"train", "eval", "set_train"})
# methods of a Module whose use shows a loaded object is a model (not a tensor, not a dict)
_MODEL_METHODS = frozenset({"eval", "train", "forward", "parameters", "named_parameters", "modules", "named_modules",
                            "children", "named_children", "state_dict", "zero_grad", "apply", "buffers"})
_SELF_RETURNING = frozenset({"to", "cuda", "cpu", "eval", "train", "float", "half", "double"})
# tensor factories: written again in the export, they make inputs of the same shapes and dtypes
_FACTORIES = frozenset(f"torch.{name}" for name in (
    "randn", "rand", "zeros", "ones", "full", "empty", "randint", "arange", "linspace", "eye", "tensor",
    "as_tensor", "from_numpy", "randn_like", "rand_like", "zeros_like", "ones_like", "full_like", "empty_like",
    "randint_like", "Tensor", "FloatTensor", "LongTensor"))
_PURE_METHODS = frozenset({"to", "float", "half", "double", "long", "int", "bool", "cuda", "cpu", "unsqueeze",
                           "view", "reshape", "permute", "contiguous", "clone", "detach", "repeat", "expand", "type",
                           "transpose", "squeeze", "flatten"})

_FILE_OBJECTS = frozenset({"open", "io.open", "io.BytesIO", "BytesIO", "tempfile.NamedTemporaryFile",
                           "tempfile.TemporaryFile", "gzip.open"})
_NOT_A_PROGRAM = "the ExportedProgram is used as more than {name}.module() and torch.export.save({name}, path)"


# -- what the plan decided for one call ---------------------------------------
@dataclass
class _Site:
    kind: str  # one of the _K* below
    api: str
    reason: str = ""  # a marker's reason (_REFUSE)
    producer: int = 0  # id of the trace / export call whose inputs a save exports
    star: bool = False  # the producer's example inputs: a name that holds a tuple (*name)
    model: cst.BaseExpression | None = None  # torch.save: the saved object (original node)


_KTRACE, _KSAVE, _KMODULE, _KMODEL_SAVE, _REFUSE = "trace", "save", "module", "model save", "refuse"


# -- the scan -------------------------------------------------------------------
@dataclass(eq=False)
class _Event:
    index: int
    scope: int
    blocks: tuple[int, ...]  # ids of the blocks around it, outermost first (not a with's body: it always runs)
    loops: tuple[int, ...]  # ids of the loops around it
    node: cst.CSTNode
    value: cst.CSTNode | None = None  # a binding's value: what is assigned, a with item's expression


@dataclass(eq=False)
class _Scope:
    node: cst.CSTNode
    bindings: dict[str, list[_Event]] = field(default_factory=dict)  # name (or self.attr) -> where it is bound
    reads: dict[str, list[_Event]] = field(default_factory=dict)  # name -> where it is read
    is_module: bool = False


@dataclass(eq=False)
class _Producer:
    """``name = torch.jit.trace(...)`` / ``torch.export.export(...)`` / ``torch.export.load(...)`` /
    a scripted module, or such a call written inline (name None)."""

    api: str
    call: cst.Call
    event: _Event
    name: str | None  # the name (or self.attr) it is assigned to
    example: cst.BaseExpression | None = None
    problem: str = ""  # why its inputs cannot be exported again ("" none)
    attribute: bool = False  # assigned to an attribute (self.traced = ...)


def _arg(call: cst.Call, position: int, keyword: str) -> cst.Arg | None:
    positional = [a for a in call.args if a.keyword is None and not a.star]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg
    return positional[position] if position < len(positional) else None


def _value(call: cst.Call, position: int, keyword: str) -> cst.BaseExpression | None:
    arg = _arg(call, position, keyword)
    return arg.value if arg is not None else None


def _dotted(expr) -> str | None:
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        owner = _dotted(expr.value)
        return f"{owner}.{expr.attr.value}" if owner is not None else None
    return None


class _Scan(StatementVisitor):
    def __init__(self, analysis):
        super().__init__()
        self.analysis = analysis
        self.index = 0
        self.scopes: list[_Scope] = []
        self.all_scopes: list[_Scope] = []
        self.blocks: list[int] = []
        self.loops: list[int] = []
        self.transparent: set[int] = set()  # bodies of with statements: always run
        self.targets: set[int] = set()  # ids of Name nodes being bound
        self.producers: dict[int, _Producer] = {}  # id(call) -> producer
        self.bound_producers: list[_Producer] = []
        self.saves: list[tuple[cst.Call, str, cst.BaseExpression, _Event]] = []  # (call, api, what it saves, where)
        self.modules: list[tuple[cst.Call, cst.BaseExpression, _Event]] = []  # x.module() calls
        self.recognised: set[int] = set()  # ids of Name nodes used as x.module() / save(x, ...) receivers
        self.mode_calls: list[tuple[str, _Event]] = []  # (dotted receiver, where) of .train()/.eval()
        self.model_saves: list[tuple[cst.Call, _Event, bool]] = []  # torch.save calls (saving a Cell's self)
        self.loads: list[tuple[cst.Call, _Event]] = []  # torch.load calls
        self.model_uses: dict[int, str] = {}  # id(torch.load call used as a model right there) -> how
        self.used_as_model: list[tuple[str, _Event, str]] = []  # (name, where, how)
        self.bound_loads: dict[int, tuple[str, _Event]] = {}  # id(torch.load call) -> (name, its binding)

    # -- positions ----------------------------------------------------------
    def _event(self, node) -> _Event:
        self.index += 1
        return _Event(self.index, id(self.scopes[-1].node), tuple(self.blocks), tuple(self.loops), node)

    def scope(self, event: _Event) -> _Scope:
        return next(s for s in self.all_scopes if id(s.node) == event.scope)

    def _bind(self, name: str, node, value=None) -> _Event:
        event = self._event(node)
        event.value = value
        self.scopes[-1].bindings.setdefault(name, []).append(event)
        return event

    def _bind_target(self, target, value=None) -> _Event | None:
        if isinstance(target, cst.Name):
            self.targets.add(id(target))
            return self._bind(target.value, target, value)
        if isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind_target(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value)
        elif isinstance(target, cst.Attribute) and (dotted := _dotted(target)) is not None:
            return self._bind(dotted, target, value)
        return None

    # -- scopes, blocks, loops --------------------------------------------------
    def _push(self, node, is_module=False) -> None:
        scope = _Scope(node, is_module=is_module)
        self.scopes.append(scope)
        self.all_scopes.append(scope)

    def visit_Module(self, node) -> None:
        self._push(node, is_module=True)
        self.blocks.append(id(node))

    def visit_FunctionDef(self, node) -> None:
        self._bind(node.name.value, node)
        self._push(node)
        self.blocks.append(id(node.body))
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            self._bind(param.name.value, param)
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                self._bind(star.name.value, star)

    def leave_FunctionDef(self, node) -> None:
        self.scopes.pop()
        self.blocks.pop()

    def visit_ClassDef(self, node) -> None:
        self._bind(node.name.value, node)
        self._push(node)

    def _in_cell_method(self) -> bool:
        """Inside a method of one of the file's Cells (``self`` is the Cell)."""
        return len(self.scopes) >= 2 and isinstance(self.scopes[-1].node, cst.FunctionDef) \
            and isinstance(self.scopes[-2].node, cst.ClassDef) \
            and self.scopes[-2].node.name.value in self.analysis.cell_classes

    def leave_ClassDef(self, node) -> None:
        self.scopes.pop()

    def visit_With(self, node) -> None:
        self.transparent.add(id(node.body))
        for item in node.items:
            if item.asname is not None:
                self._bind_target(item.asname.name, item.item)

    def visit_IndentedBlock(self, node) -> None:
        if id(node) not in self.transparent and not (self.scopes and node is getattr(self.scopes[-1].node, "body", None)):
            self.blocks.append(id(node))

    def leave_IndentedBlock(self, node) -> None:
        if id(node) not in self.transparent and not (self.scopes and node is getattr(self.scopes[-1].node, "body", None)):
            self.blocks.pop()

    def visit_SimpleStatementSuite(self, node) -> None:
        self.blocks.append(id(node))

    def leave_SimpleStatementSuite(self, node) -> None:
        self.blocks.pop()

    def visit_For(self, node) -> None:
        self.loops.append(id(node))
        self._bind_target(node.target)

    def leave_For(self, node) -> None:
        self.loops.pop()

    def visit_While(self, node) -> None:
        self.loops.append(id(node))

    def leave_While(self, node) -> None:
        self.loops.pop()

    # -- bindings -------------------------------------------------------------------
    def visit_Assign(self, node) -> None:
        value = node.value
        producer = self._producer(value) if isinstance(value, cst.Call) else None
        bound = [self._bind_target(target.target, value) for target in node.targets]
        single = bound[0] if len(bound) == 1 else None
        if producer is not None and single is not None:
            target = node.targets[0].target
            producer.name = target.value if isinstance(target, cst.Name) else _dotted(target)
            producer.attribute = not isinstance(target, cst.Name)
            producer.event = single
            self.bound_producers.append(producer)
        load = _unwrap_self_returning(value)
        if isinstance(load, cst.Call) and self.analysis.qualified(load.func) == LOAD and single is not None \
                and isinstance(node.targets[0].target, cst.Name):
            self.bound_loads[id(load)] = (node.targets[0].target.value, single)

    def visit_AnnAssign(self, node) -> None:
        if node.value is not None:
            self._bind_target(node.target, node.value)

    def visit_AugAssign(self, node) -> None:
        self._bind_target(node.target)

    def visit_NamedExpr(self, node) -> None:
        self._bind_target(node.target)

    def visit_Del(self, node) -> None:
        self._bind_target(node.target)

    def visit_CompFor(self, node) -> None:
        self._bind_target(node.target)

    def visit_ImportAlias(self, node) -> None:
        name = node.asname.name if node.asname is not None else node.name
        if isinstance(name, cst.Name):
            self._bind(name.value, node)

    def visit_Name(self, node) -> None:
        if id(node) not in self.targets:
            self.scopes[-1].reads.setdefault(node.value, []).append(self._event(node))

    # -- calls ---------------------------------------------------------------------------
    def _producer(self, call: cst.Call) -> _Producer | None:
        known = self.producers.get(id(call))
        if known is not None:
            return known
        qualified = self.analysis.qualified(call.func)
        if qualified == TRACE:
            example = _value(call, 1, "example_inputs")
            problem = ""
            if _arg(call, 10, "example_kwarg_inputs") is not None:
                problem = "keyword example inputs (example_kwarg_inputs): mindspore.export takes positional inputs"
            elif example is None:
                problem = "no example inputs in the trace"
        elif qualified == EXPORT:
            example = _value(call, 1, "args")
            kwargs = _value(call, 2, "kwargs")
            problem = ""
            if kwargs is not None and not (isinstance(kwargs, cst.Name) and kwargs.value == "None"):
                problem = "keyword inputs (kwargs): mindspore.export takes positional inputs"
            elif example is None:
                problem = "no example inputs in the export"
        elif qualified == EXPORT_LOAD or qualified in _SCRIPTED:
            example, problem = None, ""
        else:
            return None
        if any(arg.star for arg in call.args) and not problem:
            problem = "unpacked arguments: the example inputs are not known"
        producer = _Producer(qualified, call, self._event(call), None, example, problem)
        self.producers[id(call)] = producer
        return producer

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self.analysis.qualified(node.func)
        if qualified is not None:
            self._producer(node)
            if qualified in (JIT_SAVE, EXPORT_SAVE):
                saved = _value(node, 0, "m" if qualified == JIT_SAVE else "ep")
                if saved is not None:
                    if isinstance(saved, cst.Name):
                        self.recognised.add(id(saved))
                    self.saves.append((node, qualified, saved, self._event(node)))
            elif qualified == SAVE:
                saved = _value(node, 0, "obj")
                own = isinstance(saved, cst.Name) and saved.value == "self" and self._in_cell_method()
                self.model_saves.append((node, self._event(node), own))
            elif qualified == LOAD:
                self.loads.append((node, self._event(node)))
            return
        func = node.func
        if not isinstance(func, cst.Attribute):
            self._model_use(func, "called")
            return
        method, receiver = func.attr.value, func.value
        if method == "save" and (isinstance(receiver, (cst.Name, cst.Attribute)) or self._is_producer_call(receiver)):
            if isinstance(receiver, cst.Name):
                self.recognised.add(id(receiver))
            self.saves.append((node, SCRIPT_SAVE, receiver, self._event(node)))
        elif method == "module" and not node.args:
            if isinstance(receiver, cst.Name):
                self.recognised.add(id(receiver))
            self.modules.append((node, receiver, self._event(node)))
        if method in _MODE_METHODS and (dotted := _dotted(receiver)) is not None:
            self.mode_calls.append((dotted, self._event(node)))
        if method in _MODEL_METHODS:
            self._model_use(receiver, f".{method}()")

    def _is_producer_call(self, expr) -> bool:
        return isinstance(expr, cst.Call) and self.analysis.qualified(expr.func) in (TRACE, EXPORT, *_SCRIPTED)

    def _model_use(self, expr, how: str) -> None:
        inner = _unwrap_self_returning(expr)
        if isinstance(inner, cst.Call) and self.analysis.qualified(inner.func) == LOAD:
            self.model_uses[id(inner)] = how
        elif isinstance(expr, cst.Name):
            self.used_as_model.append((expr.value, self._event(expr), how))


def _unwrap_self_returning(expr):
    """``torch.load(p).to(device).eval()`` -> ``torch.load(p)``."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
            and expr.func.attr.value in _SELF_RETURNING:
        expr = expr.func.value
    return expr


# -- flow questions ------------------------------------------------------------
_AMBIGUOUS = object()


def _is_prefix(outer: tuple, inner: tuple) -> bool:
    return inner[:len(outer)] == outer


def _reaching(scope: _Scope, name: str, at: _Event):
    """The binding of ``name`` in ``scope`` that a use at ``at`` reads: an _Event, None (not bound in
    this scope before it) or _AMBIGUOUS (a conditional binding, or one a loop brings round again)."""
    bindings = scope.bindings.get(name, [])
    before = [b for b in bindings if b.index < at.index]
    if not before:
        return _AMBIGUOUS if any(set(b.loops) & set(at.loops) for b in bindings) else None
    last = max(before, key=lambda b: b.index)
    if not _is_prefix(last.blocks, at.blocks):
        return _AMBIGUOUS
    for b in bindings:
        if b.index > at.index and any(loop in at.loops and loop not in last.loops for loop in b.loops):
            return _AMBIGUOUS
    return last


def _rebound(scope: _Scope, name: str, start: _Event, end: _Event) -> bool:
    """``name`` is bound again after ``start`` before ``end`` runs (or in a loop around ``end`` only)."""
    for b in scope.bindings.get(name, []):
        if start.index < b.index < end.index:
            return True
        if b.index > end.index and any(loop in end.loops and loop not in start.loops for loop in b.loops):
            return True
    return False


def _read_names(expr) -> set[str]:
    """The names (and ``self.attr`` chains) an expression reads."""
    found: set[str] = set()

    class _Names(cst.CSTVisitor):
        def visit_Attribute(self, node):
            dotted = _dotted(node)
            if dotted is not None:
                found.add(dotted)

        def visit_Name(self, node):
            found.add(node.value)

        def visit_Arg(self, node):
            if node.value is not None:
                node.value.visit(self)
            return False

    expr.visit(_Names())
    return found


def _pure(expr, analysis) -> bool:
    """Evaluating ``expr`` again makes inputs of the same shapes and dtypes, with no other effect."""
    if isinstance(expr, (cst.Name, cst.Integer, cst.Float, cst.SimpleString, cst.Ellipsis)):
        return True
    if isinstance(expr, cst.Attribute):
        return _dotted(expr) is not None or _pure(expr.value, analysis)
    if isinstance(expr, (cst.Tuple, cst.List)):
        return all(_pure(e.value, analysis) for e in expr.elements)
    if isinstance(expr, cst.UnaryOperation):
        return _pure(expr.expression, analysis)
    if isinstance(expr, cst.BinaryOperation):
        return _pure(expr.left, analysis) and _pure(expr.right, analysis)
    if isinstance(expr, cst.Subscript):
        return _pure(expr.value, analysis) and all(
            isinstance(e.slice, cst.Index) and _pure(e.slice.value, analysis) for e in expr.slice)
    if isinstance(expr, cst.Call):
        args = all(_pure(a.value, analysis) for a in expr.args)
        qualified = analysis.qualified(expr.func)
        if qualified is not None:
            return qualified in _FACTORIES and args
        func = expr.func
        return isinstance(func, cst.Attribute) and func.attr.value in _PURE_METHODS and _pure(func.value, analysis) \
            and args
    return False


# -- the pass ---------------------------------------------------------------------------
class GraphExports:
    """Plans the saves of traced / exported models before the traversal; rewrites each
    planned call as the traversal leaves it (``leave_call``)."""

    def __init__(self, rewriter):
        self.rewriter = rewriter
        self.ctx = rewriter.ctx
        self.sites: dict[int, _Site] = {}
        self.inputs: dict[int, list[cst.Arg]] = {}  # id(trace / export call) -> the converted example inputs

    # -- plan -------------------------------------------------------------------
    def plan(self, module: cst.Module) -> None:
        analysis = self.ctx.analysis
        if not (_APIS | _SCRIPTED) & set(analysis.references.values()):
            return
        scan = _Scan(analysis)
        walk(module, scan, prune=LAYOUT_TYPES)
        self.scan = scan
        for call, api, saved, event in scan.saves:
            self._plan_save(scan, call, api, saved, event)
        for call, receiver, event in scan.modules:
            self._plan_module(scan, call, receiver, event)
        for producer in scan.bound_producers:
            if producer.api in (EXPORT, EXPORT_LOAD) and not producer.attribute:
                self._check_program(scan, producer)
        receivers = {id(receiver) for _, receiver, _ in scan.modules}
        for producer in scan.producers.values():
            if producer.api == EXPORT_LOAD and (producer.name is None or producer.attribute) \
                    and id(producer.call) not in receivers:
                self._refuse(producer.call, EXPORT_LOAD, "the loaded ExportedProgram is kept as more than "
                             "torch.export.load(path).module() or a name whose uses are .module(): a MindIR file "
                             "loads as an nn.GraphCell, the callable .module() gives")
        for call, event, own in scan.model_saves:
            saved = _value(call, 0, "obj")
            origin = origin_of(self.ctx, saved) if saved is not None and not own else None
            if (own or origin is not None and origin.kind in (CELL, LAYER)) and not any(a.star for a in call.args):
                self.sites[id(call)] = _Site(_KMODEL_SAVE, SAVE, model=saved)
        self._plan_loads(scan)
        interesting = self.ctx.analysis.interesting
        for statement_ids in self._statements(module):
            interesting.update(statement_ids)

    def _statements(self, module):
        """The statements around every planned call: the traversal must visit them (a
        ``traced.save(path)`` statement holds no torch name of its own)."""
        wanted = set(self.sites)
        found: list[list[int]] = []

        class _Around(StatementVisitor):
            def visit_Call(inner, node):
                if id(node) in wanted:
                    found.append([id(s) for s in inner.statements])

        walk(module, _Around(), prune=LAYOUT_TYPES)
        return found

    def _refuse(self, call, api: str, reason: str) -> None:
        self.sites[id(call)] = _Site(_REFUSE, api, reason)

    def _resolve(self, scan: _Scan, expr, event: _Event, apis) -> tuple[_Producer | None, str]:
        """The producer (of one of ``apis``) an expression holds where it is used, or why it is not known."""
        if isinstance(expr, cst.Call):
            producer = scan.producers.get(id(expr))
            return (producer, "") if producer is not None and producer.api in apis else (None, "")
        if isinstance(expr, cst.Attribute):
            dotted = _dotted(expr)
            held = dotted is not None and any(p.name == dotted and p.attribute for p in scan.bound_producers
                                              if p.api in apis)
            return None, "attribute" if held else ""
        if not isinstance(expr, cst.Name):
            return None, ""
        scope = scan.scope(event)
        binding = _reaching(scope, expr.value, event)
        mine = [p for p in scan.bound_producers if p.name == expr.value and not p.attribute and p.api in apis]
        if binding is _AMBIGUOUS:
            return None, "ambiguous" if any(p.event.scope == event.scope for p in mine) else ""
        if binding is None:
            return None, "elsewhere" if mine else ""
        producer = next((p for p in mine if p.event is binding), None)
        return producer, ""

    def _plan_save(self, scan: _Scan, call, api: str, saved, event: _Event) -> None:
        producer, why = self._resolve(scan, saved, event, (TRACE, EXPORT, *_SCRIPTED))
        what = code_of(saved)
        if producer is None:
            if why == "elsewhere":
                self._refuse(call, api, f"{what} is traced (or exported) in another function: the save has no "
                             "example inputs for mindspore.export there; export in the function that traces, with "
                             "mindspore.export(net, *inputs, file_name=f, file_format=\"MINDIR\")")
            elif why == "attribute":
                self._refuse(call, api, f"{what} is an attribute holding the trace: the save cannot see the trace's "
                             "example inputs; export where the module is traced, with mindspore.export(net, *inputs, "
                             "file_name=f, file_format=\"MINDIR\")")
            elif why == "ambiguous":
                self._refuse(call, api, f"{what} may not hold the traced module here (assigned again, or "
                             "conditionally, before the save): export the Cell with mindspore.export(net, *inputs, "
                             "file_name=f, file_format=\"MINDIR\")")
            return  # not a saved graph the file shows (another object's save, or the rule's marker)
        expected = EXPORT_SAVE if producer.api == EXPORT else (JIT_SAVE, SCRIPT_SAVE)
        if api not in expected:
            return  # torch.jit.save of an ExportedProgram, ep.save(...): not torch's pairing, left to the rules
        if producer.api in _SCRIPTED:
            self._refuse(call, api, f"{producer.api} makes a module with no example inputs: export the Cell with "
                         "mindspore.export(net, *inputs, file_name=f, file_format=\"MINDIR\")")
            return
        path = _value(call, 1 if api != SCRIPT_SAVE else 0, "f")
        extra = _arg(call, 2 if api == JIT_SAVE else 1, "_extra_files" if api != EXPORT_SAVE else "extra_files")
        if api == EXPORT_SAVE:
            extra = next((a for a in call.args if a.keyword is not None and a.keyword.value == "extra_files"), None)
        reason = producer.problem
        if not reason and path is None:
            reason = "no file name: mindspore.export writes a file"
        if not reason and extra is not None:
            reason = "extra files: a MindIR file holds the graph only"
        if not reason and any(a.star for a in call.args):
            reason = "unpacked arguments"
        if not reason and isinstance(path, cst.Name) and self._is_file_object(scan, path, event):
            reason = f"{path.value} is a file object: mindspore.export writes to a file name"
        if not reason and producer.name is not None:
            reason = self._inputs_problem(scan, producer, event)
        if reason:
            self._refuse(call, api, reason)
            return
        star = False
        example = producer.example
        if producer.api == EXPORT:
            star = not isinstance(example, cst.Tuple)
        elif isinstance(example, cst.Name):
            holder = _reaching(scan.scope(producer.event), example.value, producer.event)
            star = isinstance(holder, _Event) and isinstance(holder.value, cst.Tuple)
        self.sites[id(call)] = _Site(_KSAVE, api, producer=id(producer.call), star=star)
        self.sites[id(producer.call)] = _Site(_KTRACE, producer.api)

    def _is_file_object(self, scan: _Scan, name: cst.Name, event: _Event) -> bool:
        binding = _reaching(scan.scope(event), name.value, event)
        if not isinstance(binding, _Event):
            return False
        value = binding.value
        return isinstance(value, cst.Call) and code_of(value.func) in _FILE_OBJECTS

    def _inputs_problem(self, scan: _Scan, producer: _Producer, save: _Event) -> str:
        """Why the example inputs of a trace / export assigned to a name cannot be written again at the save."""
        start = producer.event
        if start.scope != save.scope:
            return "traced in another function"
        example = producer.example
        if not _pure(example, self.ctx.analysis):
            return (f"the example inputs are computed in the trace ({code_of(example)}): assign them to a variable "
                    "before it, so that the export can use them again")
        scope = scan.scope(save)
        for name in sorted(_read_names(example)):
            if _rebound(scope, name, start, save):
                return (f"{name} (the example inputs of the trace) is assigned again between the trace and the save: "
                        "export with the inputs it was traced with")
        model = _value(producer.call, 0, "func" if producer.api == TRACE else "mod")
        watched = {producer.name, _dotted(model) if model is not None else None} - {None}
        for dotted, event in scan.mode_calls:
            if dotted in watched and event.scope == save.scope and start.index < event.index < save.index:
                return (f"{dotted}'s mode is switched between the trace and the save: torch saves the graph traced "
                        "in the earlier mode; export right after the trace")
        return ""

    def _plan_module(self, scan: _Scan, call, receiver, event: _Event) -> None:
        producer, _ = self._resolve(scan, receiver, event, (EXPORT, EXPORT_LOAD))
        if producer is not None:
            self.sites[id(call)] = _Site(_KMODULE, PROGRAM_MODULE, producer=id(producer.call))
            if producer.api == EXPORT and producer.name is None:
                self.sites.setdefault(id(producer.call), _Site(_KTRACE, EXPORT))

    def _check_program(self, scan: _Scan, producer: _Producer) -> None:
        """An ExportedProgram bound to a name: every read of the name that reaches it must be
        ``name.module()`` or ``torch.export.save(name, ...)``; otherwise the program is marked."""
        name, home = producer.name, producer.event.scope
        other = None
        for scope in scan.all_scopes:
            for read in scope.reads.get(name, []):
                if id(read.node) in scan.recognised:
                    continue
                if id(scope.node) == home:
                    reached = _reaching(scope, name, read)
                    if read.index > producer.event.index and (reached is producer.event or reached is _AMBIGUOUS):
                        other = read
                elif scan.scope(producer.event).is_module and name not in scope.bindings:
                    other = read
        if other is None:
            if producer.api == EXPORT:
                self.sites.setdefault(id(producer.call), _Site(_KTRACE, EXPORT))
            return
        for call_id, site in list(self.sites.items()):
            if site.producer == id(producer.call):
                del self.sites[call_id]  # the program stays torch's: its saves and .module() calls too
        self._refuse(producer.call, producer.api, _NOT_A_PROGRAM.format(name=name) +
                     ("; a loaded MindIR file is an nn.GraphCell, the callable .module() gives"
                      if producer.api == EXPORT_LOAD else
                      "; MindSpore exports the Cell itself: mindspore.export(net, *args, file_name=f, "
                      "file_format=\"MINDIR\")"))

    def _plan_loads(self, scan: _Scan) -> None:
        saved_paths = {code_of(_value(call, 1, "f")): call for call, _, _ in scan.model_saves
                       if id(call) in self.sites and _value(call, 1, "f") is not None}
        for call, event in scan.loads:
            path = _value(call, 0, "f")
            how = scan.model_uses.get(id(call))
            if how is not None:
                how = "the loaded object is called" if how == "called" else f"the loaded object's {how} is called"
            name, binding = scan.bound_loads.get(id(call), (None, None))
            if how is None and name is not None:
                scope = scan.scope(event)
                for used, where, what in scan.used_as_model:
                    if used == name and where.scope == event.scope and _reaching(scope, name, where) is binding:
                        how = f"{name} is called" if what == "called" else f"{name}{what} is called"
                        break
            if how is None and path is not None and code_of(path) in saved_paths:
                how = f"the file torch.save({code_of(_value(saved_paths[code_of(path)], 0, 'obj'))}, ...) wrote"
            if how is None:
                continue
            where = code_of(checkpoint_file(path)) if path is not None else "the checkpoint"
            self._refuse(call, LOAD, f"a whole pickled model ({how}): MindSpore cannot pickle a Cell, and "
                         f"torch.save(model, path) writes its weights (mindspore.save_checkpoint); build the Cell "
                         f"again and load them: net = Net(...); mindspore.load_param_into_net(net, "
                         f"mindspore.load_checkpoint({where}))")

    # -- rewrite ------------------------------------------------------------------
    def leave_call(self, original: cst.Call, updated: cst.Call):
        site = self.sites.get(id(original))
        if site.kind == _REFUSE:
            self.rewriter.mark(original, site.api, site.reason)
            return updated
        if site.kind == _KTRACE:
            return self._produced(original, updated, site)
        if site.kind == _KMODULE:
            self.rewriter.changed()
            self.ctx.converted(original, PROGRAM_MODULE, f"{code_of(original)} -> the model itself (MindSpore runs "
                               "the Cell, or the GraphCell a loaded MindIR file is)")
            return updated.func.value
        if site.kind == _KSAVE:
            return self._save(original, updated, site)
        return self._model_save(original, updated, site)

    def _produced(self, original, updated, site: _Site):
        """The trace / export: the model itself; its converted example inputs are kept for the save."""
        model = _value(updated, 0, "func" if site.api == TRACE else "mod")
        example = _value(updated, 1, "example_inputs" if site.api == TRACE else "args")
        if model is None:
            self.rewriter.mark(original, site.api, "no model to trace")
            return updated
        if isinstance(example, cst.Tuple):
            self.inputs[id(original)] = [cst.Arg(e.value) for e in example.elements]
        elif example is not None:
            self.inputs[id(original)] = [cst.Arg(example)]
        self.ctx.consume(original.func)
        self.rewriter.changed()
        self.ctx.converted(original, site.api, f"{code_of(original.func)}(model, ...) -> the model itself; its "
                           "example inputs go to mindspore.export where the graph is saved")
        return model

    def _save(self, original, updated, site: _Site):
        inputs = self.inputs.get(site.producer)
        api = site.api
        if inputs is None:
            self.rewriter.mark(original, api, "the trace's example inputs were not converted before the save")
            return updated
        if api == SCRIPT_SAVE:
            model, path = updated.func.value, _value(updated, 0, "f")
        else:
            model, path = _value(updated, 0, "m" if api == JIT_SAVE else "ep"), _value(updated, 1, "f")
        args = [cst.Arg(model)]
        if site.star and len(inputs) == 1:
            args.append(cst.Arg(inputs[0].value.deep_clone(), star="*"))
        else:
            args.extend(cst.Arg(a.value.deep_clone()) for a in inputs)
        args.append(keyword_arg("file_name", path))
        args.append(keyword_arg("file_format", cst.SimpleString('"MINDIR"')))
        if api != SCRIPT_SAVE:
            self.ctx.consume(original.func)
        self.rewriter.changed()
        self.ctx.converted(original, api, f"{code_of(original)} -> mindspore.export of a MindIR graph with the "
                           "example inputs of the trace (written to file_name + '.mindir'), in the Cell's mode")
        return cst.Call(self.ctx.ref("mindspore.export"), args)

    def _model_save(self, original, updated, site: _Site):
        model, path = _value(updated, 0, "obj"), _value(updated, 1, "f")
        if path is None:
            self.rewriter.mark(original, SAVE, "no file name")
            return updated
        self.ctx.consume(original.func)
        self.rewriter.changed()
        if not (isinstance(path, cst.SimpleString) and str(path.evaluated_value).endswith(".ckpt")):
            self.ctx.warn(original, SAVE, 'mindspore.save_checkpoint appends ".ckpt" to a file name without it')
        self.ctx.converted(original, SAVE, f"torch.save of a whole model ({code_of(site.model)}) -> "
                           "mindspore.save_checkpoint of its weights: MindSpore cannot pickle a Cell; a load "
                           "builds the Cell again and loads them into it")
        return cst.Call(self.ctx.ref("mindspore.save_checkpoint"), [cst.Arg(model), cst.Arg(path)])


