"""``x in {2, 3}``: ``x in (2, 3)``.

x-transformers checks ``assert condition.ndim in {2, 3}``. Graph mode compiles
no set display ("Unsupported expression 'Set'", measured on MindSpore 2.10 CPU)
and refuses the whole ``construct``; a tuple compiles. For a set of literal
numbers and strings, membership in either is the same test.
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.formatting import KeepsFormatting
from transpiler.convert.walk import LAYOUT_TYPES, rewrite


def without_set_membership(module: cst.Module, to_format) -> cst.Module:
    return rewrite(module, _SetMembership(to_format))


def _literal(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    return isinstance(expr, (cst.Integer, cst.Float, cst.SimpleString)) or (
        isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"))


class _SetMembership(KeepsFormatting):
    prune = LAYOUT_TYPES

    def leave_ComparisonTarget(self, original_node, updated_node):
        values = updated_node.comparator
        if not (isinstance(updated_node.operator, (cst.In, cst.NotIn)) and isinstance(values, cst.Set)
                and all(isinstance(e, cst.Element) and _literal(e.value) for e in values.elements)):
            return updated_node
        elements = list(values.elements)
        if len(elements) == 1:  # (2,)
            elements[0] = elements[0].with_changes(comma=cst.Comma())
        return updated_node.with_changes(comparator=cst.Tuple(elements, lpar=[cst.LeftParen()], rpar=[cst.RightParen()]))
