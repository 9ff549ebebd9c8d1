"""Removing statements without losing the comments around them.

A removed statement is first replaced by a ``pass`` placeholder that carries
its comments; ``compact`` then drops placeholders from a block, giving their
comment lines to the next statement (or keeping a ``pass`` when the block would
otherwise be empty or the comments have nowhere else to go).
"""

from __future__ import annotations

import libcst as cst


class Placeholders:
    def __init__(self, track: set[int] | None = None) -> None:
        self._ids: set[int] = set()
        # ids of statements marked for later work (formatting): a statement
        # rebuilt here to receive comments keeps its mark
        self._track = track if track is not None else set()

    def make(self, statement: cst.BaseStatement) -> cst.SimpleStatementLine:
        lines = list(statement.leading_lines)
        trailing = getattr(statement, "trailing_whitespace", None)
        if trailing is not None and trailing.comment is not None:
            lines.append(cst.EmptyLine(comment=trailing.comment))
        node = cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=lines)
        self._ids.add(id(node))
        return node

    def is_placeholder(self, node: cst.CSTNode) -> bool:
        return id(node) in self._ids

    def compact(self, body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        if not any(id(s) in self._ids for s in body):
            return body
        result: list[cst.BaseStatement] = []
        carried: list[cst.EmptyLine] = []
        for statement in body:
            if id(statement) in self._ids:
                carried.extend(statement.leading_lines)
                continue
            if carried:
                marked = id(statement) in self._track
                statement = statement.with_changes(leading_lines=[*carried, *statement.leading_lines])
                if marked:
                    self._track.add(id(statement))
                carried = []
            result.append(statement)
        if carried and any(line.comment for line in carried) or not result:
            result.append(cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=carried))
        return result
