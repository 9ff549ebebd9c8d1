"""Line and column of the few nodes a diagnostic points at.

libcst's PositionProvider records a range for every node of the file, through
a metadata wrapper that walks the whole tree once more: together about as
costly as the parse itself. Diagnostics need the start of a handful of nodes,
so this generates the code of the original tree once with a codegen state
that looks at those nodes only and counts lines lazily (only when one of them
starts). The numbers are the ones PositionProvider gives: the syntactic start
(after leading blank and comment lines) for statements, the first token
(including parentheses) for expressions; line 1-based, column 0-based.
"""

from __future__ import annotations

import re
from typing import Iterable

import libcst as cst

from transpiler.convert.codegen import NO_POSITIONS, QuietCodegenState

_NEWLINE = re.compile(r"\r\n?|\n")


class _TargetedPositions(QuietCodegenState):
    def __init__(self, module: cst.Module, targets: set[int]):
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.targets = targets
        self.generic: dict[int, tuple[int, int]] = {}  # first token of the node
        self.syntactic: dict[int, tuple[int, int]] = {}  # statements: after leading lines
        self.aliases: list[tuple[int, int]] = []  # (node, node whose start it takes)
        self._line = 1
        self._column = 0
        self._counted = 0  # tokens already folded into _line/_column

    def _here(self) -> tuple[int, int]:
        tokens = self.tokens
        if self._counted < len(tokens):
            text = "".join(tokens[self._counted :])
            self._counted = len(tokens)
            segments = _NEWLINE.split(text)
            if len(segments) == 1:
                self._column += len(text)
            else:
                self._line += len(segments) - 1
                self._column = len(segments[-1])
        return self._line, self._column

    def before_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self.targets and key not in self.generic:
            self.generic[key] = self._here()

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        key = id(node)
        if key in self.targets and key not in self.syntactic:
            if start_node is None:
                self.syntactic[key] = self._here()
            else:  # the start of a child (an indented block starts at its first statement)
                self.targets.add(id(start_node))
                self.aliases.append((key, id(start_node)))
        return NO_POSITIONS  # only the start is needed: no context manager around the node

    def result(self) -> dict[int, tuple[int, int]]:
        found = {**self.generic, **self.syntactic}
        for key, source in self.aliases:
            if source in found:
                found[key] = found[source]
        return found


def start_positions(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[int, tuple[int, int]]:
    """id(node) -> (line, column) for those of ``nodes`` that are in ``module``."""
    targets = {id(node) for node in nodes}
    if not targets:
        return {}
    state = _TargetedPositions(module, set(targets))
    module._codegen(state)
    found = state.result()
    return {key: found[key] for key in targets if key in found}
