"""The base of the graph-mode rewrites that act only inside the functions graph mode
compiles (``compiled``: their names, found by graph_subset.py), and the functions
those define."""

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
