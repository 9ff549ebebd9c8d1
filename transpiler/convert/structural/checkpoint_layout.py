"""What a checkpoint dict holds, read from the original tree before the rewrite.

For every ``torch.save(obj, path)`` whose object is a dict with literal string
keys (written in the call, assigned to a variable earlier in the same block,
or passed by every call of the enclosing function), the layout is
key -> whether the value is a state dict:

    STATE   a ``.state_dict()`` (of a model or an optimizer), or a variable
            assigned from one: stored in the MindSpore checkpoint
    VALUE   anything else (numbers, strings, lists, dicts, tensors, None):
            stored with its Python type next to it

and for every ``name = torch.load(path)`` whose result is subscripted, the
keys used (``name["epoch"]``, ``name.get("epoch")``), the keys whose value
goes to ``load_state_dict`` (directly or through a variable), and whether any
key is computed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from transpiler.convert.walk import LAYOUT_TYPES, StatementVisitor, walk

STATE, VALUE = "state", "value"
SAVE, LOAD = "torch.save", "torch.load"

Scoped = tuple[int, str]  # (id of the enclosing function, 0 at module level; variable name)


@dataclass
class LoadSite:
    statement: cst.SimpleStatementLine
    name: Scoped
    call: cst.Call


@dataclass
class SaveSite:
    call: cst.Call  # the torch.save call
    layout: dict[str, str]  # key -> STATE / VALUE
    entries: dict[str, cst.BaseExpression] | None  # key -> value expression when the dict is written in the call
    statement: bool  # the call is a statement of its own (the values file is written after it)


@dataclass
class Layouts:
    saves: list[SaveSite] = field(default_factory=list)
    loads: list[LoadSite] = field(default_factory=list)
    # loaded variable -> literal keys it is subscripted with
    used_keys: dict[Scoped, list[str]] = field(default_factory=dict)
    state_keys: dict[Scoped, set[str]] = field(default_factory=dict)  # keys whose value goes to load_state_dict
    dynamic: set[Scoped] = field(default_factory=set)  # variables subscripted with a computed key
    direct: list[cst.Call] = field(default_factory=list)  # torch.load(path)["key"]
    state_names: set[str] = field(default_factory=set)  # variables holding a .state_dict()
    # shutil.copyfile(path, other) after torch.save(..., path) in the same function:
    # id(statement) -> whether the save wrote a values file too; and the statements around it
    copies: dict[int, bool] = field(default_factory=dict)
    copy_ancestors: dict[int, tuple] = field(default_factory=dict)
    # os.path.isfile(path) / exists(path) of a path torch.load reads: id(statement) -> codes of the paths
    checks: dict[int, set[str]] = field(default_factory=dict)

    def save_of(self, call: cst.Call) -> SaveSite | None:
        return next((site for site in self.saves if site.call is call), None)


def scan(module: cst.Module, analysis) -> Layouts:
    scanner = _Scanner(analysis)
    walk(module, scanner, prune=LAYOUT_TYPES)
    layouts = scanner.layouts
    for call, scope, statement, dict_node in scanner.save_calls:
        if dict_node is None:
            continue
        layout = {}
        for element in dict_node.elements:
            key = _literal_key(element)
            if key is None:
                break
            layout[key] = STATE if scanner.is_state(element.value, scope) else VALUE
        else:
            entries = {_literal_key(e): e.value for e in dict_node.elements} if call.args[0].value is dict_node else None
            layouts.saves.append(SaveSite(call, layout, entries, statement))
    layouts.state_names = {name for (scope, name) in scanner.bindings if scanner.is_state(cst.Name(name), scope)}
    _link_copies(scanner, layouts)
    return layouts


_FILE_COPIES = frozenset({"shutil.copyfile", "shutil.copy", "shutil.copy2", "shutil.move", "os.rename",
                          "os.replace"})
FILE_CHECKS = frozenset({"os.path.isfile", "os.path.exists"})


def _link_copies(scanner, layouts: Layouts) -> None:
    """A checkpoint file copied or moved by the path it was saved to: the copy follows the files MindSpore wrote."""
    from transpiler.convert.engine import code_of

    saved = {}
    for call, scope, statement, dict_node in scanner.save_calls:
        if len(call.args) > 1:
            site = layouts.save_of(call)
            values = site is not None and any(kind != STATE for kind in site.layout.values())
            saved[(scope, code_of(call.args[1].value))] = values
    for call, scope, statement, ancestors in scanner.file_copies:
        key = (scope, code_of(call.args[0].value))
        if key in saved:
            layouts.copies[id(statement)] = saved[key]
            layouts.copy_ancestors[id(statement)] = ancestors
    loaded = {(site_scope, code_of(site.call.args[0].value)) for site_scope, site in scanner.load_calls}
    for call, scope, statement, ancestors in scanner.file_checks:
        path = code_of(call.args[0].value)
        if (scope, path) in loaded:
            layouts.checks.setdefault(id(statement), set()).add(path)
            layouts.copy_ancestors[id(statement)] = ancestors


def layout_for(layouts: Layouts, name: Scoped) -> dict[str, str] | None:
    """The keys a loaded variable holds: from the saves in the file that
    contain every key it is used with, else from how it is used."""
    used = set(layouts.used_keys.get(name, ()))
    matching = [site.layout for site in layouts.saves if used <= set(site.layout)]
    if matching:
        merged: dict[str, str] = {}
        for layout in matching:
            for key, kind in layout.items():
                merged[key] = STATE if STATE in (kind, merged.get(key)) else VALUE
        return merged
    if name in layouts.dynamic:
        return None
    states = layouts.state_keys.get(name, set())
    return {key: STATE if key in states else VALUE for key in layouts.used_keys.get(name, ())}


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


class _Scanner(StatementVisitor):
    def __init__(self, analysis):
        super().__init__()
        self.analysis = analysis
        self.layouts = Layouts()
        self.save_calls: list[tuple[cst.Call, int, bool, cst.Dict | None]] = []
        self.bindings: dict[Scoped, list[cst.BaseExpression]] = {}
        self.load_names: set[str] = set()
        self.aliases: dict[Scoped, tuple[str, str]] = {}  # state_dict = checkpoint["model"]: name -> (loaded, key)
        self._scopes: list[int] = [0]
        self._functions: list[cst.FunctionDef] = []
        self._blocks: list[tuple] = []  # statements of the enclosing blocks
        self._pending: list[tuple[cst.Call, int, bool, cst.Name, tuple, int, cst.FunctionDef | None]] = []
        self._calls: dict[str, list[cst.Call]] = {}
        self.file_copies: list[tuple[cst.Call, int, cst.CSTNode, tuple]] = []
        self.file_checks: list[tuple[cst.Call, int, cst.CSTNode, tuple]] = []
        self.load_calls: list[tuple[int, LoadSite | None]] = []

    def _scoped(self, name: str) -> Scoped:
        return (self._scopes[-1], name)

    # -- scopes and blocks ------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._scopes.append(id(node))
        self._functions.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._scopes.pop()
        self._functions.pop()

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._blocks.append(tuple(node.body))

    def leave_IndentedBlock(self, original_node) -> None:
        self._blocks.pop()

    def visit_Module(self, node: cst.Module) -> None:
        self._blocks.append(tuple(node.body))

    def leave_Module(self, original_node: cst.Module) -> None:
        for call, scope, statement, name, block, index, function in self._pending:
            self.save_calls.append((call, scope, statement, self._dict_of(name, block, index, function)))

    def _qualified(self, node) -> str | None:
        return self.analysis.qualified(node)

    # -- statements -------------------------------------------------------------
    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if len(node.body) != 1:
            return
        small = node.body[0]
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and \
                self._qualified(small.value.func) == SAVE:
            self._statement_save = small.value
        if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and len(small.value.args) == 2 \
                and _dotted(small.value.func) in _FILE_COPIES:
            self.file_copies.append((small.value, self._scopes[-1], node, tuple(self.statements)))
        if not isinstance(small, cst.Assign):
            return
        value = small.value
        if len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            name = small.targets[0].target.value
            if isinstance(value, cst.Call) and self._qualified(value.func) == LOAD:
                self.layouts.loads.append(LoadSite(node, self._scoped(name), value))
                self.load_names.add(name)
            elif isinstance(value, cst.Subscript) and isinstance(value.value, cst.Name) \
                    and value.value.value in self.load_names:
                key = _subscript_key(value)
                if key is not None:
                    self.aliases[self._scoped(name)] = (value.value.value, key)

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self.bindings.setdefault(self._scoped(target.target.value), []).append(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name):
            self._calls.setdefault(node.func.value, []).append(node)
        if len(node.args) == 1 and _dotted(node.func, 2) in FILE_CHECKS and self.statements:
            self.file_checks.append((node, self._scopes[-1], self.statements[-1], tuple(self.statements)))
        qualified = self._qualified(node.func)
        if qualified == LOAD and node.args:
            self.load_calls.append((self._scopes[-1], LoadSite(None, None, node)))
        if qualified == SAVE and node.args:
            obj = node.args[0].value
            statement = getattr(self, "_statement_save", None) is node
            if isinstance(obj, cst.Dict):
                self.save_calls.append((node, self._scopes[-1], statement, obj))
            elif isinstance(obj, cst.Name):
                block = self._blocks[-1] if self._blocks else ()
                index = _index_of_call(block, node)
                function = self._functions[-1] if self._functions else None
                self._pending.append((node, self._scopes[-1], statement, obj, block, index, function))
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            if func.attr.value == "get" and node.args:
                self._use(func.value.value, _string(node.args[0].value))
        if isinstance(func, cst.Attribute) and func.attr.value == "load_state_dict" and node.args:
            self._state_use(node.args[0].value)

    def _state_use(self, argument) -> None:
        if isinstance(argument, cst.Subscript) and isinstance(argument.value, cst.Name):
            key = _subscript_key(argument)
            if key is not None:
                self.layouts.state_keys.setdefault(self._scoped(argument.value.value), set()).add(key)
        elif isinstance(argument, cst.Name):
            alias = self.aliases.get(self._scoped(argument.value))
            if alias is not None:
                self.layouts.state_keys.setdefault(self._scoped(alias[0]), set()).add(alias[1])

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

    # -- the dict a saved variable holds ---------------------------------------------
    def _dict_of(self, name: cst.Name, block: tuple, index: int, function) -> cst.Dict | None:
        """The dict literal assigned to ``name`` earlier in the same block (nothing rebinding it in
        between), or passed for it by every call of the enclosing function."""
        for statement in reversed(block[:index]):
            names = _assigned(statement)
            if name.value in names:
                value = names[name.value]
                return value if isinstance(value, cst.Dict) else None
        if function is None:
            return None
        params = [p.name.value for p in function.params.params]
        if name.value not in params:
            return None
        position = params.index(name.value)
        found = []
        for call in self._calls.get(function.name.value, ()):
            argument = _argument(call, position, name.value)
            if not isinstance(argument, cst.Dict):
                return None
            found.append(argument)
        if not found or len({tuple(_literal_key(e) for e in d.elements) for d in found}) != 1:
            return None
        return found[0]

    def is_state(self, expr, scope: int) -> bool:
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
            return expr.func.attr.value == "state_dict" and not expr.args
        if isinstance(expr, cst.Name):
            values = self.bindings.get((scope, expr.value)) or self.bindings.get((0, expr.value), [])
            return bool(values) and all(self.is_state(v, scope) for v in values if v is not expr)
        return False


def _dotted(func, depth: int = 1) -> str | None:
    """``shutil.copyfile`` (depth 1), ``os.path.isfile`` (depth 2) as written."""
    parts = []
    while isinstance(func, cst.Attribute) and len(parts) < depth:
        parts.append(func.attr.value)
        func = func.value
    if isinstance(func, cst.Name) and len(parts) == depth:
        return ".".join([func.value, *reversed(parts)])
    return None


def _assigned(statement) -> dict[str, cst.BaseExpression]:
    if isinstance(statement, cst.SimpleStatementLine):
        found = {}
        for small in statement.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    if isinstance(target.target, cst.Name):
                        found[target.target.value] = small.value
        return found
    return {name: cst.Name("__rebound__") for name in _bound_inside(statement)}


def _bound_inside(statement) -> set[str]:
    from transpiler.convert.structural.step_names import names_of

    return names_of(statement).bound


def _index_of_call(block: tuple, call: cst.Call) -> int:
    for index, statement in enumerate(block):
        found = _Contains(call)
        statement.visit(found)
        if found.found:
            return index
    return len(block)


class _Contains(cst.CSTVisitor):
    def __init__(self, node):
        self.node = node
        self.found = False

    def on_visit(self, node) -> bool:
        if node is self.node:
            self.found = True
        return not self.found


def _argument(call: cst.Call, index: int, name: str):
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return positional[index] if index < len(positional) else None


def _subscript_key(node: cst.Subscript) -> str | None:
    if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        return _string(node.slice[0].slice.value)
    return None
