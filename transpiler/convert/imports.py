"""Import edits, applied once after the rewrite: drop torch import aliases
nobody uses any more, add the MindSpore imports the rules queued, and respell
generated names when a kept torch import still claims a short name."""

from __future__ import annotations

import sys

import libcst as cst

from transpiler.convert.comments import keep_in_statement
from transpiler.convert.diagnostics import Diagnostic, Severity
from transpiler.convert.requirements import NEW_REQUIREMENT, import_comment, requirement_of
from transpiler.convert.context import FileContext, parse_stmt
from transpiler.convert.engine import code_of
from transpiler.convert.formatting import KeepsFormatting
from transpiler.convert.names import is_torch_name
from transpiler.convert.node_sets import NodeSet
from transpiler.convert.statements import Placeholders
from transpiler.convert.type_checking_imports import annotation_only, into_type_checking
from transpiler.convert.walk import HOLDS_STATEMENTS, LAYOUT_TYPES, Transformer, rewrite, walk


def unused_torch_aliases(ctx: FileContext, converted: cst.Module | None = None) -> set[str]:
    """Torch import aliases with no use left. Counting rewritten references is
    exact for what the rules replace; references that went away with a dropped
    argument or statement are caught by looking for the alias in the converted
    tree (without this, a second conversion would drop the import)."""
    unused = set()
    present = None
    for local, binding in ctx.analysis.torch_aliases().items():
        if binding.optional and not ctx.analysis.alias_uses.get(local):
            # ``try: from torch import _assert`` / ``except ImportError:`` a fallback: the name
            # is for other modules; without torch the fallback defines it, as the code intends
            continue
        remaining = ctx.analysis.alias_uses.get(local, 0) - ctx.consumed.get(local, 0)
        if remaining > 0 and converted is not None:
            if present is None:
                present = referenced_names(converted)
            if local not in present:
                remaining = 0
        if remaining <= 0:
            unused.add(local)
    return unused


class _ReferencedNames(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()
        self._attrs: set[int] = set()

    def visit_Import(self, node) -> bool:
        return False

    def visit_ImportFrom(self, node) -> bool:
        return False

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._attrs.add(id(node.attr))  # `mindspore.Tensor` does not use a local `Tensor`

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) not in self._attrs:
            self.names.add(node.value)


def referenced_names(module: cst.Module) -> set[str]:
    """Every name the module refers to outside its import statements (a
    superset: definitions and keywords count too, which only keeps imports)."""
    collector = _ReferencedNames()
    walk(module, collector, prune=LAYOUT_TYPES)
    return collector.names


def _new_import_statements(ctx: FileContext, for_type_checkers: set[str] = frozenset()):
    """The import lines ``ctx.imports_needed`` asks for, and those of them only type
    checkers need (the locals ``for_type_checkers``: see type_checking_imports)."""
    plain: list[str] = []
    from_names: dict[str, list[str]] = {}
    checkers_only: set[str] = set()
    existing = ctx.analysis.imports
    for module, local in sorted(ctx.imports_needed):
        binding = existing.get(local)
        if binding is not None and binding.qualified == module:
            continue  # already imported by the user
        if local in for_type_checkers and local == module:
            checkers_only.add(f"import {module}")
        elif local in for_type_checkers and "." in module and module.rsplit(".", 1)[1] == local:
            checkers_only.add(f"from {module.rsplit('.', 1)[0]} import {local}")
        elif "." in module and local != module:
            parent, name = module.rsplit(".", 1)
            from_names.setdefault(parent, []).append(name)
        elif local == module:
            plain.append(f"import {module}")
        else:
            plain.append(f"import {module} as {local}")
    lines = sorted(plain, key=lambda s: (not s.startswith("import mindspore"), s))
    for parent, names in sorted(from_names.items()):
        lines.append(f"from {parent} import {', '.join(sorted(names))}")
    # a package the user did not have is named where it is imported and in the report
    # (transpiler.convert.requirements)
    statements = []
    for line in lines:
        comment = import_comment(line.split()[1])
        if comment is not None:
            ctx.diagnostics.append(Diagnostic(ctx.path, 1, 1, NEW_REQUIREMENT, Severity.WARNING,
                                              f"{requirement_of(line.split()[1])}: {comment[2:]}"))
        statements.append(parse_stmt("  ".join(filter(None, [line, comment])) + "\n"))
    checkers = [parse_stmt(f"{line}  {import_comment(line.split()[1]).replace('new requirement', 'for type checkers')}\n")
                for line in sorted(checkers_only)]
    return statements, checkers


class _ImportEditor(Transformer):
    """Walks statements only (never into expressions): cheap."""

    prune = LAYOUT_TYPES

    def __init__(self, unused: set[str], placeholders: Placeholders, kept: NodeSet, converts=is_torch_name,
                 passed: NodeSet | None = None, import_holders: set[int] | frozenset[int] = frozenset()):
        super().__init__()
        self.unused = unused
        self.converts = converts  # qualified name -> whether the conversion replaces what it imports
        self.placeholders = placeholders
        self.kept = kept  # imports marked statements still need
        # statements the rewrite passed by and those of the file holding imports: a statement
        # passed by with no import in it is left as it is (it keeps its identity, see positions.py)
        self.passed = passed if passed is not None else NodeSet()
        self.import_holders = import_holders

    def on_visit(self, node: cst.CSTNode) -> bool:
        if type(node) is cst.SimpleStatementLine:
            return any(type(s) is cst.Import or type(s) is cst.ImportFrom for s in node.body)
        if HOLDS_STATEMENTS[type(node)]:
            return id(node) in self.import_holders or node not in self.passed
        return type(node) is cst.Import or type(node) is cst.ImportFrom

    def leave_Import(self, original_node, updated_node):
        if original_node in self.kept:
            return updated_node
        keep = [a for a in updated_node.names if not self._drop(a, plain=True)]
        return self._result(updated_node, keep)

    def leave_ImportFrom(self, original_node, updated_node):
        if original_node in self.kept:
            return updated_node
        if isinstance(updated_node.names, cst.ImportStar) or updated_node.module is None:
            return updated_node
        module = code_of(updated_node.module)
        if updated_node.relative or not (
            is_torch_name(module) or any(self.converts(f"{module}.{code_of(a.name)}") for a in updated_node.names)
        ):
            return updated_node
        keep = [a for a in updated_node.names if not self._drop(a, plain=False)]
        return self._result(updated_node, keep)

    def _drop(self, alias: cst.ImportAlias, plain: bool) -> bool:
        qualified = code_of(alias.name)
        if alias.asname is not None:
            local = alias.asname.name.value  # type: ignore[union-attr]
        else:
            local = qualified.split(".", 1)[0]
        if plain and not self.converts(qualified):
            return False
        return local in self.unused

    @staticmethod
    def _result(node, keep):
        if len(keep) == len(node.names):
            return node
        if not keep:
            return cst.RemoveFromParent()
        keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        changes = {"names": keep}
        if isinstance(node, cst.ImportFrom) and node.rpar is not None and len(keep) == 1:
            changes.update(lpar=None, rpar=None)
        return node.with_changes(**changes)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if not updated_node.body:
            return self.placeholders.make(original_node)
        return keep_in_statement(original_node, updated_node)  # comments of removed names

    def leave_IndentedBlock(self, original_node, updated_node):
        return updated_node.with_changes(body=self.placeholders.compact(list(updated_node.body)))


def _is_torch_import_statement(statement: cst.CSTNode) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    for small in statement.body:
        if isinstance(small, cst.Import):
            if any(is_torch_name(code_of(a.name)) for a in small.names):
                return True
        elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
            if is_torch_name(code_of(small.module)):
                return True
    return False


def _contains_torch_import(statement: cst.CSTNode) -> bool:
    if _is_torch_import_statement(statement):
        return True
    if isinstance(statement, (cst.Try, cst.If)):
        inner = list(statement.body.body)
        for handler in getattr(statement, "handlers", ()):
            inner += list(handler.body.body)
        return any(_contains_torch_import(s) for s in inner)
    return False


def _insert_index(body: list[cst.CSTNode]) -> int:
    """Where new imports go: at the first torch import, else after the
    docstring and __future__ imports."""
    for i, statement in enumerate(body):
        if _contains_torch_import(statement):
            return i
    index = 0
    for i, statement in enumerate(body):
        if isinstance(statement, cst.SimpleStatementLine):
            first = statement.body[0]
            if i == 0 and isinstance(first, cst.Expr) and isinstance(first.value, (cst.SimpleString, cst.ConcatenatedString)):
                index = 1
                continue
            if isinstance(first, cst.ImportFrom) and first.module is not None and code_of(first.module) == "__future__":
                index = i + 1
                continue
        break
    return index


def _import_root(statement: cst.CSTNode) -> str | None:
    """The top-level module of a one-import line (not ``from __future__``)."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    node = statement.body[0]
    if isinstance(node, cst.Import):
        root = code_of(node.names[0].name).split(".", 1)[0]
    elif isinstance(node, cst.ImportFrom) and node.module is not None and not node.relative:
        root = code_of(node.module).split(".", 1)[0]
    else:
        return None
    return None if root == "__future__" else root


def _standard_library(statement: cst.CSTNode) -> bool:
    return _import_root(statement) in sys.stdlib_module_names


def _sort_key(statement: cst.SimpleStatementLine) -> tuple[bool, str]:
    """isort's order within a section: plain imports, then from-imports, each by module."""
    node = statement.body[0]
    module = node.names[0].name if isinstance(node, cst.Import) else node.module
    return isinstance(node, cst.ImportFrom), code_of(module).lower()


def _into_standard_group(body: list, index: int, new: list[cst.SimpleStatementLine]) -> bool:
    """Puts the standard-library imports the conversion needs (``import math``) among the
    file's own standard-library imports above ``index``: in order where that group is
    sorted, else at its end. False when the file has none there."""
    group = [i for i in range(index) if _standard_library(body[i])]
    if not group:
        return False
    last = group[-1]
    first = last
    while first - 1 in group and not body[first].leading_lines:
        first -= 1  # the run of imports ending at the last one: the file's standard-library group
    keys = [_sort_key(s) for s in body[first:last + 1]]
    in_order = keys == sorted(keys)
    for statement in sorted(new, key=_sort_key):
        key = _sort_key(statement)
        position = last + 1
        if in_order:
            position = next((first + k for k, other in enumerate(keys) if other > key), last + 1)
        if position == first:  # before the group's first import: its blank lines and comments move up
            statement = statement.with_changes(leading_lines=body[first].leading_lines)
            body[first] = body[first].with_changes(leading_lines=())
        body.insert(position, statement)
        keys.insert(position - first, key)
        last += 1
    return True


class _Respell(KeepsFormatting):
    def __init__(self, targets: dict[int, str], to_format: NodeSet):
        super().__init__(to_format)
        self.targets = targets

    def on_leave(self, original_node, updated_node):
        qualified = self.targets.get(id(original_node))
        if qualified is not None:
            return cst.parse_expression(qualified)
        return super().on_leave(original_node, updated_node)


def fix_imports(module: cst.Module, ctx: FileContext) -> cst.Module:
    unused = unused_torch_aliases(ctx, module)
    kept_torch_locals = set(ctx.analysis.torch_aliases()) - unused
    clashes = {local for _, local, _ in ctx.generated_refs if local in kept_torch_locals}
    if clashes:
        targets = {id(node): qualified for node, local, qualified in ctx.generated_refs if local in clashes}
        module = rewrite(module, _Respell(targets, ctx.to_format))
        ctx.imports_needed = {(m, l) for m, l in ctx.imports_needed if l not in clashes}
        ctx.imports_needed.add(("mindspore", "mindspore"))
    placeholders = Placeholders(track=ctx.to_format)
    index = _insert_index(list(module.body))
    if unused:
        module = rewrite(module, _ImportEditor(unused, placeholders, ctx.kept_imports, ctx.analysis.converts_import_of,
                                               ctx.passed, ctx.analysis.import_holders))
    body = list(module.body)
    # a new requirement only annotations name goes where the file imports for type checkers
    for_type_checkers = annotation_only(module, {local for name, local in ctx.imports_needed if import_comment(name)})
    new_imports, checkers = _new_import_statements(ctx, for_type_checkers) if ctx.imports_needed else ([], [])
    if checkers:
        into_type_checking(body, checkers)
    standard = [s for s in new_imports if _standard_library(s)]
    new_imports = [s for s in new_imports if s not in standard]
    if standard and _into_standard_group(body, index, standard):
        index += len(standard)
        standard = []
    if new_imports:
        # The new imports take over the comment lines above the first torch
        # import, whether that import survived or not.
        anchor = body[index] if index < len(body) else None
        if anchor is not None and (placeholders.is_placeholder(anchor) or _is_torch_import_statement(anchor)):
            new_imports[0] = new_imports[0].with_changes(leading_lines=anchor.leading_lines)
            if placeholders.is_placeholder(anchor):
                body[index : index + 1] = new_imports
            else:
                body[index:index] = new_imports
                body[index + len(new_imports)] = anchor.with_changes(leading_lines=())
        else:
            body[index:index] = new_imports
    if standard:  # a group of their own, above the file's first import (or the MindSpore imports)
        standard.sort(key=_sort_key)
        index = next((i for i in range(index) if _import_root(body[i]) is not None), index)
        following = body[index] if index < len(body) else None
        if following is not None and not placeholders.is_placeholder(following):
            standard[0] = standard[0].with_changes(leading_lines=following.leading_lines)
            body[index] = following.with_changes(leading_lines=(cst.EmptyLine(),))
        body[index:index] = standard
    return module.with_changes(body=placeholders.compact(body))
