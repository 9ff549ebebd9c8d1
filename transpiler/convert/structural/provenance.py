"""Where an object was made: which variables and attributes hold an optimizer,
an lr scheduler, a GradScaler, an autocast context, a DataLoader, a torch layer
or one of the file's own Cells, read from what the file says.

Evidence, in the original tree (flow-insensitive: every binding of a name
counts, and bindings that disagree make it unknown):

- the constructor call a name or ``self.attribute`` is assigned from
  (``optimizer = torch.optim.AdamW(...)``, ``self.scaler = GradScaler()``);
- calls of the file's own functions and methods, through what they return
  (``optimizer = model.configure_optimizers(...)``);
- function parameters, through every call of the function in the file
  (``train(loader, model, optimizer)``) or their annotation
  (``optimizer: torch.optim.Optimizer``);
- wrappers that return what they wrap (``torch.compile(model)``,
  ``nn.DataParallel(model)``, ``model.to(device)``), conditional expressions
  whose branches agree, ``nn.ModuleDict(dict(key=Layer(...)))`` members and
  ``isinstance(x, nn.Linear)`` tests around a use.

Anything else is unknown: callers decide what an unknown receiver means
(usually: leave it alone, or mark it), never guess from a variable's name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from transpiler.convert.torch_contexts import AUTOCASTS
from transpiler.convert.walk import LAYOUT_TYPES, walk

OPTIMIZER, SCHEDULER, SCALER, AUTOCAST, NULLCONTEXT = "optimizer", "scheduler", "scaler", "autocast", "nullcontext"
LOADER, WRITER, LAYER, CELL, INSTANCE, GENERATOR = "loader", "writer", "layer", "cell", "instance", "generator"
WRAPPER = "wrapper"  # DataParallel(model): ``.module`` is the wrapped model
TYPE_INFO = "type_info"  # torch.finfo(dtype) / torch.iinfo(dtype): its rule maps the attribute reads

_SCHEDULER_PREFIX = "torch.optim.lr_scheduler."
_SCALERS = frozenset({"torch.amp.GradScaler", "torch.cuda.amp.GradScaler", "torch.amp.grad_scaler.GradScaler",
                      "torch.cpu.amp.GradScaler"})
_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
_WRITERS = frozenset({"torch.utils.tensorboard.SummaryWriter", "torch.utils.tensorboard.writer.SummaryWriter"})
_WRAPPERS = frozenset({"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                       "torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.data_parallel.DataParallel"})
_TYPE_INFOS = frozenset({"torch.finfo", "torch.iinfo"})
_TRANSPARENT_CALLS = frozenset({"torch.compile"})  # return their first argument's object
_LAYER_PREFIX = "torch.nn."
_NOT_LAYERS = ("torch.nn.functional.", "torch.nn.init.", "torch.nn.utils.", "torch.nn.parallel.", "torch.nn.parameter.")
# tensors, not layers: self.weight = nn.Parameter(...) has tensor methods (self.weight.size(1))
_PARAMETERS = frozenset({"torch.nn.Parameter", "torch.nn.Buffer", "torch.nn.UninitializedParameter",
                         "torch.nn.UninitializedBuffer"})
# methods of a Module that return the Module itself
_SELF_RETURNING = frozenset({"to", "cuda", "cpu", "float", "half", "double", "bfloat16", "train", "eval",
                             "requires_grad_", "apply", "to_empty", "share_memory"})
_CONTAINERS = frozenset({"torch.nn.ModuleDict", "torch.nn.Sequential"})
_ANNOTATIONS = {
    "torch.optim.Optimizer": OPTIMIZER,
    "torch.optim.optimizer.Optimizer": OPTIMIZER,
    "torch.optim.lr_scheduler.LRScheduler": SCHEDULER,
    "torch.optim.lr_scheduler._LRScheduler": SCHEDULER,
    "torch.utils.data.DataLoader": LOADER,
}


@dataclass(frozen=True)
class Origin:
    kind: str
    qualified: str = ""  # the torch API or the file's class that made the object
    call: cst.Call | None = field(default=None, compare=False, repr=False)  # the constructor call as written
    inner: "Origin | None" = field(default=None, compare=False, repr=False)  # what a WRAPPER wraps
    # isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)): the other layers it may be (``qualified`` is the first)
    alternatives: tuple[str, ...] = field(default=(), compare=False, repr=False)

    def __eq__(self, other):
        return isinstance(other, Origin) and (self.kind, self.qualified) == (other.kind, other.qualified)

    def __hash__(self):
        return hash((self.kind, self.qualified))


_MINDSPORE_KINDS = (  # converted output read again: the same objects under their MindSpore names
    ("mindspore.experimental.optim.lr_scheduler.", SCHEDULER),
    ("mindspore.experimental.optim.", OPTIMIZER),
    ("mindspore.amp.DynamicLossScaler", SCALER),
    ("mindspore.amp.StaticLossScaler", SCALER),
    ("tensorboardX.SummaryWriter", WRITER),
)


def classify_mindspore_call(qualified: str) -> str | None:
    for prefix, kind in _MINDSPORE_KINDS:
        if qualified.startswith(prefix) and qualified.rsplit(".", 1)[-1][:1].isupper():
            return kind
    return None


def classify_call(qualified: str) -> str | None:
    """The kind of object a torch constructor makes, or None."""
    if qualified.startswith(_SCHEDULER_PREFIX):
        return SCHEDULER if qualified[len(_SCHEDULER_PREFIX):][:1].isupper() else None
    if qualified in _SCALERS:
        return SCALER
    if qualified in AUTOCASTS:
        return AUTOCAST
    if qualified.startswith("torch.optim.") and qualified.rsplit(".", 1)[-1][:1].isupper():
        return OPTIMIZER
    if qualified in _LOADERS:
        return LOADER
    if qualified in _WRITERS:
        return WRITER
    if qualified == "torch.Generator":
        return GENERATOR
    if qualified in _TYPE_INFOS:
        return TYPE_INFO
    if qualified.startswith(_LAYER_PREFIX) and not qualified.startswith(_NOT_LAYERS) and qualified not in _PARAMETERS:
        last = qualified.rsplit(".", 1)[-1]  # a layer class, or its constructor Embedding.from_pretrained
        return LAYER if last[:1].isupper() or last == "from_pretrained" else None
    return None


@dataclass
class _Scope:
    node: cst.CSTNode
    kind: str  # "module", "function", "class"
    parent: "_Scope | None"
    bindings: dict[str, list] = field(default_factory=dict)  # name -> [(value, scope) | _Param | None]
    functions: dict[str, cst.FunctionDef] = field(default_factory=dict)
    classes: dict[str, cst.ClassDef] = field(default_factory=dict)
    class_name: str | None = None  # for methods: the class they belong to
    self_name: str | None = None  # for methods: the name of their first parameter


@dataclass(frozen=True)
class _Param:
    function: cst.FunctionDef
    index: int  # position among the parameters (self included)
    name: str
    annotation: cst.BaseExpression | None
    scope: _Scope


def remember_module(ctx, module: cst.Module) -> None:
    """Keep the original tree on the file context: provenance is built from it on first use."""
    ctx.facts["module"] = module


def provenance_of(ctx, module: cst.Module | None = None) -> "Provenance | None":
    """The file's provenance, built once, when first needed."""
    found = ctx.facts.get("provenance")
    if found is None:
        module = module if module is not None else ctx.facts.get("module")
        if module is None:
            return None
        found = ctx.facts["provenance"] = Provenance(module, ctx.analysis)
    return found


def origin_of(ctx, expr: cst.BaseExpression) -> "Origin | None":
    """Where ``expr`` (a node of the original tree) was made, for rule hooks; None if unknown."""
    provenance = provenance_of(ctx)
    return provenance.origin(expr) if provenance is not None and expr is not None else None


class Provenance:
    def __init__(self, module: cst.Module, analysis):
        self.analysis = analysis
        collector = _Collector(module)
        walk(module, collector, prune=LAYOUT_TYPES)
        self.module_scope = collector.scopes[0]
        self.node_scope: dict[int, _Scope] = collector.node_scope
        self.function_scope: dict[int, _Scope] = collector.function_scope
        self.class_attrs: dict[tuple[str, str], list] = collector.class_attrs
        self.methods: dict[tuple[str, str], cst.FunctionDef] = collector.methods
        self.classes: dict[str, cst.ClassDef] = collector.all_classes
        self.calls_by_name: dict[str, list[tuple[cst.Call, _Scope]]] = collector.calls_by_name
        self.returns: dict[int, list] = collector.returns
        self.narrowing: dict[int, list[tuple[cst.BaseExpression, cst.BaseExpression]]] = collector.narrowing
        self._busy: set = set()
        self._memo: dict = {}
        self._met_cycle = False  # the answer being resolved came back to one being resolved (see _resolve_once)
        self._steps_left = 0  # of the question being answered (see _BUDGET)

    # -- public ---------------------------------------------------------------
    def origin(self, expr: cst.BaseExpression, scope: "_Scope | None" = None) -> Origin | None:
        """Where the object ``expr`` (a node of the original tree) was made, if the file says."""
        if scope is None:
            scope = self.scope_of(expr)
            if scope is None:
                return None
        found = self._origin(expr, scope)
        return found if isinstance(found, Origin) else None

    def kind(self, expr: cst.BaseExpression, scope=None) -> str | None:
        found = self.origin(expr, scope)
        return found.kind if found is not None else None

    def values_of(self, expr: cst.BaseExpression) -> list[cst.BaseExpression] | None:
        """The expressions a name (or ``self.attribute``) is assigned from in the file;
        None when some binding does not show its value (a loop variable, a parameter ...)."""
        entries = self._entries(expr)
        if any(entry is UNKNOWN or isinstance(entry, _Param) for entry in entries):
            return None
        return [entry[0] for entry in entries if isinstance(entry, tuple)]

    def may_be_none(self, expr: cst.BaseExpression, follow: bool = True) -> bool:
        """The file shows ``expr`` may be None: ``None``, ``a if c else None``, or a name
        (``self.attribute``) some assignment of which is such a value."""
        if _is_none(expr):
            return True
        if isinstance(expr, cst.IfExp):
            return self.may_be_none(expr.body, follow) or self.may_be_none(expr.orelse, follow)
        if not follow or not isinstance(expr, (cst.Name, cst.Attribute)):
            return False
        return any(entry is None or (isinstance(entry, tuple) and self.may_be_none(entry[0], False))
                   for entry in self._entries(expr))

    def _entries(self, expr: cst.BaseExpression) -> list:
        scope = self.scope_of(expr)
        if scope is None:
            return []
        if isinstance(expr, cst.Name):
            owner = _binding_scope(expr.value, scope)
            return owner.bindings.get(expr.value, []) if owner is not None else []
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) \
                and expr.value.value == scope.self_name and scope.class_name:
            return self.class_attrs.get((scope.class_name, expr.attr.value), [])
        return []

    def returned_by(self, call: cst.Call) -> list[cst.BaseExpression] | None:
        """What the file's function called here returns (None: not a function of this file)."""
        function = self.function_called(call, methods=False)
        if function is None:
            return None
        return [value for value, _ in self.returns.get(id(function), [])] or None

    def function_called(self, call: cst.Call, methods: bool = True) -> cst.FunctionDef | None:
        """The file's function ``f(...)`` calls, or (``methods``) the method of
        the enclosing class ``self.m(...)`` calls inside a method; None otherwise."""
        scope = self.scope_of(call)
        if scope is None:
            return None
        if isinstance(call.func, cst.Name):
            owner = _binding_scope(call.func.value, scope)
            return owner.functions.get(call.func.value) if owner is not None else None
        func = call.func
        if methods and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) \
                and func.value.value == scope.self_name and scope.class_name:
            return self._method(scope.class_name, func.attr.value)
        return None

    def appended(self, name: cst.Name) -> list[cst.BaseExpression] | None:
        """What ``name.append(value)`` calls in the name's scope append (None: some call is not one argument)."""
        scope = self.scope_of(name)
        owner = _binding_scope(name.value, scope) if scope is not None else None
        if owner is None:
            return None
        found = []
        for call, call_scope in self.calls_by_name.get("append", ()):
            receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
            if isinstance(receiver, cst.Name) and receiver.value == name.value \
                    and _binding_scope(name.value, call_scope) is owner:
                if len(call.args) != 1:
                    return None
                found.append(call.args[0].value)
        return found

    def added_to(self, made: cst.Call) -> list[cst.BaseExpression] | None:
        """What ``x.append(v)`` / ``x.extend(vs)`` add to the object the call ``made`` makes, where
        it is assigned to ``self.x`` (in any method of its class) or a name (in its scope);
        None when the file does not show where it goes."""
        scope = self.scope_of(made)
        attrs = [key for key, entries in self.class_attrs.items()
                 if any(isinstance(e, tuple) and e[0] is made for e in entries)]
        names = [name for name, entries in (scope.bindings.items() if scope is not None else ())
                 if any(isinstance(e, tuple) and e[0] is made for e in entries)]
        if len(attrs) + len(names) != 1:
            return None
        found = []
        for method in ("append", "extend"):
            for call, call_scope in self.calls_by_name.get(method, ()):
                receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
                if attrs:
                    ok = isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name) \
                        and receiver.value.value == call_scope.self_name \
                        and (call_scope.class_name, receiver.attr.value) == attrs[0]
                else:
                    ok = isinstance(receiver, cst.Name) and receiver.value == names[0] \
                        and _binding_scope(names[0], call_scope) is scope
                if not ok or not call.args:
                    continue
                value = call.args[0].value
                if method == "append":
                    found.append(value)
                elif isinstance(value, (cst.List, cst.Tuple)):
                    found.extend(e.value for e in value.elements if isinstance(e, cst.Element))
        return found

    def scope_of(self, expr: cst.CSTNode) -> "_Scope | None":
        root = expr
        while isinstance(root, (cst.Attribute, cst.Subscript, cst.Call)):
            root = root.value if not isinstance(root, cst.Call) else root.func
        return self.node_scope.get(id(root))

    def scope_of_function(self, function: cst.CSTNode) -> "_Scope | None":
        return self.function_scope.get(id(function)) if not isinstance(function, cst.Module) else self.module_scope

    # -- resolution -----------------------------------------------------------
    def _origin(self, expr, scope: _Scope):
        """An Origin, None (unknown) or CYCLE (``model = torch.compile(model)`` refers to itself)."""
        key = (id(expr), id(scope))
        if key in self._memo:
            return self._memo[key]
        if key in self._busy:
            self._met_cycle = True
            return CYCLE
        if not self._busy:
            self._steps_left = _BUDGET
            try:
                return self._resolve_once(key, expr, scope)
            except _OutOfSteps:
                self._memo[key] = None  # too tangled to tell: unknown, as if the file did not say
                return None
        self._steps_left -= 1
        if self._steps_left < 0:
            raise _OutOfSteps
        return self._resolve_once(key, expr, scope)

    def _resolve_once(self, key, expr, scope: _Scope):
        top = not self._busy
        self._busy.add(key)
        outer_met, self._met_cycle = self._met_cycle, False
        try:
            found = self._resolve(expr, scope)
        finally:
            self._busy.discard(key)
            met, self._met_cycle = self._met_cycle, outer_met or self._met_cycle
        # Kept when it met no cycle (then it is the same from wherever it is asked;
        # without this every value passed along a chain of calls is resolved again
        # at each use, exponential in the chain's length), or when it is the
        # question itself. An answer that met a cycle depends on what was being
        # resolved around it (model = torch.compile(model); model = DDP(model)).
        if not met or top:
            self._memo[key] = found
        return found

    def _resolve(self, expr, scope: _Scope) -> Origin | None:
        narrowed = self._narrowed(expr)
        if narrowed is not None:
            return narrowed
        if isinstance(expr, cst.Name):
            return self._name(expr.value, scope)
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, scope)
        if isinstance(expr, cst.Call):
            return self._call(expr, scope)
        if isinstance(expr, cst.IfExp):
            return _agree_or_context([self._origin(expr.body, scope), self._origin(expr.orelse, scope)])
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr, scope)
        return None

    def _narrowed(self, expr) -> Origin | None:
        """``if isinstance(m, nn.Linear): ... m ...``: m is a Linear there."""
        for tested, classes in self.narrowing.get(id(expr), ()):
            if isinstance(classes, cst.Tuple):  # one of several layers
                names = [self.analysis.qualified(e.value) if isinstance(e, cst.Element) else None for e in classes.elements]
                if names and all(name and classify_call(name) == LAYER for name in names):
                    return Origin(LAYER, names[0], alternatives=tuple(names[1:]))
                continue
            qualified = self.analysis.qualified(classes)
            kind = classify_call(qualified or "")
            if kind == LAYER:
                return Origin(LAYER, qualified)
        return None

    def _name(self, name: str, scope: _Scope) -> Origin | None:
        owner = _binding_scope(name, scope)
        if owner is None:
            return None
        return self._values(owner.bindings.get(name, []))

    def _values(self, values) -> Origin | None:
        origins = []
        for value in values:
            if value is None:
                continue  # name = None: not an object yet
            if value is UNKNOWN:
                return None
            if isinstance(value, _Param):
                origins.append(self._param(value))
            else:
                origins.append(self._origin(value[0], value[1]))
        return _agree(origins)

    def _attribute(self, expr: cst.Attribute, scope: _Scope) -> Origin | None:
        attr = expr.attr.value
        value = expr.value
        owner_class = None
        if isinstance(value, cst.Name) and scope.self_name == value.value and scope.class_name:
            owner_class = scope.class_name
        else:
            base = self._origin(value, scope)
            if not isinstance(base, Origin):
                return None
            if base.kind == WRAPPER and attr == "module":
                return base.inner
            if base.kind == WRAPPER and base.inner is not None:
                base = base.inner  # converted, the wrapper is the model itself
            if base.kind in (CELL, INSTANCE):
                owner_class = base.qualified
            elif base.kind == LAYER and base.qualified in _CONTAINERS and base.call is not None:
                return self._member(base.call, _container_member(base.call, attr))
            else:
                return None
        values = self.class_attrs.get((owner_class, attr))
        if values is None:
            return self._inherited(owner_class, attr)
        return self._values(values)

    def _inherited(self, class_name: str, attr: str) -> Origin | None:
        node = self.classes.get(class_name)
        if node is None:
            return None
        for base in node.bases:
            if isinstance(base.value, cst.Name) and base.value.value in self.classes:
                values = self.class_attrs.get((base.value.value, attr))
                if values is not None:
                    return self._values(values)
        return None

    def _subscript(self, expr: cst.Subscript, scope: _Scope) -> Origin | None:
        base = self._origin(expr.value, scope)
        if not isinstance(base, Origin) or base.kind != LAYER or base.qualified not in _CONTAINERS or base.call is None:
            return None
        if len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
            key = expr.slice[0].slice.value
            if isinstance(key, cst.SimpleString) and isinstance(key.evaluated_value, str):
                return self._member(base.call, _container_member(base.call, key.evaluated_value))
            if base.qualified == "torch.nn.Sequential":  # net[0], net[-1] of nn.Sequential(a, *blocks, b)
                return self._member(base.call, _sequential_member(base.call, key))
        return None

    def _member(self, container: cst.Call, member: cst.BaseExpression | None) -> Origin | None:
        """The origin of ``member``, an entry of the container call as written."""
        scope = self.node_scope.get(id(container))
        return self._origin(member, scope) if member is not None and scope is not None else None

    def _imported_name(self, func: cst.BaseExpression) -> str | None:
        """``mindspore.experimental.optim.AdamW`` for a callee spelled through a (non-torch) import."""
        parts = []
        while isinstance(func, cst.Attribute):
            parts.append(func.attr.value)
            func = func.value
        if not isinstance(func, cst.Name):
            return None
        binding = self.analysis.imports.get(func.value)
        return ".".join([binding.qualified, *reversed(parts)]) if binding is not None else None

    def _call(self, call: cst.Call, scope: _Scope) -> Origin | None:
        func = call.func
        qualified = self.analysis.qualified(func)
        if qualified is None:
            imported = self._imported_name(func)
            kind = classify_mindspore_call(imported) if imported else None
            if kind is not None:
                return Origin(kind, imported, call)
        if qualified is not None:
            if qualified in _TRANSPARENT_CALLS:
                return self._origin(call.args[0].value, scope) if call.args else None
            if qualified in _WRAPPERS:
                inner = self._origin(call.args[0].value, scope) if call.args else None
                return Origin(WRAPPER, qualified, call, inner if isinstance(inner, Origin) else None)
            if qualified == "torch.Generator":
                return Origin(GENERATOR, qualified, call)
            kind = classify_call(qualified)
            if kind is not None:
                return Origin(kind, qualified, _with_scope(call, scope, self))
            return None
        if isinstance(func, cst.Name):
            if func.value == "nullcontext" or func.value == "contextlib.nullcontext":
                return Origin(NULLCONTEXT, "contextlib.nullcontext", call)
            owner = _binding_scope(func.value, scope)
            if owner is not None and func.value in owner.classes:
                kind = CELL if func.value in self.analysis.cell_classes else INSTANCE
                return Origin(kind, func.value, call)
            if owner is not None and func.value in owner.functions:
                return self._returned(owner.functions[func.value])
            return None
        if isinstance(func, cst.Attribute):
            if func.attr.value == "nullcontext" and isinstance(func.value, cst.Name) and func.value.value == "contextlib":
                return Origin(NULLCONTEXT, "contextlib.nullcontext", call)
            receiver = self._origin(func.value, scope)
            if not isinstance(receiver, Origin):
                return None
            if func.attr.value in _SELF_RETURNING and receiver.kind in (LAYER, CELL, WRAPPER):
                return receiver
            if receiver.kind == GENERATOR and func.attr.value == "manual_seed":
                return receiver
            if receiver.kind in (CELL, INSTANCE):
                method = self._method(receiver.qualified, func.attr.value)
                if method is not None:
                    return self._returned(method)
        return None

    def method(self, function: cst.CSTNode, name: str) -> cst.FunctionDef | None:
        """The method ``self.name`` refers to inside ``function`` (a method of a class in this file)."""
        scope = self.scope_of_function(function)
        if scope is None or scope.class_name is None:
            return None
        return self._method(scope.class_name, name)

    def _method(self, class_name: str, name: str) -> cst.FunctionDef | None:
        seen = set()
        while class_name is not None and class_name not in seen:
            seen.add(class_name)
            method = self.methods.get((class_name, name))
            if method is not None:
                return method
            node = self.classes.get(class_name)
            class_name = None
            if node is not None:
                for base in node.bases:
                    if isinstance(base.value, cst.Name) and base.value.value in self.classes:
                        class_name = base.value.value
                        break
        return None

    def _returned(self, function: cst.FunctionDef) -> Origin | None:
        values = self.returns.get(id(function), [])
        if not values:
            return None
        return _agree([self._origin(v, s) for v, s in values])

    def _param(self, param: _Param) -> Origin | None:
        if param.annotation is not None:
            kind = _ANNOTATIONS.get(self.analysis.qualified(param.annotation) or "")
            if kind is not None:
                return Origin(kind, self.analysis.qualified(param.annotation))
        origins = []
        for value, scope in self._arguments(param):
            origins.append(self._origin(value, scope))
        return _agree(origins) if origins else None

    def _arguments(self, param: _Param):
        """The expressions passed for ``param`` at every call of its function in the file."""
        function = param.function
        defining = param.scope.parent
        is_method = defining is not None and defining.kind == "class"
        name = function.name.value
        callee_names = [defining.class_name] if is_method and name == "__init__" else [name]
        found = []
        for callee in callee_names:
            for call, scope in self.calls_by_name.get(callee, ()):
                if not self._calls_function(call, scope, function, is_method):
                    continue
                offset = 1 if is_method else 0
                value = argument(call, param.index - offset, param.name)
                if value is None:
                    return []  # a call that leaves it to the default: not known from the calls
                found.append((value, scope))
        return found

    def _calls_function(self, call: cst.Call, scope: _Scope, function, is_method: bool) -> bool:
        func = call.func
        if not is_method:
            if not isinstance(func, cst.Name):
                return False
            owner = _binding_scope(func.value, scope)
            return owner is not None and owner.functions.get(func.value) is function
        owner_class = self.function_scope[id(function)].class_name
        if function.name.value == "__init__":
            return isinstance(func, cst.Name) and func.value == owner_class
        if not isinstance(func, cst.Attribute):
            return False
        receiver = func.value
        if isinstance(receiver, cst.Name) and receiver.value == scope.self_name:
            return scope.class_name == owner_class or self._method(scope.class_name, func.attr.value) is function
        origin = self._origin(receiver, scope)
        return isinstance(origin, Origin) and origin.kind in (CELL, INSTANCE) and \
            self._method(origin.qualified, func.attr.value) is function


def _with_scope(call: cst.Call, scope: _Scope, provenance: Provenance) -> cst.Call:
    provenance.node_scope.setdefault(id(call), scope)
    return call


def _sequential_member(call: cst.Call, key: cst.BaseExpression):
    """The layer an integer literal index picks out of ``nn.Sequential(...)`` as written:
    counted from the front up to the first ``*layers``, from the back after the last."""
    negative = isinstance(key, cst.UnaryOperation) and isinstance(key.operator, cst.Minus)
    number = key.expression if negative else key
    if not isinstance(number, cst.Integer) or any(arg.keyword is not None for arg in call.args):
        return None
    index = -int(number.value) if negative else int(number.value)
    args = list(call.args)
    if not -len(args) <= index < len(args):
        return None
    around = args[: index + 1] if index >= 0 else args[index:]
    return None if any(arg.star for arg in around) else args[index].value


def _container_member(call: cst.Call, key: str):
    """``nn.ModuleDict(dict(wte=...))`` / ``nn.ModuleDict({"wte": ...})``: the expression stored under key."""
    if not call.args:
        return None
    mapping = call.args[0].value
    if isinstance(mapping, cst.Call) and isinstance(mapping.func, cst.Name) and mapping.func.value == "dict":
        for arg in mapping.args:
            if arg.keyword is not None and arg.keyword.value == key:
                return arg.value
    if isinstance(mapping, cst.Dict):
        for element in mapping.elements:
            if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString) \
                    and element.key.evaluated_value == key:
                return element.value
    return None


def _agree(origins: list):
    """The one origin all bindings agree on; bindings that refer back to the
    name itself (CYCLE) agree with anything."""
    if any(o is None for o in origins):
        return None
    known = [o for o in origins if o is not CYCLE]
    if not known:
        return CYCLE if origins else None
    wrappers = [o for o in known if o.kind == WRAPPER and o.inner is not None]
    if wrappers:  # model = Net(); model = nn.DataParallel(model): the wrapper stands for the model
        unwrapped = [o.inner if o.kind == WRAPPER else o for o in known]
        if all(o == unwrapped[0] for o in unwrapped):
            return wrappers[0]
    first = known[0]
    if all(o == first for o in known):
        return first
    if all(o.kind == first.kind for o in known):
        return Origin(first.kind)  # an optimizer either way (Adam here, SGD there): the kind is known
    return None


def _agree_or_context(origins: list):
    """``nullcontext() if cpu else torch.autocast(...)`` is an autocast context (sometimes disabled)."""
    kinds = {o.kind for o in origins if isinstance(o, Origin)}
    if all(isinstance(o, Origin) for o in origins) and kinds == {NULLCONTEXT, AUTOCAST}:
        return next(o for o in origins if o.kind == AUTOCAST)
    return _agree(origins)


def argument(call: cst.Call, index: int, name: str) -> cst.BaseExpression | None:
    """The argument of parameter ``name``, the ``index``-th positional one, as the call writes
    it (None when absent, or when an unpacked argument comes first)."""
    positional = 0
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None:
            if positional == index:
                return arg.value
            positional += 1
        elif arg.keyword.value == name:
            return arg.value
    return None


def _binding_scope(name: str, scope: _Scope) -> _Scope | None:
    current = scope
    first = True
    while current is not None:
        if current.kind != "class" or first:
            if name in current.bindings or name in current.functions or name in current.classes:
                return current
        first = False
        current = current.parent
    return None


class _Collector(cst.CSTVisitor):
    """One walk: scopes, bindings, ``self.x`` assignments, returns, calls."""

    def __init__(self, module: cst.Module):
        super().__init__()
        root = _Scope(module, "module", None)
        self.scopes: list[_Scope] = [root]
        self.node_scope: dict[int, _Scope] = {}
        self.function_scope: dict[int, _Scope] = {}
        self.class_attrs: dict[tuple[str, str], list] = {}
        self.methods: dict[tuple[str, str], cst.FunctionDef] = {}
        self.all_classes: dict[str, cst.ClassDef] = {}
        self.calls_by_name: dict[str, list] = {}
        self.returns: dict[int, list] = {}
        self.narrowing: dict[int, list] = {}
        self._functions: list[cst.FunctionDef] = []
        self._narrow: list[tuple[str, cst.BaseExpression]] = []

    @property
    def scope(self) -> _Scope:
        return self.scopes[-1]

    def _bind(self, name: str, value) -> None:
        self.scope.bindings.setdefault(name, []).append(value)

    def _entry(self, value):
        if value is UNKNOWN:
            return UNKNOWN
        return None if _is_none(value) else (value, self.scope)

    def _target(self, target, value) -> None:
        """Record ``target = value``; value is an expression or UNKNOWN."""
        if isinstance(target, cst.Name):
            self._bind(target.value, self._entry(value))
        elif isinstance(target, (cst.Tuple, cst.List)):
            values = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
            if values is not None and len(values) == len(target.elements):
                for element, item in zip(target.elements, values):
                    self._target(element.value, item.value)
            else:
                for element in target.elements:
                    self._target(element.value, UNKNOWN)
        elif isinstance(target, cst.StarredElement):
            self._target(target.value, UNKNOWN)
        elif isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            scope = self.scope
            if scope.self_name is not None and target.value.value == scope.self_name and scope.class_name:
                self.class_attrs.setdefault((scope.class_name, target.attr.value), []).append(self._entry(value))

    # -- scopes ---------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        outer = self.scope
        outer.functions[node.name.value] = node
        scope = _Scope(node, "function", outer)
        params = [*node.params.posonly_params, *node.params.params]
        if outer.kind == "class":
            scope.class_name = outer.class_name
            self.methods[(outer.class_name, node.name.value)] = node
            is_static = any(isinstance(d.decorator, cst.Name) and d.decorator.value == "staticmethod"
                            for d in node.decorators)
            if params and not is_static:
                scope.self_name = params[0].name.value
        for index, param in enumerate(params):
            annotation = param.annotation.annotation if param.annotation is not None else None
            scope.bindings.setdefault(param.name.value, []).append(
                _Param(node, index, param.name.value, annotation, scope))
        for param in node.params.kwonly_params:
            annotation = param.annotation.annotation if param.annotation is not None else None
            scope.bindings.setdefault(param.name.value, []).append(
                _Param(node, 10_000, param.name.value, annotation, scope))
        for star in (node.params.star_arg, node.params.star_kwarg):
            if isinstance(star, cst.Param):
                scope.bindings.setdefault(star.name.value, []).append(UNKNOWN)
        self.function_scope[id(node)] = scope
        self.scopes.append(scope)
        self._functions.append(node)
        self.returns.setdefault(id(node), [])

    def leave_FunctionDef(self, original_node) -> None:
        self.scopes.pop()
        self._functions.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        scope = _Scope(node, "function", self.scope)
        for param in node.params.params:
            scope.bindings.setdefault(param.name.value, []).append(UNKNOWN)
        self.scopes.append(scope)

    def leave_Lambda(self, original_node) -> None:
        self.scopes.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.classes[node.name.value] = node
        self.all_classes.setdefault(node.name.value, node)
        scope = _Scope(node, "class", self.scope, class_name=node.name.value)
        self.scopes.append(scope)

    def leave_ClassDef(self, original_node) -> None:
        self.scopes.pop()

    # -- bindings -------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._target(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._target(node.target, node.value if node.value is not None else UNKNOWN)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):  # x += v: x now holds x + v
            operator = getattr(cst, type(node.operator).__name__.removesuffix("Assign"), None)
            if operator is not None:
                self._target(node.target, cst.BinaryOperation(node.target, operator(), node.value))
                return
        self._target(node.target, UNKNOWN)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._target(node.target, node.value)

    def visit_For(self, node: cst.For) -> None:
        iterated = node.iter
        counter = isinstance(iterated, cst.Call) and isinstance(iterated.func, cst.Name)
        if counter and iterated.func.value == "range":
            self._target(node.target, _COUNT)
        elif counter and iterated.func.value == "enumerate" and isinstance(node.target, cst.Tuple) \
                and len(node.target.elements) == 2:
            self._target(node.target.elements[0].value, _COUNT)
            self._target(node.target.elements[1].value, UNKNOWN)
        else:
            self._target(node.target, UNKNOWN)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._target(node.asname.name, UNKNOWN)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        pass  # comprehension variables live in their own scope: not bindings of the enclosing one

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        name = node.asname.name if node.asname is not None else node.name
        while isinstance(name, cst.Attribute):
            name = name.value
        if isinstance(name, cst.Name) and self.scope.kind != "module":
            self._bind(name.value, UNKNOWN)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._target(node.name.name, UNKNOWN)

    def visit_Return(self, node: cst.Return) -> None:
        if self._functions and node.value is not None:
            self.returns[id(self._functions[-1])].append((node.value, self.scope))

    # -- uses -----------------------------------------------------------------
    def visit_Name(self, node: cst.Name) -> None:
        self.node_scope[id(node)] = self.scope
        for name, classes in self._narrow:
            if name == node.value:
                self.narrowing.setdefault(id(node), []).append((node, classes))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        last = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None
        if last is not None:
            self.calls_by_name.setdefault(last, []).append((node, self.scope))

    def visit_If(self, node: cst.If) -> None:
        test = node.test
        if isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance" \
                and len(test.args) == 2 and isinstance(test.args[0].value, cst.Name):
            self._narrow.append((test.args[0].value.value, test.args[1].value))
            self._narrowed_if = getattr(self, "_narrowed_if", set()) | {id(node)}

    def visit_If_body(self, node: cst.If) -> None:
        pass

    def leave_If_body(self, node: cst.If) -> None:
        if id(node) in getattr(self, "_narrowed_if", ()):
            self._narrow.pop()
            self._narrowed_if.discard(id(node))


UNKNOWN = object()  # a binding whose value the file does not show
_COUNT = cst.Integer("0")  # stands for the int a range()/enumerate() loop binds
CYCLE = object()  # resolution came back to where it started
# Resolution steps one question may take. Values passed around recursive functions
# (sympy-style ``expr = f(expr)`` in torch.fx) form cycles whose partial results
# cannot be kept; past this many steps the answer is "unknown".
_BUDGET = 5_000


class _OutOfSteps(Exception):
    pass


def _is_none(value) -> bool:
    return isinstance(value, cst.Name) and value.value == "None"
