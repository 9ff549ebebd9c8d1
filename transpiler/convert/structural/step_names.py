"""Which names a statement binds and reads, which calls it makes: the facts
the training-step rewrite slices a loop body with (``step_plan.py``).

Approximate on purpose where it cannot matter: comprehension and lambda
variables are ignored, nested function bodies are not entered. An attribute
of ``self`` (``self.loss``) counts as a name of its own, so that a step kept
in a trainer's attributes slices like one kept in local variables.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import libcst as cst

_BUILTINS = frozenset(
    {
        "abs", "all", "any", "bool", "dict", "divmod", "enumerate", "float", "format", "getattr", "hasattr",
        "int", "isinstance", "iter", "len", "list", "map", "max", "min", "next", "print", "range", "round",
        "set", "setattr", "sorted", "str", "sum", "tuple", "zip", "type", "repr", "reversed", "filter",
    }
)


@dataclass
class StatementNames:
    reads: list[str] = field(default_factory=list)  # first-use order, may repeat
    bound: set[str] = field(default_factory=set)
    bound_order: list[str] = field(default_factory=list)  # the same names, in binding order
    callees: Counter = field(default_factory=Counter)  # Name(...) calls
    calls: list[cst.Call] = field(default_factory=list)
    escapes: bool = False  # return / break / continue / yield at this level
    reads_grad: bool = False  # touches a ``.grad`` attribute


class _Collector(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names = StatementNames()
        self._local: set[str] = set()

    # -- bindings -----------------------------------------------------------
    def _bind(self, name: str) -> None:
        if name not in self.names.bound:
            self.names.bound.add(name)
            self.names.bound_order.append(name)

    def _target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self._bind(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._target(element.value)
        elif isinstance(target, cst.StarredElement):
            self._target(target.value)
        elif self_attribute(target) is not None:
            self._bind(self_attribute(target))
        else:  # attribute or subscript target: its parts are read
            target.visit(self)

    def visit_Assign(self, node: cst.Assign) -> bool:
        node.value.visit(self)
        for target in node.targets:
            self._target(target.target)
        return False

    def visit_AugAssign(self, node: cst.AugAssign) -> bool:
        node.value.visit(self)
        node.target.visit(self)  # read ...
        self._target(node.target)  # ... and bound
        return False

    def visit_AnnAssign(self, node: cst.AnnAssign) -> bool:
        if node.value is not None:
            node.value.visit(self)
        self._target(node.target)
        return False

    def visit_NamedExpr(self, node: cst.NamedExpr) -> bool:
        node.value.visit(self)
        self._target(node.target)
        return False

    def visit_For(self, node: cst.For) -> bool:
        node.iter.visit(self)
        self._target(node.target)
        node.body.visit(self)
        if node.orelse is not None:
            node.orelse.visit(self)
        return False

    def visit_WithItem(self, node: cst.WithItem) -> bool:
        node.item.visit(self)
        if node.asname is not None:
            self._target(node.asname.name)
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._bind(node.name.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._bind(node.name.value)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._local.update(p.name.value for p in node.params.params)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        collector = _Collector()
        collector._target(node.target)
        self._local.update(collector.names.bound)

    def _comprehension(self, node) -> bool:
        """A comprehension is a scope of its own: its loop variables are not the statement's
        (``{n: i for i, n in enumerate(chars)}`` reads no ``i`` a loop elsewhere binds)."""
        inner = _Collector()
        for child in node.children:
            child.visit(inner)
        local = inner._local - inner.names.bound  # an assignment expression binds outside
        self.names.reads.extend(n for n in inner.names.reads if n not in local)
        self.names.calls.extend(inner.names.calls)
        self.names.callees.update(inner.names.callees)
        self.names.reads_grad = self.names.reads_grad or inner.names.reads_grad
        for name in inner.names.bound_order:
            self._bind(name)
        return False

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension

    # -- control flow that cannot move into a function ------------------------
    def visit_Return(self, node) -> None:
        self.names.escapes = True

    visit_Break = visit_Continue = visit_Yield = visit_Await = visit_Return

    # -- reads --------------------------------------------------------------
    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if node.attr.value == "grad":
            self.names.reads_grad = True
        name = self_attribute(node)
        if name is not None:
            self.names.reads.append(name)
            return False
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False

    def visit_Call(self, node: cst.Call) -> None:
        self.names.calls.append(node)
        if isinstance(node.func, cst.Name):
            self.names.callees[node.func.value] += 1

    def visit_Name(self, node: cst.Name) -> None:
        self.names.reads.append(node.value)

    def visit_Import(self, node) -> bool:
        return False

    visit_ImportFrom = visit_Import


def self_attribute(node: cst.CSTNode) -> str | None:
    """``"self.loss"`` for the expression ``self.loss``."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self":
        return f"self.{node.attr.value}"
    return None


def names_of(statement: cst.CSTNode) -> StatementNames:
    collector = _Collector()
    statement.visit(collector)
    names = collector.names
    if collector._local:
        names.reads = [n for n in names.reads if n not in collector._local or n in names.bound]
    return names


def free_names(statements: list[cst.CSTNode]) -> list[str]:
    """Names the statements read before (or without) binding them, in order.
    The body of a ``with`` statement is read statement by statement (a forward
    pass inside ``with autocast():`` binds and then reads its values)."""
    free: list[str] = []
    bound: set[str] = set()
    _free_in(statements, bound, free)
    return free


def _free_in(statements, bound: set[str], free: list[str]) -> None:
    for statement in statements:
        if isinstance(statement, cst.With) and isinstance(statement.body, cst.IndentedBlock):
            for item in statement.items:
                _free_in([cst.SimpleStatementLine([cst.Expr(item.item)])], bound, free)
                if item.asname is not None:
                    bound |= names_of(cst.SimpleStatementLine([cst.Expr(item.asname.name)])).reads
            _free_in(statement.body.body, bound, free)
            continue
        if isinstance(statement, cst.For) and isinstance(statement.body, cst.IndentedBlock) \
                and statement.orelse is None:
            # the loop variable, then the body in order: what an iteration binds before reading is not free
            # (a loop that runs no iteration leaves them unbound, as torch's code would)
            _free_in([cst.SimpleStatementLine([cst.Expr(statement.iter)])], bound, free)
            bound |= set(names_of(cst.SimpleStatementLine([cst.Expr(statement.target)])).reads)
            _free_in(statement.body.body, bound, free)
            continue
        names = names_of(statement)
        for name in names.reads:
            if name not in bound and name not in free:
                free.append(name)
        bound |= names.bound


def is_builtin(name: str) -> bool:
    return name in _BUILTINS
