"""The metadata pass: which names refer to what, computed once per file.

One visitor walk resolves every Name/Attribute chain through the file's
imports (``import torch.nn as nn``, ``from torch.nn import functional as F``,
``import torch as t`` ...) to a qualified name, and drops references that a
local binding shadows (``def f(nn): nn.Linear`` is not torch). Resolution is
deferred to the end of each function scope because Python decides locality by
any binding in the whole function body.

It also records which statements hold anything the rewriter may touch, so the
rewriting traversal can skip every other subtree.

A module-level alias of a torch context manager the conversion unwraps (RAFT's
``try: autocast = torch.cuda.amp.autocast`` / ``except: class autocast: ...``, a
stand-in for torch < 1.6) resolves where it is entered: ``with autocast(enabled=f):``
and ``@no_grad()`` are then torch's, and unwrapped like ``with
torch.cuda.amp.autocast(...):`` (structural/grad_mode.py). Measured on MindSpore
2.10: left as a call of the alias, the context fails GRAPH_MODE ("Only support
jit_class instance, but got PythonObject(type: <class 'contextlib.nullcontext'>")
wherever a compiled construct enters it. Only these positions resolve, and only for
a name nothing else at module level binds (the ``except`` branch's stand-in aside):
any other read keeps its meaning, the alias's value, as written. When every read of
the name is such a context, nothing needs the alias any more: ``Analysis.
unwrapped_aliases`` names the statement that goes (the alias line, or the whole
``try`` when it holds only the alias and its stand-in); a file that also reads the
name as a value (``partial(autocast, enabled=amp)``) keeps the alias and its
conversion, which runs in PyNative.
"""

from __future__ import annotations

import sys

from collections import Counter
from dataclasses import dataclass, field

import libcst as cst

from transpiler.convert.bindings import LocalBindings
from transpiler.convert.markers import is_marked
from transpiler.convert.torch_contexts import UNWRAPPED_CONTEXTS
from transpiler.convert.walk import LAYOUT_TYPES, StatementVisitor, walk

# Roots whose names we resolve and count as torch API uses (einops: its
# functions and layers are converted like torch's and its imports removed).
TORCH_ROOTS = frozenset({"torch", "torchvision", "einops"})
# The torch ecosystem: listed as third-party, converted only where a rule says so.
ECOSYSTEM_ROOTS = frozenset(
    {"torchvision", "torchaudio", "torchtext", "timm", "transformers", "einops", "apex",
     "lightning", "pytorch_lightning", "torchmetrics", "fairseq", "mmcv", "detectron2"}
)


def is_torch_name(qualified: str) -> bool:
    return qualified.split(".", 1)[0] in TORCH_ROOTS


def chain_parts(node: cst.BaseExpression) -> list[str] | None:
    """``a.b.c`` -> ["a", "b", "c"]; None if the chain does not end in a Name."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    parts.reverse()
    return parts


@dataclass
class ImportBinding:
    local: str
    qualified: str
    statement: cst.CSTNode  # the Import/ImportFrom node
    module_level: bool
    module: str = ""  # the module the statement names: ``import a.b as c`` -> "a.b"; ``from a.b import c`` -> "a.b"
    optional: bool = False  # inside ``try: ... except ImportError:``: the code has a fallback
    via_sibling: bool = False  # bound by another file of the project (``from .layers import *``)

    @property
    def from_import(self) -> bool:
        if isinstance(self.statement, cst.Assign):  # ``X, _ = optional_import("mod", name="X")``
            return self.qualified != self.module
        return isinstance(self.statement, cst.ImportFrom)


@dataclass(frozen=True)
class ContextAlias:
    """``autocast = torch.cuda.amp.autocast`` at module level, whose every use the conversion unwraps."""

    local: str
    qualified: str
    statement: cst.BaseStatement  # what goes: the alias line, or the ``try`` that holds it and its stand-in


@dataclass
class _AliasSite:
    """A module-level ``NAME = a.b.c`` line: a candidate alias (see the module docstring)."""

    line: cst.SimpleStatementLine
    assign: cst.Assign
    parts: list[str]  # the dotted value
    guard: cst.Try | None  # the module-level ``try`` whose body holds the line
    # what the contexts entered through it refer through; its qualified name is known once
    # the file's imports are (empty: the value is no torch context)
    binding: ImportBinding = field(init=False)

    def __post_init__(self) -> None:
        self.binding = ImportBinding(self.assign.targets[0].target.value, "", self.assign, True)


@dataclass
class _Scope:
    kind: str  # "module", "function", "class", "comprehension"
    bound: set[str] = field(default_factory=set)
    declared_global: set[str] = field(default_factory=set)
    candidates: list[tuple[cst.CSTNode, ImportBinding, str]] = field(default_factory=list)
    # references in a function body to a name a module-level import binds only further
    # down: the function runs later, when it is bound (node, dotted parts, statements around it)
    late: list[tuple[cst.CSTNode, list[str], tuple[cst.CSTNode, ...]]] = field(default_factory=list)


@dataclass
class Analysis:
    imports: dict[str, ImportBinding] = field(default_factory=dict)
    references: dict[int, str] = field(default_factory=dict)  # id(node) -> qualified name
    # id(node) -> the import it refers through (a name imported in several places: the one in force there)
    reference_binding: dict[int, ImportBinding] = field(default_factory=dict)
    alias_uses: Counter = field(default_factory=Counter)
    interesting: set[int] = field(default_factory=set)  # ids of statements to visit
    import_holders: set[int] = field(default_factory=set)  # ids of the statements around each import
    bound_names: set[str] = field(default_factory=set)  # non-import bindings anywhere
    cell_classes: set[str] = field(default_factory=set)
    star_imports: list[cst.ImportFrom] = field(default_factory=list)
    ecosystem_imports: list[tuple[cst.CSTNode, str]] = field(default_factory=list)
    # names outside torch that rules convert (a project's own layers, from user rules)
    rule_names: frozenset[str] = frozenset()
    # id(statement) -> the module-level alias of a torch context it binds, which no use needs any more
    unwrapped_aliases: dict[int, ContextAlias] = field(default_factory=dict)

    def qualified(self, node: cst.CSTNode) -> str | None:
        return self.references.get(id(node))

    def torch_aliases(self) -> dict[str, ImportBinding]:
        return {k: b for k, b in self.imports.items() if is_torch_name(b.qualified) or b.qualified in self.rule_names}

    def converts_import_of(self, qualified: str) -> bool:
        """An imported name the conversion replaces (torch, or a name a user rule converts)."""
        return is_torch_name(qualified) or qualified in self.rule_names


class NameAnalyzer(StatementVisitor):
    """Resolves names; see the module docstring."""

    def __init__(self, method_names: frozenset[str], module_base: "callable", attribute_names=frozenset(),
                 siblings=None, rule_names=frozenset()):
        super().__init__()
        self.result = Analysis(rule_names=rule_names)
        self._method_names = method_names
        self._attribute_names = attribute_names
        self._is_module_base = module_base
        # Module subclasses other files of the project define
        self._sibling_cells = siblings.cells if siblings is not None else frozenset()
        for local, qualified in siblings.torch_names if siblings is not None else ():
            # torch names a sibling passes on (``from .layers import *``): as if imported here
            root = qualified.split(".", 1)[0]
            self.result.imports[local] = ImportBinding(local, qualified, _plain_import(root), True, root,
                                                       via_sibling=True)
        self._scopes: list[_Scope] = []
        self._skip: set[int] = set()
        self._module_imports: dict[str, ImportBinding] = {}  # module-level bindings, by local name
        self._imported_below: frozenset[str] = frozenset()  # local names some module-level import binds
        self._rebound: set[str] = set()  # torch import names a module-level assignment has rebound
        self._alias_sites: dict[str, _AliasSite] = {}  # module-level ``NAME = a.b.c``, by NAME
        self._alias_reads: Counter = Counter()  # reads of those names anywhere in the file
        self._contexts: set[int] = set()  # ids of the Names entered as a context or used as a decorator
        self._declared_global: set[str] = set()  # names some function declares global

    # -- scopes -------------------------------------------------------------
    def _push(self, kind: str) -> _Scope:
        scope = _Scope(kind)
        self._scopes.append(scope)
        return scope

    def _pop(self) -> None:
        scope = self._scopes.pop()
        if scope.kind == "module":
            self._settle_aliases(scope)
            for node, binding, qualified in scope.candidates:
                self._resolve(node, binding, qualified)
            self._resolve_late(scope.late)
            return
        parent = self._enclosing_for_free_names()
        for candidate in scope.candidates:
            alias = candidate[1].local
            if alias in scope.bound and alias not in scope.declared_global:
                continue  # shadowed by a local binding
            parent.candidates.append(candidate)
        parent.late.extend(late for late in scope.late
                           if late[1][0] not in scope.bound or late[1][0] in scope.declared_global)

    def _resolve_late(self, late) -> None:
        for node, parts, statements in late:
            binding = self._module_imports.get(parts[0])
            if binding is None:
                continue
            qualified = ".".join([binding.qualified, *parts[1:]])
            if is_torch_name(binding.qualified) or qualified in self.result.rule_names:
                self._resolve(node, binding, qualified)
                self.result.interesting.update(id(statement) for statement in statements)

    def _settle_aliases(self, scope: _Scope) -> None:
        """Resolves the contexts entered through a module-level alias of a torch context
        (the file's imports are all known now), and records the aliases no use needs."""
        for name, site in self._alias_sites.items():
            binding = self._module_imports.get(site.parts[0])
            if binding is None or name in self.result.imports or name in self._declared_global:
                continue
            qualified = ".".join([binding.qualified, *site.parts[1:]])
            if qualified in UNWRAPPED_CONTEXTS:
                site.binding.qualified, site.binding.module = qualified, qualified.rsplit(".", 1)[0]
        candidates, entered = [], Counter()
        for node, binding, qualified in scope.candidates:
            if qualified is not None:
                candidates.append((node, binding, qualified))
            elif binding.qualified:  # entered through an alias of a torch context
                self._resolve(node, binding, binding.qualified)
                entered[binding.local] += 1
        unneeded = {id(site.assign.value) for name, site in self._alias_sites.items()
                    if entered[name] and entered[name] == self._alias_reads[name]}
        for name, site in self._alias_sites.items():
            if id(site.assign.value) in unneeded:
                statement = site.guard if _only_alias_and_stand_in(site.guard, site.line, name) else site.line
                self.result.unwrapped_aliases[id(statement)] = ContextAlias(name, site.binding.qualified, statement)
        # the value of an alias that goes is no torch reference: its import may go too
        scope.candidates = [c for c in candidates if id(c[0]) not in unneeded]

    def _enclosing_for_free_names(self) -> _Scope:
        # Free names of a function skip enclosing class bodies (Python scoping).
        for scope in reversed(self._scopes):
            if scope.kind != "class":
                return scope
        return self._scopes[0]

    def _resolve(self, node: cst.CSTNode, binding: ImportBinding, qualified: str) -> None:
        self.result.references[id(node)] = qualified
        self.result.reference_binding[id(node)] = binding
        self.result.alias_uses[binding.local] += 1

    def _bind(self, name: str) -> None:
        self._scopes[-1].bound.add(name)
        self.result.bound_names.add(name)

    def _bind_target(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self._bind(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._bind_target(element.value)
        elif isinstance(target, cst.StarredElement):
            self._bind_target(target.value)

    def _mark_interesting(self) -> None:
        for statement in self.statements:
            self.result.interesting.add(id(statement))

    # -- statements ---------------------------------------------------------
    def visit_Module(self, node: cst.Module) -> None:
        self._push("module")
        self._imported_below = _module_level_import_names(node.body)
        self._alias_sites = _alias_sites(node.body, self._imported_below)

    def leave_Module(self, original_node: cst.Module) -> None:
        self._pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._bind(node.name.value)
        self._skip.add(id(node.name))
        self._push("function")
        if node.name.value == "forward" or node.decorators:
            self._mark_interesting()

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self._push("function")

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self._pop()

    def visit_Param(self, node: cst.Param) -> None:
        self._bind(node.name.value)
        self._skip.add(id(node.name))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._bind(node.name.value)
        self._skip.add(id(node.name))
        for base in node.bases:
            parts = chain_parts(base.value)
            if parts is None:
                continue
            if len(parts) == 1 and parts[0] in self.result.cell_classes or ".".join(parts) in self._sibling_cells:
                self.result.cell_classes.add(node.name.value)
                self._mark_interesting()
                continue
            binding = self.result.imports.get(parts[0])
            if binding is not None:
                qualified = ".".join([binding.qualified, *parts[1:]])
                if self._is_module_base(qualified) or _model_library_class(qualified, node):
                    self.result.cell_classes.add(node.name.value)
                    self._mark_interesting()

    def visit_ClassDef_body(self, node: cst.ClassDef) -> None:
        self._push("class")

    def leave_ClassDef_body(self, node: cst.ClassDef) -> None:
        self._pop()

    def _visit_comprehension(self, node) -> None:
        self._push("comprehension")

    def _leave_comprehension(self, node) -> None:
        self._pop()

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comprehension
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _leave_comprehension

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self._bind_target(node.target)

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self._scopes[-1].declared_global.add(item.name.value)
            self._declared_global.add(item.name.value)
            self._skip.add(id(item.name))

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        for item in node.names:
            self._scopes[-1].declared_global.add(item.name.value)
            self._skip.add(id(item.name))

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(self._scopes) > 1:  # module-level rebinding (try/except ImportError) is ignored
            for target in node.targets:
                self._bind_target(target.target)
        else:
            guarded = _guarded_import(node)
            if guarded is not None:
                name, qualified, module = guarded
                self._skip.add(id(name))
                self._record_import(name.value, qualified, node, True, module)
                return
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    self.result.bound_names.add(target.target.value)
                    if target.target.value in self.result.imports or target.target.value in self._alias_sites:
                        self._skip.add(id(target.target))  # the name assigned, not a use of the import (alias)

    def leave_Assign(self, original_node: cst.Assign) -> None:
        # ``optim = torch.optim.Adam(...)`` after ``import torch.optim as optim``: from here on
        # ``optim`` is the file's own variable (its value still read the import)
        for target in original_node.targets:
            if isinstance(target.target, cst.Name) and self._rebinds_import(target.target):
                self._rebound.add(target.target.value)

    def _rebinds_import(self, target: cst.Name) -> bool:
        """A module-level assignment, outside ``try`` (an ImportError fallback), to a torch import's name."""
        binding = self.result.imports.get(target.value)
        return (len(self._scopes) == 1 and binding is not None and is_torch_name(binding.qualified)
                and not any(isinstance(statement, cst.Try) for statement in self.statements))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if len(self._scopes) > 1:
            self._bind_target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if len(self._scopes) > 1:
            self._bind_target(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target)

    def visit_For(self, node: cst.For) -> None:
        if len(self._scopes) > 1:
            self._bind_target(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        if isinstance(node.name, cst.Name):
            self._skip.add(id(node.name))
            if len(self._scopes) > 1:
                self._bind(node.name.value)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        pass

    # -- imports ------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> bool:
        self.result.import_holders.update(id(statement) for statement in self.statements)
        module_level = len(self._scopes) == 1
        for alias in node.names:
            dotted = _dotted(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local, qualified = alias.asname.name.value, dotted
            else:
                local = qualified = dotted.split(".", 1)[0]
            self._record_import(local, qualified, node, module_level, dotted)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        self.result.import_holders.update(id(statement) for statement in self.statements)
        if node.relative or node.module is None:
            if isinstance(node.names, cst.ImportStar):
                return False
            for alias in node.names:
                local = _alias_local(alias)
                if local:
                    self._bind_local_import(local)
            return False
        module = _dotted(node.module)
        module_level = len(self._scopes) == 1
        if isinstance(node.names, cst.ImportStar):
            if module.split(".", 1)[0] in TORCH_ROOTS:
                self.result.star_imports.append(node)
                self._mark_interesting()
            return False
        for alias in node.names:
            local = _alias_local(alias)
            if local:
                self._record_import(local, f"{module}.{_dotted(alias.name)}", node, module_level, module)
        return False

    def _bind_local_import(self, local: str) -> None:
        if len(self._scopes) > 1:
            self._bind(local)

    def _record_import(self, local, qualified, node, module_level, module) -> None:
        root = module.split(".", 1)[0]
        if root in ECOSYSTEM_ROOTS:
            self.result.ecosystem_imports.append((node, module))
        if not module_level and not is_torch_name(qualified):
            self._bind(local)  # a local import of something else shadows like any binding
        optional = self._in_optional_import_block()
        self.result.imports[local] = ImportBinding(local, qualified, node, module_level, module, optional)
        if module_level:
            self._module_imports[local] = self.result.imports[local]
        if is_torch_name(qualified):
            self._mark_interesting()

    def _in_optional_import_block(self) -> bool:
        """In the body of ``try: ... except ImportError: <a fallback without torch>``."""
        stack = self.statements
        for index, statement in enumerate(stack[:-1]):
            if isinstance(statement, cst.Try) and catches_import_error(statement):
                inner = stack[index + 1]
                if any(s is inner for s in statement.body.body) and not _handlers_import_torch(statement):
                    return True
        return False

    # -- references ---------------------------------------------------------
    def visit_Attribute(self, node: cst.Attribute) -> bool:
        self._skip.add(id(node.attr))
        if node.attr.value in self._attribute_names:
            self._mark_interesting()
        parts = chain_parts(node)
        if parts is None:
            return True
        self._candidate(node, parts)
        return False

    def visit_Name(self, node: cst.Name) -> None:
        if id(node) in self._skip:
            return
        self._candidate(node, [node.value])

    def _candidate(self, node: cst.CSTNode, parts: list[str]) -> None:
        if parts[0] in self._alias_sites and parts[0] not in self.result.imports:
            self._alias_reads[parts[0]] += 1
            if id(node) in self._contexts:  # resolved with the module scope (_settle_aliases)
                self._scopes[-1].candidates.append((node, self._alias_sites[parts[0]].binding, None))
                self._mark_interesting()
            return
        if parts[0] in self._rebound:
            return
        binding = self.result.imports.get(parts[0])
        if binding is None:
            if parts[0] in self._imported_below and any(scope.kind == "function" for scope in self._scopes):
                self._scopes[-1].late.append((node, parts, tuple(self.statements)))
            return
        qualified = ".".join([binding.qualified, *parts[1:]])
        if not is_torch_name(binding.qualified) and qualified not in self.result.rule_names:
            return
        self._scopes[-1].candidates.append((node, binding, qualified))
        self._mark_interesting()

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None:
            self._skip.add(id(node.keyword))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in self._method_names:
            self._mark_interesting()

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            self._note_context(item.item)

    def visit_Decorator(self, node: cst.Decorator) -> None:
        self._note_context(node.decorator)

    def _note_context(self, expr: cst.BaseExpression) -> None:
        """``with NAME(...):`` / ``@NAME``: where an alias of a torch context resolves."""
        reference = expr.func if isinstance(expr, cst.Call) else expr
        if isinstance(reference, cst.Name) and reference.value in self._alias_sites:
            self._contexts.add(id(reference))


def _guarded_import(node: cst.Assign) -> tuple[cst.Name, str, str] | None:
    """``X, ok = optional_import("mod", name="Y")`` (MONAI's import that tolerates a missing
    package, used across MONAI-based code): X is ``mod.Y`` (``mod`` without ``name``), as if
    imported; returns (X's Name node, the qualified name, the module)."""
    if len(node.targets) != 1 or not isinstance(node.value, cst.Call):
        return None
    target, call = node.targets[0].target, node.value
    if not isinstance(target, cst.Tuple) or len(target.elements) != 2 or not isinstance(target.elements[0].value,
                                                                                          cst.Name):
        return None
    parts = chain_parts(call.func)
    if not parts or parts[-1] != "optional_import":
        return None
    module, name = None, ""
    for index, arg in enumerate(call.args):
        if arg.keyword is None and index == 0:
            module = arg.value.evaluated_value if isinstance(arg.value, cst.SimpleString) else None
        elif (arg.keyword is None and index == 3) or (arg.keyword is not None and arg.keyword.value == "name"):
            name = arg.value.evaluated_value if isinstance(arg.value, cst.SimpleString) else None
    if not isinstance(module, str) or not module or not isinstance(name, str):
        return None
    return target.elements[0].value, f"{module}.{name}" if name else module, module


def _alias_sites(body, imported: frozenset[str]) -> dict[str, _AliasSite]:
    """The module-level lines ``NAME = a.b.c`` (also in the body of a module-level ``try``),
    ``a`` a name the module's imports bind, whose NAME no other module-level statement
    binds but the ``except`` branches of that ``try`` (a stand-in for an older torch)."""
    sites: list[_AliasSite] = []
    for statement in body:
        lines = [(line, statement) for line in statement.body.body] if isinstance(statement, cst.Try) else [
            (statement, None)]
        sites.extend(filter(None, (_alias_site(line, guard, imported) for line, guard in lines)))
    if not sites:
        return {}
    bound = _bindings(body)
    found = {}
    for site in sites:
        name = site.binding.local
        stand_ins = _bindings([s for h in site.guard.handlers for s in h.body.body]) if site.guard \
            else Counter()
        if bound[name] == 1 + stand_ins[name]:
            found[name] = site
    return found


def _alias_site(line, guard, imported: frozenset[str]) -> _AliasSite | None:
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    assign = line.body[0]
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or not isinstance(assign.targets[0].target,
                                                                                            cst.Name):
        return None
    parts = chain_parts(assign.value)
    return _AliasSite(line, assign, parts, guard) if parts and parts[0] in imported else None


class _CountedBindings(LocalBindings):
    """How many times the statements visited bind each name (their imports too)."""

    def __init__(self):
        super().__init__()
        self.count: Counter = Counter()

    def bind(self, name: str, definition) -> None:
        self.count[name] += 1

    def visit_Import(self, node: cst.Import) -> bool:
        self.count.update(filter(None, (_alias_local(alias) for alias in node.names)))
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if not isinstance(node.names, cst.ImportStar):
            self.count.update(filter(None, (_alias_local(alias) for alias in node.names)))
        return False


def _bindings(nodes) -> Counter:
    """How many times ``nodes`` bind each name at their own level (in if/try/with/for/while
    blocks too; not in the functions and classes they define: bindings.LocalBindings)."""
    counted = _CountedBindings()
    for node in nodes:
        node.visit(counted)
    return counted.count


def _only_alias_and_stand_in(guard: cst.Try | None, line: cst.SimpleStatementLine, name: str) -> bool:
    """``try: NAME = a.b.c`` whose ``except`` branches only define NAME's stand-in: the
    whole ``try`` is there for the alias."""
    if guard is None or guard.orelse is not None or guard.finalbody is not None or list(guard.body.body) != [line]:
        return False
    for handler in guard.handlers:
        for statement in handler.body.body:
            if isinstance(statement, (cst.ClassDef, cst.FunctionDef)) and statement.name.value == name:
                continue
            if isinstance(statement, cst.SimpleStatementLine) and all(
                    isinstance(small, cst.Pass) or (isinstance(small, cst.Assign) and _bindings([small]) == {name: 1})
                    for small in statement.body):
                continue
            return False
    return True


def _module_level_import_names(body) -> frozenset[str]:
    """The local names the module's own imports bind (not those in functions or classes)."""
    names: set[str] = set()
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                    names.update(filter(None, (_alias_local(alias) for alias in small.names)))
        elif isinstance(statement, (cst.If, cst.Try, cst.With)):
            for block in _blocks_of(statement):
                names.update(_module_level_import_names(block))
    return frozenset(names)


def _blocks_of(statement) -> list:
    """The statement lists of a module-level if/try/with (its branches and handlers)."""
    blocks = [statement.body.body]
    orelse = getattr(statement, "orelse", None)
    while isinstance(orelse, cst.If):  # elif
        blocks.append(orelse.body.body)
        orelse = orelse.orelse
    if orelse is not None:
        blocks.append(orelse.body.body)
    blocks.extend(handler.body.body for handler in getattr(statement, "handlers", ()))
    if getattr(statement, "finalbody", None) is not None:
        blocks.append(statement.finalbody.body.body)
    return [block for block in blocks if isinstance(block, (list, tuple))]


def _plain_import(qualified: str) -> cst.Import:
    """``import a.b`` (a statement that binds nothing in this file's tree)."""
    return cst.Import(names=[cst.ImportAlias(name=cst.parse_expression(qualified))])


def _handlers_import_torch(statement: cst.Try) -> bool:
    """Whether a handler falls back on torch. The imports an earlier conversion
    placed under a marker (for the marked statement below them) are no fallback:
    converting the output again must see the block as the first run did."""
    for handler in statement.handlers:
        under_marker = False
        for line in handler.body.body:
            smalls = line.body if isinstance(line, cst.SimpleStatementLine) else ()
            imports = [s for s in smalls if isinstance(s, (cst.Import, cst.ImportFrom))]
            under_marker = bool(imports) and (under_marker or is_marked(line))
            if under_marker:
                continue
            for small in imports:
                if isinstance(small, cst.Import) and any(is_torch_name(_dotted(a.name)) for a in small.names):
                    return True
                if isinstance(small, cst.ImportFrom) and small.module is not None and is_torch_name(_dotted(small.module)):
                    return True
    return False


def catches_import_error(statement: cst.Try) -> bool:
    for handler in statement.handlers:
        if handler.type is None:
            return True
        names = handler.type.elements if isinstance(handler.type, cst.Tuple) else [cst.Element(handler.type)]
        if any(_dotted(e.value) in ("ImportError", "ModuleNotFoundError", "Exception") for e in names):
            return True
    return False


def _dotted(node: cst.BaseExpression) -> str:
    parts = chain_parts(node)
    return ".".join(parts) if parts else ""


def _alias_local(alias: cst.ImportAlias) -> str | None:
    if alias.asname is not None:
        return alias.asname.name.value if isinstance(alias.asname.name, cst.Name) else None
    return _dotted(alias.name).split(".", 1)[0]


def _model_library_class(qualified: str, node: cst.ClassDef) -> bool:
    """A subclass of a model library's class that defines ``forward`` (deit's
    ``DistilledVisionTransformer(timm.models.vision_transformer.VisionTransformer)``):
    a Module as well, whose construct must be its forward (timm's own construct
    would run otherwise). torch's own classes are judged by their rules; the
    standard library's are never Modules."""
    root = qualified.split(".", 1)[0]
    if root == "torch" or root in sys.stdlib_module_names:
        return False
    return any(isinstance(statement, cst.FunctionDef) and statement.name.value == "forward"
               for statement in node.body.body)


def analyse(module: cst.Module, method_names: frozenset[str], module_base, attribute_names=frozenset(),
            siblings=None, rule_names=frozenset()) -> Analysis:
    """attribute_names: attributes whose reads may need rewriting (``x.real``);
    ``siblings``: the project index's SiblingFacts for this file; ``rule_names``:
    names outside torch that rules convert (user rules for a project's layers)."""
    analyzer = NameAnalyzer(method_names, module_base, attribute_names, siblings, rule_names)
    # libcst's visit semantics without rebuilding the tree; layout holds no names
    walk(module, analyzer, prune=LAYOUT_TYPES)
    return analyzer.result
