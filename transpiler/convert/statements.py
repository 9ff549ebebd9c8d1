"""Removing statements without losing the comments around them.

A removed statement is first replaced by a ``pass`` placeholder that carries
its comments; ``compact`` then drops placeholders from a block, giving their
comment lines to the next statement (or keeping a ``pass`` when the block would
otherwise be empty or the comments have nowhere else to go).

``compact`` also drops a converted seeding call identical to the converted
statement just before it: ``torch.manual_seed(s)`` then
``torch.cuda.manual_seed_all(s)`` both become ``mindspore.set_seed(s)``, which
seeds every device at once; the repeat's comments are kept as a removed
statement's are.
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
        body = self._drop_repeated_seeding(body)
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

    def _drop_repeated_seeding(self, body: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
        # only converted statements (marked for formatting) are candidates, never the user's own
        if sum(1 for s in body if s in self._track) < 2:
            return body
        result: list[cst.BaseStatement] = []
        previous: cst.BaseExpression | None = None  # the seeding call of the statement before
        for statement in body:
            if statement in self._made:
                result.append(statement)
                continue
            call = _seeding_call(statement) if statement in self._track else None
            if call is not None and previous is not None and call.deep_equals(previous):
                result.append(self.make(statement))  # its comments go to the next statement
                continue
            previous = call
            result.append(statement)
        return result


def _seeding_call(statement: cst.BaseStatement) -> cst.Call | None:
    """The call of a statement that is only ``<module>.set_seed(...)``."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    expr = statement.body[0]
    if not isinstance(expr, cst.Expr) or not isinstance(expr.value, cst.Call):
        return None
    func = expr.value.func
    if isinstance(func, cst.Attribute) and func.attr.value == "set_seed" and isinstance(func.value, cst.Name):
        return expr.value
    return None
