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

A statement that runs when the module is imported (module or class level)
goes with its imports into ``try: ... except ImportError:``, so that the module
imports without torch. What it defines must not then go silently missing (a
NameError far away, saying nothing of the marker): the ``except`` branch binds
each name the statement defines to a stand-in that fails where it is used,
naming the marker, its line and its reason:

    # TODO(ms-migrate): torch.frobnicate: no MindSpore rule for this API
    try:
        import torch

        table = torch.frobnicate(3)
    except ImportError:
        table = NotConverted("table", "model.py:12: torch.frobnicate: no MindSpore rule for this API")

``NotConverted`` (written once at the top of the file) raises on any use of
the value; a class or function the statement defines becomes a class or
function of that name that raises when called, so importing it from elsewhere,
deriving from it and ``isinstance`` still work. A statement that defines
nothing warns, when the module is imported, that it did not run. The line is
the marker's line in the output (``number_stand_ins``, after rendering).

Converting the output again changes nothing: imports already standing right
above the statement are kept instead of added twice, and a statement already
in its ``try`` keeps the stand-ins it has.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

import libcst as cst

from transpiler.convert.bindings import LocalBindings
from transpiler.convert.codegen import code_for_node
from transpiler.convert.context import SPELLINGS, FileContext, parse_expr
from transpiler.convert.diagnostics import MARKER_PREFIX
from transpiler.convert.markers import LINE, REASONS, is_marked
from transpiler.convert.names import ImportBinding, is_torch_name
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
        statement defines is then a stand-in that fails where it is used,
        naming the marker (see the module docstring).
        ``inside``: the ``try ... except ImportError`` the statement stands in."""
        present = _present(result, left)
        if not present:
            return result, frozenset()
        if guard and inside is None and _all_stored(result, present):
            held = self._holding(original, result, present)
            if held is not None:
                return held
        imports: dict[str, str | None] = {}  # name bound -> import statement code (None: none to add), in order of first use
        respelled: dict[int, cst.BaseExpression] = {}
        consumed: set[int] = set()
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
            if id(ref.original) not in consumed:  # once for the reference, not for each copy of it
                consumed.add(id(ref.original))
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
            return self._guarded(body, new, first.leading_lines), frozenset(already)
        if new:
            first = statements[0]
            new[0] = new[0].with_changes(leading_lines=first.leading_lines)
            statements = [*new, first.with_changes(leading_lines=()), *statements[1:]]
        result = statements[0] if len(statements) == 1 else cst.FlattenSentinel(statements)
        return result, frozenset(already)

    def _holding(self, original, result, present: list[LeftReference]):
        """A module-level statement that only stores torch names in a value
        (``encoders = {"resnet18": {"block": BasicBlock, ...}}``, a registry of
        layers) runs without torch: the names it stores are imported under the
        marker in ``try: ... except ImportError:``, each a stand-in without
        torch that fails where it is used, naming the marker. The rest of the
        value (the other entries) is there as the code wrote it. None when the
        names are imported otherwise (the statement is guarded as a whole)."""
        bindings = [ref.binding for ref in present]
        if any(binding is None for binding in bindings):
            return None
        before = self.previous.get(id(original))
        if all(binding.optional for binding in bindings) and isinstance(before, cst.Try):
            return result, frozenset(_comments(before))  # converted before: the stand-ins stand above it
        if any(binding.optional or not binding.module_level or _must_spell_out(binding, self.ctx)
               for binding in bindings):
            return None
        if any(not isinstance(ref.node, cst.Name) or ref.node.value != ref.binding.local for ref in present):
            return None  # ``torchvision.models.resnet18`` reads an attribute of the name: it runs
        imports: dict[str, str] = {}
        consumed: set[int] = set()
        for ref in present:
            if id(ref.original) not in consumed:
                consumed.add(id(ref.original))
                self.ctx.consume(ref.original)
            imports.setdefault(ref.binding.local, _import_as_written(ref.binding))
        new = []
        for code in imports.values():
            statement = cst.parse_statement(code + "\n")
            self.ctx.kept_imports.add(statement.body[0])
            new.append(statement)
        where = f"{os.path.basename(self.ctx.path)}:{LINE}: {REASONS}"
        self.ctx.facts[_STAND_INS] = True
        stand_ins = [_stand_in(name, define_not_converted(self.ctx), where) for name in imports]
        handler = cst.ExceptHandler(body=cst.IndentedBlock(stand_ins), type=cst.Name("ImportError"))
        holding = cst.Try(body=cst.IndentedBlock(new), handlers=[handler], leading_lines=result.leading_lines)
        return cst.FlattenSentinel([holding, result.with_changes(leading_lines=())]), frozenset()

    def _guarded(self, body: list, new: list, leading_lines) -> cst.Try:
        """``try: <body> except ImportError: <stand-ins>``: without torch, each
        name the body defines is a stand-in that fails where it is used, naming
        the marker (whose text ``add_markers`` and whose line
        ``number_stand_ins`` fill in); a body that defines nothing warns that
        it did not run."""
        placed = {id(statement) for statement in new}
        names: dict[str, cst.CSTNode | None] = {}
        for statement in body:
            if id(statement) not in placed:
                _bindings(statement, names)
        where = f"{os.path.basename(self.ctx.path)}:{LINE}: {REASONS}"
        self.ctx.facts[_STAND_INS] = True
        stand_ins = []
        for name, definition in names.items():
            if definition is None:
                definition = define_not_converted(self.ctx)
            stand_ins.append(_stand_in(name, definition, where))
        if not stand_ins:
            message = json.dumps(f"not run: this statement needs torch, and ms-migrate could not convert it "
                                 f"(TODO(ms-migrate) at {where})", ensure_ascii=False)
            if "warnings" in self.ctx.analysis.bound_names:
                stand_ins = [cst.parse_statement("pass  # without torch this statement does not run\n")]
            else:
                self.ctx.imports_needed.add(("warnings", "warnings"))
                stand_ins = [cst.parse_statement(f"warnings.warn({message})\n")]
        handler = cst.ExceptHandler(body=cst.IndentedBlock(stand_ins), type=cst.Name("ImportError"))
        return cst.Try(body=cst.IndentedBlock(body), handlers=[handler], leading_lines=leading_lines)

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
    nodes = statement.nodes if isinstance(statement, cst.FlattenSentinel) else [statement]
    finder = _Finder(left)
    for node in nodes:
        walk(node, finder, prune=LAYOUT_TYPES)
    # a hook that repeats an argument in its result (``torch.FloatTensor(x)`` -> ``ops.zeros(x, ...)
    # if isinstance(x, int) else mindspore.Tensor(x, ...)``) leaves copies of the reference, not the
    # node: each copy needs the import as much as the node would (a torch name that a MindSpore
    # spelling shares, ``nn.ReLU``, is not looked for: the copy could be MindSpore's)
    found = {id(ref) for ref in finder.found}
    missing = {code_for_node(ref.node): ref for ref in left.values() if id(ref) not in found
               and ref.binding is not None and ref.binding.local not in _MINDSPORE_LOCALS}
    if missing:
        copies = _Copies(missing)
        for node in nodes:
            walk(node, copies, prune=LAYOUT_TYPES)
        finder.found.extend(copies.found)
    return finder.found


def _all_stored(statement, present: list[LeftReference]) -> bool:
    """Whether each reference is an entry of the value the statement assigns
    (the value itself, an item of a list or tuple, a value of a dict, nested):
    stored, not called or read when the statement runs (nor hashed: not a key)."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return False
    assignment = statement.body[0]
    if not isinstance(assignment, (cst.Assign, cst.AnnAssign)) or assignment.value is None:
        return False
    entries: set[int] = set()
    pending = [assignment.value]
    while pending:
        value = pending.pop()
        if isinstance(value, cst.Dict):
            pending.extend(element.value for element in value.elements if isinstance(element, cst.DictElement))
        elif isinstance(value, (cst.List, cst.Tuple)):
            pending.extend(element.value for element in value.elements if isinstance(element, cst.Element))
        else:
            entries.add(id(value))
    return all(id(ref.node) in entries for ref in present)


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


class _Copies(cst.CSTVisitor):
    """Names and attribute chains spelled as a missing left reference is (by its
    code): copies a hook made of it."""

    def __init__(self, missing: dict[str, LeftReference]):
        super().__init__()
        self.missing = missing
        self.found: list[LeftReference] = []

    def on_visit(self, node) -> bool:
        if isinstance(node, (cst.Name, cst.Attribute)):
            ref = self.missing.get(code_for_node(node))
            if ref is not None:
                self.found.append(LeftReference(node, ref.original, ref.binding, ref.qualified))
                return False
        if isinstance(node, cst.Attribute):  # the attribute's name is no reference of its own
            walk(node.value, self, prune=LAYOUT_TYPES)
            return False
        if isinstance(node, cst.Arg) and node.keyword is not None:
            walk(node.value, self, prune=LAYOUT_TYPES)
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
    if isinstance(binding.statement, cst.Assign):  # X, _ = optional_import("mod", name="X"): the file's own way
        return cst.Module([]).code_for_node(binding.statement).strip()
    if binding.from_import:
        name = binding.qualified[len(binding.module) + 1 :]
        alias = "" if name == binding.local else f" as {binding.local}"
        return f"from {binding.module} import {name}{alias}"
    if binding.module.split(".", 1)[0] == binding.local:
        return f"import {binding.module}"
    return f"import {binding.module} as {binding.local}"


def _stand_in(name: str, definition, where: str) -> cst.BaseStatement:
    """A class or function that raises when called, or ``NotConverted(...)``."""
    if isinstance(definition, (cst.ClassDef, cst.FunctionDef)):
        message = json.dumps(f"{name} needs torch: ms-migrate could not convert it (TODO(ms-migrate) at {where})",
                             ensure_ascii=False)
        if isinstance(definition, cst.ClassDef):
            # an autograd Function is used through Fn.apply, often read at module level (f = Fn.apply)
            apply = ("    @staticmethod\n    def apply(*args, **kwargs):\n"
                     f"        raise NotImplementedError({message})\n\n"
                     if any(_last_name(base.value) == "Function" for base in definition.bases) else "")
            return cst.parse_statement(f"class {name}:\n{apply}    def __init__(self, *args, **kwargs):\n"
                                       f"        raise NotImplementedError({message})\n")
        return cst.parse_statement(f"def {name}(*args, **kwargs):\n    raise NotImplementedError({message})\n")
    return cst.parse_statement(f"{name} = {definition}({json.dumps(name)}, {json.dumps(where, ensure_ascii=False)})\n")


def _last_name(expr: cst.BaseExpression) -> str | None:
    """``Function`` of ``torch.autograd.Function`` or ``Function``."""
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return expr.value if isinstance(expr, cst.Name) else None


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


# -- the names a guarded statement defines ------------------------------------------

def _bindings(statement: cst.CSTNode, names: dict) -> None:
    """Add to ``names`` each name ``statement`` binds in the scope it runs in
    (the class or function node for a definition, else None), in order."""
    walk(statement, _Bindings(names), prune=LAYOUT_TYPES)


class _Bindings(LocalBindings):
    """What :class:`LocalBindings` finds, plus the imports of anything but torch; not
    ``except ... as e`` (Python unbinds ``e`` after the handler)."""

    def __init__(self, names: dict):
        super().__init__()
        self.names = names

    def bind(self, name: str, definition) -> None:
        if definition is not None or name not in self.names:
            self.names[name] = definition

    def visit_ExceptHandler(self, node) -> None:
        return None

    # an import of torch binds nothing torch-less code could use: a stand-in would only
    # stand for torch itself (the marked statements that use it import it under their marker)
    def visit_Import(self, node) -> bool:
        for alias in node.names:
            if not is_torch_name(cst.Module([]).code_for_node(alias.name)):
                self.bind(_bound_name(alias), None)
        return False

    def visit_ImportFrom(self, node) -> bool:
        module = cst.Module([]).code_for_node(node.module) if node.module is not None else ""
        if not isinstance(node.names, cst.ImportStar) and (node.relative or not is_torch_name(module)):
            for alias in node.names:
                self.bind(_bound_name(alias), None)
        return False


# -- the helper the stand-ins of values use ----------------------------------------

_NOT_CONVERTED = '''
class {name}:
    """A value ms-migrate could not convert: any use raises, naming its marker."""

    def __init__(self, name, marker):
        self.message = (
            f"{{name}} is undefined: ms-migrate could not convert the statement "
            f"that defines it (TODO(ms-migrate) at {{marker}})"
        )

    def __repr__(self):
        return f"<{{self.message}}>"

    def fail(self, *args, **kwargs):
        raise NotImplementedError(self.message)

    __getattr__ = __call__ = __getitem__ = __setitem__ = __delitem__ = fail
    __iter__ = __len__ = __contains__ = __bool__ = __hash__ = fail
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = fail
    __str__ = __format__ = __int__ = __float__ = __index__ = __fspath__ = fail
    __enter__ = __exit__ = __instancecheck__ = __subclasscheck__ = fail
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = fail
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = fail
    __mod__ = __rmod__ = __pow__ = __rpow__ = __matmul__ = __rmatmul__ = fail
    __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = fail
    __neg__ = __pos__ = __abs__ = __invert__ = fail
'''


def define_not_converted(ctx: FileContext) -> str:
    """The name the file's ``NotConverted`` class is written under (once, above the code)."""
    from rewrite_rules.api import define

    return define(ctx, "NotConverted", _NOT_CONVERTED).value


# -- after rendering: the marker's line in the stand-ins ---------------------------

_STAND_INS = "stand-ins written"  # ctx.facts key: this conversion wrote stand-ins
_MARKER = MARKER_PREFIX.strip()


def number_stand_ins(code: str, ctx: FileContext) -> str:
    """``code`` (the rendered output) with the line of its marker in each
    stand-in's message. A stand-in stands in the ``except ImportError:`` of a
    ``try:`` whose markers are the comment lines right above the ``try``.
    Replacing the placeholder with a number keeps every line where it is."""
    if not ctx.facts.get(_STAND_INS) or LINE not in code:
        return code
    lines = code.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if LINE in line:
            lines[index] = line.replace(LINE, _where(lines, _marker_line(lines, index)))
    return "".join(lines)


# the line a notebook's cells are joined at (transpiler/batch/notebooks.py)
_CELL_BOUNDARY = re.compile(r"[ \t]*# ms-migrate-cell-[0-9a-f]+-(\d+)[ \t]*$")


def _where(lines: list[str], marker: int | None) -> str:
    """The marker's 1-based line; in a notebook, its cell ("cell 3"), where
    the cell's lines are not those of the joined code being converted."""
    if marker is None:
        return "?"
    for index in range(marker - 1, -1, -1):
        boundary = _CELL_BOUNDARY.match(lines[index])
        if boundary is not None:
            return f"cell {int(boundary[1]) + 1}"
    return str(marker + 1)


def _marker_line(lines: list[str], index: int) -> int | None:
    """The index of the first marker line above the ``try`` whose ``except``
    branch holds line ``index`` (None if the layout is not the one written)."""
    handler = _upward(lines, index, lambda text, indent: text.startswith("except ImportError")
                      and indent < _indent(lines[index]))
    if handler is None:
        return None
    level = _indent(lines[handler])
    opening = _upward(lines, handler, lambda text, indent: text == "try:" and indent == level)
    if opening is None:
        return None
    first = None
    for above in range(opening - 1, -1, -1):  # the comment lines right above the try (a comment the
        text = lines[above].strip()            # rewrite moved off a line may follow the markers)
        if not text.startswith("#"):
            break
        if text.startswith(_MARKER):
            first = above
    return first


def _upward(lines: list[str], start: int, wanted) -> int | None:
    for index in range(start - 1, -1, -1):
        text = lines[index].strip()
        if text and wanted(text, _indent(lines[index])):
            return index
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))
