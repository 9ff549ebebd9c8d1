"""Marker comments above a statement: ``# TODO(ms-migrate): api: reason``."""

from __future__ import annotations

import libcst as cst

from transpiler.convert.diagnostics import MARKER_PREFIX


def add_markers(statement, markers: list[str], already=()):
    """``statement`` with a marker line for each text of ``markers`` above it
    (texts already there, or in ``already``, are not written twice)."""
    if isinstance(statement, cst.FlattenSentinel):
        nodes = list(statement.nodes)
        if nodes:
            nodes[0] = add_markers(nodes[0], markers, already)
        return cst.FlattenSentinel(nodes)
    if not hasattr(statement, "leading_lines"):
        return statement
    existing = {line.comment.value for line in statement.leading_lines if line.comment is not None} | set(already)
    new_lines = [
        cst.EmptyLine(comment=cst.Comment(MARKER_PREFIX + _one_line(text)))
        for text in markers
        if MARKER_PREFIX + _one_line(text) not in existing
    ]
    if not new_lines:
        return statement
    return statement.with_changes(leading_lines=[*statement.leading_lines, *new_lines])


def is_marked(statement) -> bool:
    """Whether a marker line stands above ``statement``."""
    return any(line.comment is not None and line.comment.value.startswith(MARKER_PREFIX)
               for line in getattr(statement, "leading_lines", ()))


def _one_line(text: str) -> str:
    return " ".join(text.split())
