"""A visitor that knows the statements enclosing the node it is at: what a
transform needs to make a statement (and the ones around it) visited by the
rewriting traversal, which skips statements with nothing to convert."""

from __future__ import annotations

import libcst as cst

from transpiler.convert.walk import IS_STATEMENT, Visitor


class StatementStack(Visitor):
    def __init__(self) -> None:
        super().__init__()
        self.statements: list[cst.CSTNode] = []  # outermost first

    def on_visit(self, node: cst.CSTNode) -> bool:
        if IS_STATEMENT[type(node)]:
            self.statements.append(node)
        return super().on_visit(node)

    def on_leave(self, original_node: cst.CSTNode) -> None:
        super().on_leave(original_node)
        if IS_STATEMENT[type(original_node)]:
            self.statements.pop()


def fresh_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name2``, ``name3`` ... whichever is not taken yet (and take it)."""
    candidate, number = name, 2
    while candidate in taken:
        candidate, number = f"{name}{number}", number + 1
    taken.add(candidate)
    return candidate
