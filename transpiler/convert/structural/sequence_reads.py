"""A sequence a compiled function consumes item by item, read by index and rebound
without the item: ``next(it, None)`` on an iterator of ``iter(...)``, and
``L.pop(0) if L else None``.

x-transformers' AttentionLayers (and lucidrains' code at large) walks its
per-layer caches and memories with iterators and guarded pops::

    iter_attn_cache = iter(attn_cache)
    ...
    layer_mem = mems.pop(0) if mems else None
    out = block(x, cache = next(iter_attn_cache, None), mem = layer_mem)

Graph mode has no stateful iterator: its ``next`` takes one argument ("For
'Next', the number of input should be 1, but got 2"), and a pop under a
conditional expression gives the pair (list, item) ("'Tuple' object has no
attribute 'dtype'" where the item reaches a layer; measured on MindSpore 2.10
CPU; list_pops.py rewrites only the pops no condition guards). Read and rebound,
both compile and mean the same in PyNative::

    iter_attn_cache = tuple(attn_cache)
    ...
    layer_mem = mems[0] if mems else None
    mems = mems[1:]
    cache = iter_attn_cache[0] if iter_attn_cache else None
    iter_attn_cache = iter_attn_cache[1:]
    out = block(x, cache = cache, mem = layer_mem)

(``tuple(t)`` of a tensor is its rows, as ``iter(t)``; the rest of an empty
sequence is empty, so the unconditional rebind is the pop that did not happen.)

Only in the functions graph mode compiles, and only where no one else can see the
difference: an iterator name bound nowhere but by ``iter(...)`` and used nowhere but
as ``next``'s first argument (no loop over it, no call that takes it, no nested
function or lambda that reads it), read at most once per statement and not under a
condition, short circuit, lambda or comprehension of the statement; a list the
function makes itself (``[...]``, ``list(...)``, ``[None] * n``, or a copy,
``mems.copy() if exists(mems) else [None] * n``, where the parameter is rebound so
before anything else reads it), popped as ``target = L.pop() if L else default``
(or ``pop(0)``) with ``L`` named nowhere else in the statement.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from transpiler.convert.formatting import KeepsFormatting
from transpiler.convert.structural.fresh_names import fresh_name
from transpiler.convert.structural.name_reads import mentions
from transpiler.convert.walk import LAYOUT_TYPES, Visitor, rewrite, walk

_GUARDED = (cst.IfExp, cst.BooleanOperation, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def without_sequence_reads(module: cst.Module, compiled: set[str], to_format) -> cst.Module:
    return rewrite(module, _Rewrite(compiled, to_format))


# -- what the function makes ----------------------------------------------------------------

def _is_list(value) -> bool:
    """A new list for certain: ``[...]``, ``[... for ...]``, ``list(...)``, ``[...] * n``."""
    if isinstance(value, (cst.List, cst.ListComp)):
        return True
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "list":
        return True
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
        return isinstance(value.left, cst.List) or isinstance(value.right, cst.List)
    return False


def _is_copy(value) -> bool:
    return (isinstance(value, cst.Call) and not value.args and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "copy")


def _makes_list(value) -> bool:
    """A new list: one for certain, or ``x.copy() if ... else <a new list>`` (either way round)."""
    if _is_list(value):
        return True
    if isinstance(value, cst.IfExp):
        sides = (value.body, value.orelse)
        return all(_is_list(side) or _is_copy(side) for side in sides) and any(_is_list(side) for side in sides)
    return False


def _is_iter(value) -> bool:
    return (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "iter"
            and len(value.args) == 1 and not value.args[0].star and value.args[0].keyword is None)


class _Bindings(Visitor):
    """Each name the function binds -> the values bound (None: a binding of another kind)."""

    def __init__(self, function):
        super().__init__()
        self.function = function
        self.values: dict[str, list] = {}

    def visit_FunctionDef(self, node):
        return node is self.function

    def visit_Lambda(self, node):
        return False

    def visit_Assign(self, node):
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self.values.setdefault(target.target.value, []).append(node.value)
            else:
                for name in m.findall(target.target, m.Name()):
                    self.values.setdefault(name.value, []).append(None)

    def visit_AugAssign(self, node):
        if isinstance(node.target, cst.Name):
            self.values.setdefault(node.target.value, []).append(None)

    def visit_AnnAssign(self, node):
        if isinstance(node.target, cst.Name):
            self.values.setdefault(node.target.value, []).append(node.value)

    def visit_For(self, node):
        for name in m.findall(node.target, m.Name()):
            self.values.setdefault(name.value, []).append(None)

    def visit_NamedExpr(self, node):
        for name in m.findall(node.target, m.Name()):
            self.values.setdefault(name.value, []).append(None)

    def visit_AsName(self, node):
        for name in m.findall(node.name, m.Name()):
            self.values.setdefault(name.value, []).append(None)


def _params(function: cst.FunctionDef) -> set[str]:
    return {param.name.value for param in m.findall(function.params, m.Param())}


def _rebound_first(function: cst.FunctionDef, name: str) -> bool:
    """The function's first top-level statement that mentions ``name`` binds it anew."""
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    for statement in body:
        if name not in mentions(statement):
            continue
        return (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1
                and m.matches(statement.body[0].targets[0].target, m.Name(name)))
    return False


def _owned(function: cst.FunctionDef) -> tuple[set[str], set[str]]:
    """(the lists the function makes, the iterators it makes and reads with ``next`` only)."""
    bindings = _Bindings(function)
    walk(function.body, bindings, prune=LAYOUT_TYPES)
    params = _params(function)
    lists, iterators = set(), set()
    for name, values in bindings.values.items():
        if name in params and not _rebound_first(function, name):
            continue
        if all(value is not None and _makes_list(value) for value in values):
            lists.add(name)
        elif name not in params and all(value is not None and _is_iter(value) for value in values):
            iterators.add(name)
    if iterators:
        uses = _IteratorUses(iterators)
        walk(function.body, uses, prune=LAYOUT_TYPES)
        iterators -= uses.escaped
    return lists, iterators


class _IteratorUses(Visitor):
    """The iterators mentioned otherwise than as ``next``'s first argument, or in a nested
    function or lambda."""

    def __init__(self, names: set[str]):
        super().__init__()
        self.names = names
        self.escaped: set[str] = set()
        self.allowed: set[int] = set()  # ids of Name nodes read by next(...)
        self.depth = 0

    def _enter(self, node):
        self.depth += 1

    def _leave(self, node):
        self.depth -= 1

    visit_FunctionDef = visit_Lambda = _enter
    leave_FunctionDef = leave_Lambda = _leave

    def visit_Assign(self, node):
        for target in node.targets:  # the binding it = iter(...) itself
            if isinstance(target.target, cst.Name) and target.target.value in self.names and _is_iter(node.value):
                self.allowed.add(id(target.target))

    def visit_Call(self, node):
        iterator = _next_of(node)
        if iterator is not None and not self.depth:
            self.allowed.add(id(node.args[0].value))

    def visit_Name(self, node):
        if node.value in self.names and id(node) not in self.allowed:
            self.escaped.add(node.value)


def _next_of(call) -> str | None:
    """``it`` for ``next(it)`` / ``next(it, default)``."""
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "next"
            and 1 <= len(call.args) <= 2 and all(not a.star and a.keyword is None for a in call.args)
            and isinstance(call.args[0].value, cst.Name)):
        return None
    return call.args[0].value.value


def _pop_end(call) -> tuple[str, int] | None:
    """(``L``, -1) for ``L.pop()``, (``L``, 0) for ``L.pop(0)``."""
    func = call.func if isinstance(call, cst.Call) else None
    if not (isinstance(func, cst.Attribute) and func.attr.value == "pop" and isinstance(func.value, cst.Name)):
        return None
    if not call.args:
        return func.value.value, -1
    if len(call.args) == 1 and not call.args[0].keyword and not call.args[0].star \
            and m.matches(call.args[0].value, m.Integer("0")):
        return func.value.value, 0
    return None


# -- the rewrite ------------------------------------------------------------------------------

def _index(end: int) -> cst.BaseExpression:
    return cst.Integer("0") if end == 0 else cst.UnaryOperation(cst.Minus(), cst.Integer("1"))


def _read(name: str, end: int, default) -> cst.BaseExpression:
    item = cst.Subscript(cst.Name(name), [cst.SubscriptElement(cst.Index(_index(end)))])
    if default is None:
        return item
    return cst.IfExp(test=cst.Name(name), body=item, orelse=default)


def _rest(name: str, end: int) -> cst.SimpleStatementLine:
    rest = cst.Slice(lower=cst.Integer("1"), upper=None) if end == 0 else \
        cst.Slice(lower=None, upper=cst.UnaryOperation(cst.Minus(), cst.Integer("1")))
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))],
                                               cst.Subscript(cst.Name(name), [cst.SubscriptElement(rest)]))])


def _assign(target: str, value) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(target))], value)])


class _Nexts(Visitor):
    """The ``next(it, ...)`` calls of an expression on the iterators given, outside anything
    that may not run them (``guarded``: one stands under such a node)."""

    def __init__(self, iterators: set[str]):
        super().__init__()
        self.iterators = iterators
        self.found: list[cst.Call] = []
        self.keywords: dict[int, str] = {}  # id(call) -> the keyword argument it is the value of
        self.guarded = False

    def on_visit(self, node) -> bool:
        if isinstance(node, cst.Call) and _next_of(node) in self.iterators:
            self.found.append(node)
        if isinstance(node, cst.Arg) and node.keyword is not None and _next_of(node.value) in self.iterators:
            self.keywords[id(node.value)] = node.keyword.value
        if isinstance(node, _GUARDED):
            self.guarded = self.guarded or any(_next_of(call) in self.iterators
                                               for call in m.findall(node, m.Call(func=m.Name("next"))))
            return False
        return super().on_visit(node)


class _Replace(cst.CSTTransformer):
    def __init__(self, replacements: dict[int, str]):
        super().__init__()
        self.replacements = replacements

    def leave_Call(self, original_node, updated_node):
        name = self.replacements.get(id(original_node))
        return cst.Name(name) if name is not None else updated_node


class _Rewrite(KeepsFormatting):
    prune = LAYOUT_TYPES

    def __init__(self, compiled: set[str], to_format):
        super().__init__(to_format)
        self.compiled = compiled
        self.functions: list[cst.FunctionDef] = []
        self.owned: list[tuple[set[str], set[str]]] = []
        self.taken: list[set[str]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node)
        self.owned.append(_owned(node) if node.name.value in self.compiled else (set(), set()))
        self.taken.append(set(mentions(node)) | _params(node) if node.name.value in self.compiled else set())

    def leave_FunctionDef(self, original_node, updated_node):
        self.functions.pop()
        self.owned.pop()
        self.taken.pop()
        return updated_node

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if not self.functions or len(updated_node.body) != 1:
            return updated_node
        lists, iterators = self.owned[-1]
        if not lists and not iterators:
            return updated_node
        small = updated_node.body[0]
        lines = None
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name) \
                and small.targets[0].target.value in iterators and _is_iter(small.value):
            lines = [updated_node.with_changes(body=[small.with_changes(value=small.value.with_changes(
                func=cst.Name("tuple")))])]
        elif lists:
            lines = self._guarded_pop(small, lists, updated_node.leading_lines)
        if lines is None and iterators:
            lines = self._nexts(updated_node, small, iterators)
        if lines is None:
            return updated_node
        for line in lines:
            self.to_format.add(line)
        return cst.FlattenSentinel(lines) if len(lines) > 1 else lines[0]

    def _guarded_pop(self, small, lists: set[str], leading):
        """``target = L.pop() if L else default``: the item read, the list rebound."""
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name) and isinstance(small.value, cst.IfExp)):
            return None
        value = small.value
        popped = _pop_end(value.body)
        if popped is None:
            return None
        listed, end = popped
        target = small.targets[0].target.value
        if listed not in lists or target == listed or not m.matches(value.test, m.Name(listed)) \
                or listed in mentions(value.orelse):
            return None
        read = _assign(target, _read(listed, end, value.orelse)).with_changes(leading_lines=leading)
        return [read, _rest(listed, end)]

    def _nexts(self, statement, small, iterators: set[str]):
        value = small.value if isinstance(small, (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Expr, cst.Return)) \
            else None
        if value is None:
            return None
        nexts = _Nexts(iterators)
        walk(value, nexts, prune=LAYOUT_TYPES)
        if not nexts.found or nexts.guarded:
            return None
        names = [_next_of(call) for call in nexts.found]
        if len(set(names)) != len(names):
            return None  # one iterator read twice in the statement
        said = mentions(statement)
        if any(said.count(name) != 1 for name in names) or any(
                name in mentions(call.args[1].value) for call in nexts.found if len(call.args) == 2
                for name in names):
            return None
        lines = []
        leading = statement.leading_lines
        if isinstance(small, cst.Assign) and small.value is nexts.found[0] and len(small.targets) == 1 \
                and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value not in names:
            call = nexts.found[0]
            iterator = names[0]
            default = call.args[1].value if len(call.args) == 2 else None
            return [_assign(small.targets[0].target.value, _read(iterator, 0, default)).with_changes(
                leading_lines=leading), _rest(iterator, 0)]
        replacements = {}
        for call, iterator in zip(nexts.found, names):
            base = nexts.keywords.get(id(call), f"{iterator}_item")
            name = fresh_name(base, self.taken[-1])
            replacements[id(call)] = name
            default = call.args[1].value if len(call.args) == 2 else None
            lines += [_assign(name, _read(iterator, 0, default)), _rest(iterator, 0)]
        lines[0] = lines[0].with_changes(leading_lines=leading)
        rewritten = statement.visit(_Replace(replacements)).with_changes(leading_lines=())
        return [*lines, rewritten]
