"""Module-level helpers that rules asked for (``FileContext.define``), written
once per file after its imports, so they can use the MindSpore imports."""

from __future__ import annotations

import libcst as cst

from transpiler.convert.context import FileContext
from transpiler.convert.node_sets import NodeSet
from transpiler.convert.walk import IS_STATEMENT, LAYOUT_TYPES, walk

_TWO_BLANK_LINES = (cst.EmptyLine(), cst.EmptyLine())


def add_definitions(module: cst.Module, ctx: FileContext) -> cst.Module:
    definitions = _used(module, ctx.definitions, ctx.passed)
    if not definitions:
        return module
    body = list(module.body)
    index = _after_imports(body, set(definitions))
    helpers = [statement.with_changes(leading_lines=_TWO_BLANK_LINES) for statement in definitions.values()]
    for statement in helpers:  # black formats simple statements: the lines inside
        walk(statement, _MarkForFormatting(ctx), prune=LAYOUT_TYPES)
    if index < len(body):
        following = body[index]
        lines = list(following.leading_lines)
        blank = 0
        while blank < len(lines) and lines[blank].comment is None:
            blank += 1
        # two blank lines after a class, as black and PEP 8 want
        body[index] = following.with_changes(leading_lines=[*_TWO_BLANK_LINES, *lines[blank:]])
        if following in ctx.to_format:  # still to be formatted under its new identity
            ctx.to_format.add(body[index])
    body[index:index] = helpers
    return module.with_changes(body=body)


def _used(module: cst.Module, definitions: dict[str, cst.BaseStatement], passed: NodeSet) -> dict[str, cst.BaseStatement]:
    """The definitions the code uses, directly or through another one: a rule
    may ask for one where it rewrites an argument that a later rewrite drops
    (``device=x.device``). Only code the rewrite wrote can use one: the
    statements it ``passed`` by are not searched."""
    used: set[str] = set()
    sources = [module]
    while sources:
        names = set(definitions) - used
        found: set[str] = set()
        for source in sources:  # one walk per source for all the names
            found |= _names_used(source, names, passed)
        wanted = {name for name in definitions if name in found}
        used |= wanted
        sources = [definitions[name] for name in wanted]
    return {name: statement for name, statement in definitions.items() if name in used}


def _after_imports(body: list[cst.BaseStatement], names: set[str]) -> int:
    """The index after the last top-level import (plain, or guarded by
    try/if) that comes before the first class or function and before the first
    statement using one of the helpers: the MindSpore imports the helpers use
    are among them."""
    index = 1 if body and is_docstring(body[0]) else 0
    for i, statement in enumerate(body):
        if isinstance(statement, (cst.ClassDef, cst.FunctionDef)) or _uses(statement, names):
            break
        if _imports_only(statement):
            index = i + 1
    return index


def _uses(statement, names: set[str]) -> bool:
    return bool(_names_used(statement, names))


def _names_used(statement, names: set[str], passed: NodeSet | None = None) -> set[str]:
    """Those of ``names`` the statement uses (outside the statements ``passed``)."""
    finder = _NameFinder(names, passed if passed is not None else NodeSet())
    walk(statement, finder, prune=LAYOUT_TYPES)
    return finder.found


class _NameFinder(cst.CSTVisitor):
    def __init__(self, names: set[str], passed: NodeSet):
        super().__init__()
        self.names = names
        self.passed = passed
        self.found: set[str] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        if type(node) is cst.Name:
            if node.value in self.names:
                self.found.add(node.value)
            return False
        return not (IS_STATEMENT[type(node)] and node in self.passed)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        pass


def is_docstring(statement) -> bool:
    """A statement line that is a string alone: a module's, class's or function's docstring when first."""
    return (isinstance(statement, cst.SimpleStatementLine) and isinstance(statement.body[0], cst.Expr)
            and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString)))


def _imports_only(statement) -> bool:
    if isinstance(statement, cst.SimpleStatementLine):
        return all(isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body)
    if isinstance(statement, (cst.Try, cst.If)):
        return all(_imports_only(inner) for inner in statement.body.body)
    return False


class _MarkForFormatting(cst.CSTVisitor):
    def __init__(self, ctx: FileContext):
        super().__init__()
        self.ctx = ctx

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        self.ctx.to_format.add(node)
        return False
