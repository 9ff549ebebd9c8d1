"""One walk over a parsed file that indexes what the finding checkers and the
checklist extractors look at (calls, subscripts, branches, classes, assignments),
each with its position and enclosing function, class and branches.

Names resolve through the converter's own metadata pass (``names.analyse``), so
analysis sees exactly the torch names conversion sees. Ecosystem names
(``torchvision.transforms.Resize``) resolve through the same import table.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from transpiler.convert.names import ECOSYSTEM_ROOTS, Analysis, chain_parts


@dataclass(frozen=True)
class Site:
    """A node and where it sits."""

    node: cst.CSTNode
    line: int
    col: int
    function: cst.FunctionDef | None  # innermost enclosing function
    cls: cst.ClassDef | None  # innermost enclosing class
    branches: tuple[cst.CSTNode, ...]  # enclosing If/While statements (outermost first)


@dataclass
class FileFacts:
    path: str
    module: cst.Module
    analysis: Analysis
    calls: list[Site] = field(default_factory=list)
    subscripts: list[Site] = field(default_factory=list)
    branches: list[Site] = field(default_factory=list)  # If / While / IfExp
    classes: list[Site] = field(default_factory=list)
    functions: list[Site] = field(default_factory=list)
    assigns: list[Site] = field(default_factory=list)  # Assign / AnnAssign
    loops: list[Site] = field(default_factory=list)  # For statements
    imports: list[Site] = field(default_factory=list)  # Import / ImportFrom statements
    references: list[Site] = field(default_factory=list)  # resolved torch / ecosystem names (incl. callees)
    qualified_of: dict[int, str] = field(default_factory=dict)  # id(reference node) -> qualified name
    positions: dict[int, tuple[int, int]] = field(default_factory=dict)

    # -- names ----------------------------------------------------------------
    def qualified(self, node: cst.CSTNode) -> str | None:
        """The qualified name of a reference: torch names as the converter
        resolves them, other imported names through the import table."""
        name = self.analysis.qualified(node)
        if name is not None:
            return name
        parts = chain_parts(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        if not parts:
            return None
        binding = self.analysis.imports.get(parts[0])
        if binding is None or binding.qualified.split(".", 1)[0] == "torch":
            return None  # a torch name the converter did not resolve is shadowed
        return ".".join([binding.qualified, *parts[1:]])

    def callee(self, call: cst.Call) -> str | None:
        return self.qualified(call.func)

    def code(self, node: cst.CSTNode) -> str:
        return " ".join(self.module.code_for_node(node).split())

    def position(self, node: cst.CSTNode) -> tuple[int, int]:
        return self.positions.get(id(node), (0, 0))


def method_name(call: cst.Call) -> str | None:
    """``x.foo(...)`` -> "foo" when the callee is an attribute."""
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


def keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    return None


def positional(call: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in call.args if a.keyword is None and not a.star]


def argument(call: cst.Call, index: int, name: str) -> cst.BaseExpression | None:
    """An argument given by position ``index`` or by keyword ``name``."""
    value = keyword(call, name)
    if value is not None:
        return value
    values = positional(call)
    return values[index] if index < len(values) else None


class _Indexer(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, facts: FileFacts):
        super().__init__()
        self.facts = facts
        self.functions: list[cst.FunctionDef] = []
        self.classes: list[cst.ClassDef] = []
        self.open_branches: list[cst.CSTNode] = []

    def _site(self, node: cst.CSTNode) -> Site:
        start = self.get_metadata(PositionProvider, node).start
        self.facts.positions[id(node)] = (start.line, start.column + 1)
        return Site(
            node,
            start.line,
            start.column + 1,
            self.functions[-1] if self.functions else None,
            self.classes[-1] if self.classes else None,
            tuple(self.open_branches),
        )

    def visit_Call(self, node: cst.Call) -> None:
        self.facts.calls.append(self._site(node))

    def visit_Import(self, node: cst.Import) -> bool:
        self.facts.imports.append(self._site(node))
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        self.facts.imports.append(self._site(node))
        return False

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return self._reference(node)

    def visit_Name(self, node: cst.Name) -> None:
        self._reference(node)

    def _reference(self, node) -> bool:
        qualified = self.facts.qualified(node)
        if qualified is None or not _is_library_name(qualified):
            return True
        self.facts.references.append(self._site(node))
        self.facts.qualified_of[id(node)] = qualified
        return False  # the rest of the chain is part of this reference

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self.facts.subscripts.append(self._site(node))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.facts.classes.append(self._site(node))
        self.classes.append(node)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.facts.functions.append(self._site(node))
        self.functions.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.functions.pop()

    def visit_For(self, node: cst.For) -> None:
        self.facts.loops.append(self._site(node))

    def visit_Assign(self, node: cst.Assign) -> None:
        self.facts.assigns.append(self._site(node))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.facts.assigns.append(self._site(node))

    # A branch encloses its body and else part, not its own test.
    def _record_branch(self, node) -> None:
        self.facts.branches.append(self._site(node))

    def _open_branch(self, node) -> None:
        self.open_branches.append(node)

    def _close_branch(self, node) -> None:
        self.open_branches.pop()

    visit_If = visit_While = visit_IfExp = _record_branch
    visit_If_body = visit_If_orelse = visit_While_body = _open_branch
    leave_If_body = leave_If_orelse = leave_While_body = _close_branch
    visit_IfExp_body = visit_IfExp_orelse = _open_branch
    leave_IfExp_body = leave_IfExp_orelse = _close_branch


def _is_library_name(qualified: str) -> bool:
    root = qualified.split(".", 1)[0]
    return root == "torch" or root in ECOSYSTEM_ROOTS


def index_file(path: str, module: cst.Module, analysis: Analysis) -> FileFacts:
    facts = FileFacts(path, module, analysis)
    MetadataWrapper(module, unsafe_skip_copy=True).visit(_Indexer(facts))
    return facts
