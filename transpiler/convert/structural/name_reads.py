"""The names a piece of code mentions, for the passes that decide whether a name is read."""

from __future__ import annotations

from transpiler.convert.walk import LAYOUT_TYPES, Visitor, walk


class _Names(Visitor):
    def __init__(self):
        super().__init__()
        self.names: list[str] = []

    def visit_Name(self, node) -> None:
        self.names.append(node.value)

    def visit_Attribute(self, node) -> bool:
        walk(node.value, self, prune=LAYOUT_TYPES)
        return False

    def visit_Arg(self, node) -> bool:
        walk(node.value, self, prune=LAYOUT_TYPES)
        return False


def mentions(statement) -> list[str]:
    """Each mention of a name in ``statement`` (attribute and keyword names are no mentions)."""
    names = _Names()
    walk(statement, names, prune=LAYOUT_TYPES)
    return names.names
