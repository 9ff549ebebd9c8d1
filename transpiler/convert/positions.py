"""Line and column of the few nodes a diagnostic points at.

libcst's PositionProvider records a range for every node of the file, through
a metadata wrapper that walks the whole tree once more: together about as
costly as the parse itself. Diagnostics need the start of a handful of nodes,
so this generates the code of the original tree once with a codegen state
that looks at those nodes only and counts lines lazily (only when one of them
starts). The numbers are the ones PositionProvider gives: the syntactic start
(after leading blank and comment lines) for statements, the first token
(including parentheses) for expressions; line 1-based, column 0-based.

Most statements of a model file hold nothing to convert: the rewrite passes
them by and rendering writes them as they were, so it knows how many lines
each takes. The tree whose code is generated here has those statements
abridged to as many lines of nothing (``known_lines``): the nodes after them
start on the same lines as in the file.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

import libcst as cst

from transpiler.convert.codegen import NO_POSITIONS, QuietCodegenState
from transpiler.convert.walk import HOLDS_STATEMENTS, LAYOUT_TYPES, Transformer, rewrite

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


def start_positions(module: cst.Module, nodes: Iterable[cst.CSTNode],
                    known_lines: dict[int, int] | None = None) -> dict[int, tuple[int, int]]:
    """id(node) -> (line, column) for those of ``nodes`` that are in ``module``
    (and, with ``known_lines``, outside the statements it abridges).
    ``known_lines``: id(statement) -> the number of lines its code takes."""
    nodes = list(nodes)
    targets = {id(node) for node in nodes}
    if not targets:
        return {}
    # a block starts where its first statement does, which must not be abridged
    if not known_lines or any(type(node) is cst.IndentedBlock or type(node) is cst.Module for node in nodes):
        return _generated(module, targets)
    abridger = _Abridger(known_lines)
    abridged = rewrite(module, abridger)
    copies = {id(copy): key for copy, key in abridger.copies if key in targets}  # compound statements visited
    found = _generated(abridged, targets | copies.keys())
    return {copies.get(key, key): position for key, position in found.items()}


def _generated(module: cst.Module, targets: set[int]) -> dict[int, tuple[int, int]]:
    state = _TargetedPositions(module, set(targets))
    module._codegen(state)
    found = state.result()
    return {key: found[key] for key in targets if key in found}


class _Abridger(Transformer):
    """The tree with each statement of ``known_lines`` replaced by as many
    lines (blank, then ``pass``); only statements and blocks are visited, so
    everything else keeps its identity."""

    prune = LAYOUT_TYPES

    def __init__(self, known_lines: dict[int, int]):
        super().__init__()
        self.known_lines = known_lines
        self.copies: list[tuple[cst.CSTNode, int]] = []  # (visited node's copy, id of the original)

    def on_visit(self, node: cst.CSTNode) -> bool:
        return HOLDS_STATEMENTS[type(node)] and id(node) not in self.known_lines

    def on_leave(self, original_node, updated_node):
        lines = self.known_lines.get(id(original_node))
        if lines is not None:
            return _blank(lines)
        if updated_node is not original_node:
            self.copies.append((updated_node, id(original_node)))
        return updated_node


@lru_cache(maxsize=256)
def _blank(lines: int) -> cst.SimpleStatementLine:
    """A statement whose code takes ``lines`` lines (the last one ``pass``)."""
    return cst.SimpleStatementLine([cst.Pass()], leading_lines=[cst.EmptyLine(indent=False)] * (lines - 1))


def count_lines(code: str) -> int:
    """The line breaks in ``code``, as the positions count them (``_NEWLINE``)."""
    return len(_NEWLINE.findall(code))
