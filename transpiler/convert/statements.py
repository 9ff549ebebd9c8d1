"""Removing statements without losing the comments around them.

A removed statement is first replaced by a ``pass`` placeholder that carries
its comments; ``compact`` then drops placeholders from a block, giving their
comment lines to the next statement (or keeping a ``pass`` when the block would
otherwise be empty or the comments have nowhere else to go).
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.comments import comments
from transpiler.convert.node_sets import NodeSet


class Placeholders:
    def __init__(self, track: NodeSet | None = None) -> None:
        self._made = NodeSet()
        # ids of statements marked for later work (formatting): a statement
        # rebuilt here to receive comments keeps its mark
        self._track = track if track is not None else NodeSet()

    def make(self, statement: cst.BaseStatement) -> cst.SimpleStatementLine:
        # every comment of the statement, the one on its line and any inside it
        inner = comments(statement.with_changes(leading_lines=()))
        lines = [*statement.leading_lines, *(cst.EmptyLine(comment=cst.Comment(text)) for text in inner)]
        node = cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=lines)
        self._made.add(node)
        return node

    def is_placeholder(self, node: cst.CSTNode) -> bool:
        return node in self._made

    def compact(self, body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        if not any(s in self._made for s in body):
            return body
        result: list[cst.BaseStatement] = []
        carried: list[cst.EmptyLine] = []
        for statement in body:
            if statement in self._made:
                carried.extend(statement.leading_lines)
                continue
            if carried:
                marked = statement in self._track
                statement = statement.with_changes(leading_lines=[*carried, *statement.leading_lines])
                if marked:
                    self._track.add(statement)
                carried = []
            result.append(statement)
        if carried and any(line.comment for line in carried) or not result:
            result.append(cst.SimpleStatementLine(body=[cst.Pass()], leading_lines=carried))
        return result
