"""Marked statements keep their torch code without poisoning the module.

A statement the converter cannot convert stays as written under its marker.
If the torch imports it still needs stayed at the top of the file, one marked
statement anywhere would make the whole module fail to import on a machine
without torch. So the imports a marked statement needs move to just above it,
under its marker: the module imports without torch, and the marked statement
fails only when it is reached, with its marker saying why.

    # TODO(ms-migrate): torch.distributions.Gamma: no MindSpore rule for this API
    import torch
    g = torch.distributions.Gamma(a, b)

The statement keeps its own spelling (``F.gelu``, ``save_image``) with the
import that binds it, except where the alias is a name the converted code uses
for MindSpore (``nn``, ``ops``, ...): a function-local ``import torch.nn as nn``
would hide MindSpore's ``nn`` from the whole function, so such references are
spelled out (``torch.nn.Foo``) under ``import torch.nn``.

Converting the output again changes nothing: imports already standing right
above the statement are kept instead of added twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import libcst as cst

from transpiler.convert.context import SPELLINGS, FileContext, parse_expr
from transpiler.convert.markers import is_marked
from transpiler.convert.names import ImportBinding
from transpiler.convert.walk import LAYOUT_TYPES, walk

_MINDSPORE_LOCALS = frozenset(local for _, local, _ in SPELLINGS)


@dataclass
class LeftReference:
    """A torch reference the rewrite left in place (its node in the output)."""

    node: cst.CSTNode
    original: cst.CSTNode
    binding: ImportBinding | None  # the import it refers through
    qualified: str


@dataclass
class MarkedStatements:
    ctx: FileContext
    # id(statement) -> the statement before it in its block (original tree)
    previous: dict[int, cst.CSTNode] = field(default_factory=dict)

    def record_block(self, body) -> None:
        for before, statement in zip(body, body[1:]):
            self.previous[id(statement)] = before

    def localise(self, original, result, left: dict[int, LeftReference], guard: bool = False,
                 inside: cst.Try | None = None):
        """``result`` (the marked statement) with the torch imports it needs
        placed above it. Returns (statement or FlattenSentinel, comments already
        standing above it), the latter so markers are not written twice.

        ``guard``: the statement runs when the module is imported (module or
        class level): the imports and the statement go into ``try: ... except
        ImportError:``, so that the module imports without torch; what the
        statement defines is then missing, and fails where it is used.
        ``inside``: the ``try ... except ImportError`` the statement stands in."""
        present = _present(result, left)
        if not present:
            return result, frozenset()
        imports: dict[str, str | None] = {}  # name bound -> import statement code (None: none to add), in order of first use
        respelled: dict[int, cst.BaseExpression] = {}
        for ref in present:
            binding = ref.binding
            if binding is None:
                continue
            if binding.optional or not (binding.module_level or _must_spell_out(binding, self.ctx)):
                # an optional import (``try: ... except ImportError:``) or a function's own import
                # stays where the code has it, in force already; it may be the one an earlier
                # conversion placed under this statement's marker
                imports.setdefault(binding.local, None)
                continue
            self.ctx.consume(ref.original)
            if _must_spell_out(binding, self.ctx):
                respelled[id(ref.node)] = parse_expr(ref.qualified).deep_clone()
                imports.setdefault(binding.module.split(".", 1)[0], f"import {binding.module}")
            else:
                imports.setdefault(binding.local, _import_as_written(binding))
        statements = list(result.nodes) if isinstance(result, cst.FlattenSentinel) else [result]
        if respelled:
            statements = [statement.visit(_Replace(respelled)) for statement in statements]
        standing = self._imports_above(original, inside is not None)
        already: set[str] = set(_comments(inside)) if inside is not None else set()
        new: list[cst.SimpleStatementLine] = []
        for name, code in imports.items():
            found = standing.get(name)
            if found is not None:
                self.ctx.kept_imports.add(found.body[0])
                already.update(_comments(found))
                continue
            if code is None:
                continue
            statement = cst.parse_statement(code + "\n")
            self.ctx.kept_imports.add(statement.body[0])
            new.append(statement)
        if new and guard:
            first = statements[0]
            body = [*new, first.with_changes(leading_lines=()), *statements[1:]]
            return _guarded(body, first.leading_lines), frozenset(already)
        if new:
            first = statements[0]
            new[0] = new[0].with_changes(leading_lines=first.leading_lines)
            statements = [*new, first.with_changes(leading_lines=()), *statements[1:]]
        result = statements[0] if len(statements) == 1 else cst.FlattenSentinel(statements)
        return result, frozenset(already)

    def _imports_above(self, original, guarded: bool) -> dict[str, cst.SimpleStatementLine]:
        """The import statements an earlier conversion placed directly above
        ``original``, by the name they bind: a run of imports under a marker,
        or opening the ``try`` block of a guarded statement."""
        found, top = {}, None
        statement = self.previous.get(id(original))
        while _is_single_import(statement):
            for alias in statement.body[0].names:
                found.setdefault(_bound_name(alias), statement)
            top = statement
            if is_marked(top):
                break  # the marker opens the run; imports above it are the code's own
            statement = self.previous.get(id(statement))
        if top is None:
            return {}
        return found if is_marked(top) or (guarded and statement is None) else {}


def _present(statement, left: dict[int, LeftReference]) -> list[LeftReference]:
    """The left references that are still in the statement (a reference the
    rewrite replaced afterwards, as part of a converted call, is not)."""
    if not left:
        return []
    finder = _Finder(left)
    for node in statement.nodes if isinstance(statement, cst.FlattenSentinel) else [statement]:
        walk(node, finder, prune=LAYOUT_TYPES)
    return finder.found


def present_nodes(statement, nodes: list[cst.CSTNode]) -> set[int]:
    """The ids of those ``nodes`` that are (by identity) in the statement."""
    wanted = {id(node): node for node in nodes}
    found = _Finder({key: LeftReference(node, node, None, "") for key, node in wanted.items()})
    for node in statement.nodes if isinstance(statement, cst.FlattenSentinel) else [statement]:
        walk(node, found, prune=LAYOUT_TYPES)
    return {id(ref.node) for ref in found.found}


class _Finder(cst.CSTVisitor):
    def __init__(self, left: dict[int, LeftReference]):
        super().__init__()
        self.left = left
        self.found: list[LeftReference] = []

    def on_visit(self, node) -> bool:
        ref = self.left.get(id(node))
        if ref is not None and ref.node is node:
            self.found.append(ref)
            return False
        return True


class _Replace(cst.CSTTransformer):
    def __init__(self, replacements: dict[int, cst.BaseExpression]):
        super().__init__()
        self.replacements = replacements

    def on_leave(self, original_node, updated_node):
        replacement = self.replacements.get(id(original_node))
        if replacement is None:
            return updated_node
        return replacement.with_changes(lpar=original_node.lpar, rpar=original_node.rpar)


def _must_spell_out(binding: ImportBinding, ctx: FileContext) -> bool:
    # a local import under this name would hide what the converted code means by it;
    # a name a sibling passed on has no import of its own here
    return binding.local in _MINDSPORE_LOCALS or binding.local in ctx.analysis.bound_names or binding.via_sibling


def _import_as_written(binding: ImportBinding) -> str:
    if binding.from_import:
        name = binding.qualified[len(binding.module) + 1 :]
        alias = "" if name == binding.local else f" as {binding.local}"
        return f"from {binding.module} import {name}{alias}"
    if binding.module.split(".", 1)[0] == binding.local:
        return f"import {binding.module}"
    return f"import {binding.module} as {binding.local}"


def _guarded(body: list, leading_lines) -> cst.Try:
    """``try: <body> except ImportError: <stand-ins>``: without torch, a class
    or function the body defines is a stand-in that raises when it is used
    (so importing it from elsewhere still works); other names stay undefined."""
    stand_ins = [_stand_in(s) for s in body if isinstance(s, (cst.ClassDef, cst.FunctionDef))]
    if not stand_ins:
        comment = cst.TrailingWhitespace(
            whitespace=cst.SimpleWhitespace("  "),
            comment=cst.Comment("# without torch what this defines stays undefined"),
        )
        stand_ins = [cst.SimpleStatementLine([cst.Pass()], trailing_whitespace=comment)]
    handler = cst.ExceptHandler(body=cst.IndentedBlock(stand_ins), type=cst.Name("ImportError"))
    return cst.Try(body=cst.IndentedBlock(body), handlers=[handler], leading_lines=leading_lines)


def _stand_in(definition: cst.ClassDef | cst.FunctionDef) -> cst.BaseCompoundStatement:
    name = definition.name.value
    message = f"{name} needs torch: ms-migrate did not convert it (see the TODO(ms-migrate) marker at its definition)"
    if isinstance(definition, cst.ClassDef):
        return cst.parse_statement(
            f"class {name}:\n    def __init__(self, *args, **kwargs):\n        raise NotImplementedError({json.dumps(message)})\n")
    return cst.parse_statement(f"def {name}(*args, **kwargs):\n    raise NotImplementedError({json.dumps(message)})\n")


def _comments(statement) -> list[str]:
    return [line.comment.value for line in statement.leading_lines if line.comment is not None]


def _is_single_import(statement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], (cst.Import, cst.ImportFrom))
        and not isinstance(statement.body[0].names, cst.ImportStar)
    )


def _bound_name(alias: cst.ImportAlias) -> str:
    if alias.asname is not None:
        return cst.Module([]).code_for_node(alias.asname.name)
    return cst.Module([]).code_for_node(alias.name).split(".", 1)[0]
