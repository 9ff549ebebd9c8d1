"""The names a piece of code mentions, for the passes that decide whether a name is read."""

from __future__ import annotations

import libcst as cst


def mentions(statement) -> list[str]:
    """Each mention of a name in ``statement`` (attribute and keyword names are no mentions)."""

    class _Names(cst.CSTVisitor):
        def __init__(self):
            self.names: list[str] = []

        def visit_Name(self, node) -> None:
            self.names.append(node.value)

        def visit_Attribute(self, node) -> bool:
            node.value.visit(self)
            return False

        def visit_Arg(self, node) -> bool:
            node.value.visit(self)
            return False

    names = _Names()
    statement.visit(names)
    return names.names
