"""``.item()`` compared in the test of a compiled function: the tensor compared.

Glow's ActNorm (rosinality/glow-pytorch) initializes itself on its first batch::

    if self.initialized.item() == 0:
        self.initialize(input)
        self.initialized.fill_(1)

with ``initialized`` a uint8 buffer. Graph mode turns ``.item()`` into its
TensorToScalar kernel, which MindSpore's CPU backend has for no uint8 tensor
("Select CPU operator[TensorToScalar] fail! Unsupported data type!", measured on
MindSpore 2.10), and refuses the whole network. Compared as a tensor
(``if self.initialized == 0:``) the test compiles to graph control flow, and the
branch runs once, as in torch (measured: the buffer set by the branch keeps the
second call out of it). Where the comparison is only tested for truth (the test
of an ``if``, ``while`` or conditional expression, under ``not``/``and``/``or``),
a one-element tensor compared with a number is true exactly when its item is, so
the test means the same in PyNative. Only ``==``, ``!=``, ``<``, ``<=``, ``>``,
``>=`` (``in`` on a tensor is not membership of its item), and only in the
functions graph mode compiles: elsewhere ``.item()`` stays as the author wrote it.
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.structural.compiled_functions import InCompiledFunctions
from transpiler.convert.walk import LAYOUT_TYPES, rewrite

_ORDER = (cst.Equal, cst.NotEqual, cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)


def without_item_tests(module: cst.Module, compiled: set[str], to_format) -> cst.Module:
    return rewrite(module, _ItemTests(compiled, to_format))


def _item_receiver(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``x`` for ``x.item()``; None otherwise."""
    if isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Attribute) \
            and expr.func.attr.value == "item":
        return expr.func.value
    return None


class _ItemTests(InCompiledFunctions):
    prune = LAYOUT_TYPES

    def __init__(self, compiled: set[str], to_format):
        super().__init__(compiled, to_format)
        self.tested: set[int] = set()  # comparisons whose value is only tested for truth

    def _test(self, expr: cst.BaseExpression | None) -> None:
        if not self.depth:
            return
        while isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            expr = expr.expression
        if isinstance(expr, cst.BooleanOperation):
            self._test(expr.left)
            self._test(expr.right)
        elif isinstance(expr, cst.Comparison):
            self.tested.add(id(expr))

    def visit_If(self, node: cst.If) -> None:
        self._test(node.test)

    def visit_While(self, node: cst.While) -> None:
        self._test(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._test(node.test)

    def leave_Comparison(self, original_node, updated_node):
        if id(original_node) not in self.tested or len(updated_node.comparisons) != 1 \
                or not isinstance(updated_node.comparisons[0].operator, _ORDER):
            return updated_node
        target = updated_node.comparisons[0]
        left, right = _item_receiver(updated_node.left), _item_receiver(target.comparator)
        if left is None and right is None:
            return updated_node
        return updated_node.with_changes(
            left=updated_node.left if left is None else left,
            comparisons=[target if right is None else target.with_changes(comparator=right)])
