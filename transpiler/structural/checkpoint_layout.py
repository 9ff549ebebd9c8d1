"""What a checkpoint dict holds, read from the original tree before the rewrite.

For every ``torch.save({...}, path)`` the layout is key -> kind of value:

    STATE   a ``.state_dict()`` (of a model or an optimizer), or a variable
            assigned from one
    NUMBER  a Python number or bool (comes back from MindSpore as a 0-d
            Parameter: ``.item()`` restores the Python value)
    TENSOR  a tensor (comes back as a Parameter, which is a Tensor)
    TEXT    a string (comes back as a string)
    UNSAVABLE  None, a list, a tuple or a dict: a MindSpore checkpoint cannot
            hold it
    None    unknown

and for every ``name = torch.load(path)`` whose result is subscripted, the
keys used (``name["epoch"]``, ``name.get("epoch")``) and whether any key is
computed. Types are inferred from literals, conversions (``int()``,
``.item()``), ``for i in range(...)`` loops and tensor-only methods called on
a name (``loss.backward()``); anything else is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

STATE, NUMBER, TENSOR, TEXT, UNSAVABLE = "state", "number", "tensor", "text", "unsavable"
SAVE, LOAD = "torch.save", "torch.load"

_NUMBER_CALLS = frozenset({"int", "float", "bool", "len", "round"})
_TENSOR_METHODS = frozenset({"backward", "item", "detach", "numpy", "cpu", "size", "dim"})


Scoped = tuple[int, str]  # (id of the enclosing function, 0 at module level; variable name)


@dataclass
class LoadSite:
    statement: cst.SimpleStatementLine
    name: Scoped
    call: cst.Call


@dataclass
class Layouts:
    saves: list[tuple[cst.Call, dict[str, str | None]]] = field(default_factory=list)
    loads: list[LoadSite] = field(default_factory=list)
    # loaded variable -> literal keys it is subscripted with
    used_keys: dict[Scoped, list[str]] = field(default_factory=dict)
    state_keys: dict[Scoped, set[str]] = field(default_factory=dict)  # keys passed to load_state_dict
    dynamic: set[Scoped] = field(default_factory=set)  # variables subscripted with a computed key
    direct: list[cst.Call] = field(default_factory=list)  # torch.load(path)["key"]
    state_names: set[str] = field(default_factory=set)  # variables holding a .state_dict()


def scan(module: cst.Module, analysis) -> Layouts:
    scanner = _Scanner(analysis)
    module.visit(scanner)
    layouts = scanner.layouts
    kinds = _Kinds(scanner, analysis)
    for call, scope in scanner.save_calls:
        layout = {}
        for element in call.args[0].value.elements:
            key = _literal_key(element)
            if key is not None:
                layout[key] = kinds.of(element.value, scope)
        layouts.saves.append((call, layout))
    layouts.state_names = {name for scope, name in scanner.bindings if kinds.of(cst.Name(name), scope) == STATE}
    return layouts


def layout_for(layouts: Layouts, name: Scoped) -> dict[str, str | None] | None:
    """The keys a loaded variable holds and their kinds: from the saves in the
    file that contain every key it is used with, else from how it is used."""
    used = set(layouts.used_keys.get(name, ()))
    matching = [layout for _, layout in layouts.saves if used <= set(layout)]
    if matching:
        merged: dict[str, str | None] = {}
        for layout in matching:
            for key, kind in layout.items():
                merged[key] = kind if merged.get(key, kind) == kind else None
        return merged
    if name in layouts.dynamic:
        return None
    states = layouts.state_keys.get(name, set())
    return {key: STATE if key in states else None for key in layouts.used_keys.get(name, ())}


def _literal_key(element) -> str | None:
    if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
        value = element.key.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _string(node) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


class _Scanner(cst.CSTVisitor):
    def __init__(self, analysis):
        super().__init__()
        self.analysis = analysis
        self.layouts = Layouts()
        self.save_calls: list[tuple[cst.Call, int]] = []
        self.bindings: dict[Scoped, list[cst.BaseExpression | str]] = {}  # values (or a kind)
        self.tensor_names: set[Scoped] = set()
        self.load_names: set[str] = set()
        self._scopes: list[int] = [0]

    def _scoped(self, name: str) -> Scoped:
        return (self._scopes[-1], name)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(id(node))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scopes.pop()

    def _qualified(self, node) -> str | None:
        return self.analysis.qualified(node)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if len(node.body) != 1 or not isinstance(node.body[0], cst.Assign):
            return
        assign = node.body[0]
        value = assign.value
        if (
            len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)
            and isinstance(value, cst.Call)
            and self._qualified(value.func) == LOAD
        ):
            name = assign.targets[0].target.value
            self.layouts.loads.append(LoadSite(node, self._scoped(name), value))
            self.load_names.add(name)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self._bind(target.target, node.value)

    def _bind(self, target, value) -> None:
        if isinstance(target, cst.Name):
            self.bindings.setdefault(self._scoped(target.value), []).append(value)
        elif isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple) and len(target.elements) == len(value.elements):
            for element, item in zip(target.elements, value.elements):  # STEPS, RESUME_AT = 8, 4
                self._bind(element.value, item.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.bindings.setdefault(self._scoped(node.target.value), []).append(node.value)

    def visit_For(self, node: cst.For) -> None:
        iterated = node.iter
        if not (isinstance(iterated, cst.Call) and isinstance(iterated.func, cst.Name)):
            return
        if iterated.func.value == "range" and isinstance(node.target, cst.Name):
            self.bindings.setdefault(self._scoped(node.target.value), []).append(NUMBER)
        elif iterated.func.value == "enumerate" and isinstance(node.target, cst.Tuple):
            first = node.target.elements[0].value if node.target.elements else None
            if isinstance(first, cst.Name):
                self.bindings.setdefault(self._scoped(first.value), []).append(NUMBER)

    def visit_Call(self, node: cst.Call) -> None:
        qualified = self._qualified(node.func)
        if qualified == SAVE and node.args and isinstance(node.args[0].value, cst.Dict):
            self.save_calls.append((node, self._scopes[-1]))
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            receiver = func.value.value
            if func.attr.value in _TENSOR_METHODS:
                self.tensor_names.add(self._scoped(receiver))
            if func.attr.value == "get" and node.args:
                self._use(receiver, _string(node.args[0].value))
        if isinstance(func, cst.Attribute) and func.attr.value == "load_state_dict" and node.args:
            argument = node.args[0].value
            if isinstance(argument, cst.Subscript) and isinstance(argument.value, cst.Name):
                key = _subscript_key(argument)
                if key is not None:
                    self.layouts.state_keys.setdefault(self._scoped(argument.value.value), set()).add(key)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        value = node.value
        if isinstance(value, cst.Call) and self._qualified(value.func) == LOAD:
            self.layouts.direct.append(value)
        elif isinstance(value, cst.Name):
            key = _subscript_key(node)
            if key is None:
                self.layouts.dynamic.add(self._scoped(value.value))
            self._use(value.value, key)

    def _use(self, name: str, key: str | None) -> None:
        if key is not None:
            keys = self.layouts.used_keys.setdefault(self._scoped(name), [])
            if key not in keys:
                keys.append(key)


def _reads_checkpoint(value, load_names: set[str]) -> bool:
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):  # checkpoint["epoch"].item()
        value = value.func.value
    return isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) and value.value.value in load_names


def _subscript_key(node: cst.Subscript) -> str | None:
    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        return _string(node.slice[0].slice.value)
    return None


class _Kinds:
    """The kind of a saved value, from the expression and the name's bindings."""

    def __init__(self, scanner: _Scanner, analysis):
        # a value read back from a loaded checkpoint has the kind it was saved with: skip it
        self.bindings = {
            name: [v for v in values if not _reads_checkpoint(v, scanner.load_names)]
            for name, values in scanner.bindings.items()
        }
        self.tensor_names = scanner.tensor_names
        self.analysis = analysis
        self._busy: set[Scoped] = set()

    def of(self, expr, scope: int) -> str | None:
        if isinstance(expr, str):
            return expr
        if isinstance(expr, (cst.Integer, cst.Float)):
            return NUMBER
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return TEXT
        if isinstance(expr, (cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.DictComp)):
            return UNSAVABLE
        if isinstance(expr, cst.Name):
            return self._name(expr.value, scope)
        if isinstance(expr, cst.Call):
            return self._call(expr)
        if isinstance(expr, cst.UnaryOperation):
            return self.of(expr.expression, scope)
        if isinstance(expr, cst.BinaryOperation):
            kinds = {self.of(expr.left, scope), self.of(expr.right, scope)}
            if TENSOR in kinds:
                return TENSOR
            return NUMBER if kinds == {NUMBER} else None
        return None

    def _name(self, name: str, scope: int) -> str | None:
        if name in ("True", "False"):
            return NUMBER
        if name == "None":
            return UNSAVABLE
        if (scope, name) not in self.bindings:
            scope = 0  # not bound in the function: a global
        key = (scope, name)
        if key in self._busy:
            return None
        self._busy.add(key)
        try:
            kinds = {self.of(value, scope) for value in self.bindings.get(key, ())}
        finally:
            self._busy.discard(key)
        if len(kinds) == 1 and None not in kinds:
            return kinds.pop()
        return TENSOR if key in self.tensor_names and not kinds - {None, TENSOR} else None

    def _call(self, call: cst.Call) -> str | None:
        func = call.func
        if isinstance(func, cst.Attribute):
            if func.attr.value == "state_dict" and not call.args:
                return STATE
            if func.attr.value == "item" and not call.args:
                return NUMBER
        if isinstance(func, cst.Name) and func.value in _NUMBER_CALLS and self.analysis.qualified(func) is None:
            return NUMBER
        qualified = self.analysis.qualified(func) or ""
        return TENSOR if qualified.startswith("torch.") and not qualified.startswith("torch.nn.") else None
