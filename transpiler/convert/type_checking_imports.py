"""A new requirement only annotations name is imported for type checkers only.

MONAI imports torch's ``SummaryWriter`` under ``if TYPE_CHECKING:``, for the
annotations of functions that take a writer; the conversion names tensorboardX's
writer there (``transpiler.convert.requirements``). Written as a plain import at
the top, the converted module would need tensorboardX to import at all, where the
original imported nothing for it at run time. So where a file postpones its
annotations (``from __future__ import annotations``) and has an
``if TYPE_CHECKING:`` block of its own, the import of a new requirement that only
annotations use goes into that block, as the file's author placed the one it replaces.
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.engine import code_of
from transpiler.convert.walk import LAYOUT_TYPES, Visitor, walk


def type_checking_block(body) -> int | None:
    """The index of the module's ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``) block."""
    for index, statement in enumerate(body):
        if isinstance(statement, cst.If) and code_of(statement.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            return index
    return None


def postpones_annotations(body) -> bool:
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.ImportFrom) and small.module is not None \
                        and code_of(small.module) == "__future__" \
                        and not isinstance(small.names, cst.ImportStar) \
                        and any(code_of(alias.name) == "annotations" for alias in small.names):
                    return True
    return False


class _Uses(Visitor):
    """For each name of ``names``: whether some use of it is outside an annotation."""

    def __init__(self, names: set[str]):
        super().__init__()
        self.names = names
        self.at_run_time: set[str] = set()
        self.depth = 0

    def visit_Import(self, node) -> bool:
        return False

    def visit_ImportFrom(self, node) -> bool:
        return False

    def visit_Annotation(self, node) -> None:
        self.depth += 1

    def leave_Annotation(self, node) -> None:
        self.depth -= 1

    def visit_Name(self, node: cst.Name) -> None:
        if self.depth == 0 and node.value in self.names:
            self.at_run_time.add(node.value)  # (an attribute named like it counts too: the import stays)


def annotation_only(module: cst.Module, names: set[str]) -> set[str]:
    """Those of ``names`` only annotations use, where the module postpones its
    annotations and has a TYPE_CHECKING block to put their imports in."""
    if not names or type_checking_block(module.body) is None or not postpones_annotations(module.body):
        return set()
    uses = _Uses(names)
    walk(module, uses, prune=LAYOUT_TYPES)
    return names - uses.at_run_time


def into_type_checking(body: list, statements: list[cst.SimpleStatementLine]) -> None:
    """Puts ``statements`` first in the module's TYPE_CHECKING block (a ``pass`` the
    block held alone, where the import it replaces was, goes)."""
    index = type_checking_block(body)
    block = body[index]
    inner = [s for s in block.body.body if not _bare_pass(s)]
    body[index] = block.with_changes(body=block.body.with_changes(body=[*statements, *inner]))


def _bare_pass(statement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and [type(s) for s in statement.body] == [cst.Pass] \
        and not any(line.comment for line in statement.leading_lines) and statement.trailing_whitespace.comment is None
