"""Bit shifts by a constant: ``x >> 2`` -> ``x // 4``, ``x << 3`` -> ``x * 8``.

MindSpore 2.10's Tensor has no ``>>`` or ``<<`` ("unsupported operand type(s)
for >>: 'Tensor' and 'int'"); sooftware's Conformer computes its output
lengths as ``input_lengths >> 2``. A shift by k is a floor division by (or a
product with) 2**k: the same integer for Python ints and integer tensors, for
negative values too (torch's shift is arithmetic, as floor division is), and
MindSpore's Tensor has both operators. So the rewrite holds whatever the left
side is; it is made where the file does not show the left side to be a Python
number, and only for a shift by a literal (k >= 0), the case public code writes.
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.change_text import short
from transpiler.convert.structural import provenance
from transpiler.convert.structural.numbers import Numbers
from transpiler.convert.walk import LAYOUT_TYPES, StatementVisitor, walk

_SHIFTS = {cst.RightShift: (cst.FloorDivide, "//"), cst.LeftShift: (cst.Multiply, "*")}
_AUGMENTED = {cst.RightShiftAssign: (cst.FloorDivideAssign, "//="), cst.LeftShiftAssign: (cst.MultiplyAssign, "*=")}
_LARGEST = 62  # 2**62 still fits an int64


def _amount(expr: cst.BaseExpression) -> int | None:
    if isinstance(expr, cst.Integer) and not expr.lpar:
        value = int(expr.value, 0)
        return value if value <= _LARGEST else None
    return None


def shift(ctx, original: cst.BinaryOperation, updated: cst.BinaryOperation) -> cst.BaseExpression:
    """``input_lengths >> 2`` -> ``input_lengths // 4``."""
    return _rewrite(ctx, original, updated, "left", "right", _SHIFTS)


def augmented_shift(ctx, original: cst.AugAssign, updated: cst.AugAssign) -> cst.AugAssign:
    """``lengths >>= 1`` -> ``lengths //= 2``."""
    return _rewrite(ctx, original, updated, "target", "value", _AUGMENTED)


def _rewrite(ctx, original, updated, operand: str, amount: str, forms: dict):
    """A shift of ``operand`` (a field of the node) by the literal in field ``amount``,
    where the file does not show the operand is a Python number."""
    form, k = forms.get(type(original.operator)), _amount(getattr(original, amount))
    if form is None or k is None or Numbers(provenance.provenance_of(ctx)).is_number(getattr(original, operand)):
        return updated
    operator, text = form
    ctx.converted(original, "shift operator", f"{short(original)} -> {short(getattr(original, operand))} {text} "
                  f"{2 ** k}: MindSpore's Tensor has no shift operators (a shift by k is this, for negative values too)")
    spaced = operator(whitespace_before=original.operator.whitespace_before,
                      whitespace_after=original.operator.whitespace_after)
    return updated.with_changes(**{"operator": spaced, amount: cst.Integer(str(2 ** k))})


class _Candidates(StatementVisitor):
    """Statements shifting by a literal."""

    def __init__(self):
        super().__init__()
        self.found: set[int] = set()

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if type(node.operator) in _SHIFTS and _amount(node.right) is not None:
            self.found.update(id(s) for s in self.statements)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if type(node.operator) in _AUGMENTED and _amount(node.value) is not None:
            self.found.update(id(s) for s in self.statements)


def plan(ctx, module: cst.Module) -> None:
    """Let the traversal visit the statements this module rewrites."""
    finder = _Candidates()
    walk(module, finder, prune=LAYOUT_TYPES)
    ctx.analysis.interesting.update(finder.found)
