"""Marker comments above a statement: ``# TODO(ms-migrate): api: reason``."""

from __future__ import annotations

import json

import libcst as cst

from transpiler.convert.diagnostics import MARKER_PREFIX

# placeholders in the messages of the stand-ins a guarded statement's ``except ImportError:``
# binds (transpiler/convert/marked.py): the marker texts (filled in by add_markers) and the
# marker's line in the output (filled in after rendering, marked.number_stand_ins)
REASONS = "@@reasons@@"
LINE = "@@line@@"


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
    if isinstance(statement, cst.Try):
        statement = _fill_reasons(statement, markers)
    existing = {line.comment.value for line in statement.leading_lines if line.comment is not None} | set(already)
    new_lines = [
        cst.EmptyLine(comment=cst.Comment(MARKER_PREFIX + _one_line(text)))
        for text in markers
        if MARKER_PREFIX + _one_line(text) not in existing
    ]
    if not new_lines:
        return statement
    return statement.with_changes(leading_lines=[*statement.leading_lines, *new_lines])


def _fill_reasons(statement: cst.Try, markers: list[str]) -> cst.Try:
    """The guarded statement's stand-ins quote its markers."""
    if not markers or not statement.handlers or REASONS not in cst.Module([]).code_for_node(statement.handlers[0]):
        return statement
    text = json.dumps("; ".join(_one_line(m) for m in markers), ensure_ascii=False)[1:-1]
    return statement.with_changes(handlers=[statement.handlers[0].visit(_Reasons(text)), *statement.handlers[1:]])


class _Reasons(cst.CSTTransformer):
    def __init__(self, text: str):
        super().__init__()
        self.text = text

    def leave_SimpleString(self, original_node, updated_node):
        if REASONS not in updated_node.value:
            return updated_node
        return updated_node.with_changes(value=updated_node.value.replace(REASONS, self.text))


def is_marked(statement) -> bool:
    """Whether a marker line stands above ``statement``."""
    return any(line.comment is not None and line.comment.value.startswith(MARKER_PREFIX)
               for line in getattr(statement, "leading_lines", ()))


def _one_line(text: str) -> str:
    return " ".join(text.split())
