"""The base of the graph-mode rewrites that act only inside the functions graph mode
compiles (``compiled``: their names, found by graph_subset.py), and the functions
those define; and the comment the marking passes put above a line."""

from __future__ import annotations

import libcst as cst

from transpiler.convert.formatting import KeepsFormatting


class InCompiledFunctions(KeepsFormatting):
    """``self.depth > 0`` inside a compiled function (its nested functions included)."""

    def __init__(self, compiled: set[str], to_format):
        super().__init__(to_format)
        self.compiled = compiled
        self.depth = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.depth or node.name.value in self.compiled:
            self.depth += 1

    def leave_FunctionDef(self, original_node, updated_node):
        if self.depth:
            self.depth -= 1
        return updated_node


def with_comment(statement: cst.SimpleStatementLine, text: str) -> cst.SimpleStatementLine:
    """``statement`` with the comment line ``text`` right above it (once: a re-run keeps one)."""
    if any(line.comment is not None and line.comment.value == text for line in statement.leading_lines):
        return statement
    return statement.with_changes(leading_lines=[*statement.leading_lines, cst.EmptyLine(comment=cst.Comment(text))])
