"""A visitor that knows the statements enclosing the node it is at: what a
transform needs to make a statement (and the ones around it) visited by the
rewriting traversal, which skips statements with nothing to convert."""

from __future__ import annotations

from transpiler.convert.walk import StatementVisitor


class StatementStack(StatementVisitor):
    """``statements``: the statements enclosing the node the walk is at, outermost first."""


def fresh_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name2``, ``name3`` ... whichever is not taken yet (and take it)."""
    candidate, number = name, 2
    while candidate in taken:
        candidate, number = f"{name}{number}", number + 1
    taken.add(candidate)
    return candidate
