"""A test for torch's meta device is its answer: a MindSpore tensor is never on one.

timm's EfficientViT (MIT) turns autocast off around its linear attention, where it
can::

    if not torch.jit.is_scripting() and v.device.type != 'meta':
        with torch.autocast(device_type=v.device.type, enabled=False):
            out = self._attn(q, k, v)
    else:
        out = self._attn(q, k, v)

Converted, the jit check is ``False``, the autocast goes and the device is read
through ``torch_device``: ``if not False and torch_device(v.device).type !=
'meta':``. ``mindspore.export`` compiles in JIT strict mode, which refuses the
device read ("In JIT strict mode, cannot get attributes device or the
Tensor[Float32] object has no attribute: 'device'", measured on MindSpore 2.10
CPU; the lax GRAPH_MODE takes it). MindSpore has no meta device (a tensor's
device is CPU, GPU or Ascend, and ``torch_device`` of it has no other type), so
``<...>.device.type != 'meta'`` is ``True`` and ``== 'meta'`` is ``False``. The
test around the comparison is then worked out where it is constant (``not False``
is ``True``, ``True and x`` is ``x``, ...), and an ``if`` whose test is constant
is the branch that runs: here ``out = self._attn(q, k, v)``, which is what both
branches ran. Only in the functions graph mode compiles, and only the tests that
held such a comparison.
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.structural.compiled_functions import InCompiledFunctions
from transpiler.convert.structural.device_leftovers import reads_device
from transpiler.convert.structural.same_branches import branch_statements, calls_nothing
from transpiler.convert.walk import LAYOUT_TYPES, rewrite


def without_meta_device_tests(module: cst.Module, compiled: set[str], to_format) -> cst.Module:
    return rewrite(module, _MetaTests(compiled, to_format))


def _meta_answer(node: cst.Comparison) -> bool | None:
    """True for ``<...>.device.type != 'meta'``, False for ``== 'meta'`` (either side); None
    for any other comparison."""
    if len(node.comparisons) != 1 or not isinstance(node.comparisons[0].operator, (cst.Equal, cst.NotEqual)):
        return None
    left, right = node.left, node.comparisons[0].comparator
    for device, other in ((left, right), (right, left)):
        if isinstance(other, cst.SimpleString) and other.evaluated_value == "meta" \
                and isinstance(device, cst.Attribute) and device.attr.value == "type" and reads_device(device.value):
            return isinstance(node.comparisons[0].operator, cst.NotEqual)
    return None


def _constant(expr: cst.BaseExpression) -> bool | None:
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    return None


def _name(value: bool, like: cst.BaseExpression) -> cst.Name:
    return cst.Name("True" if value else "False", lpar=like.lpar, rpar=like.rpar)


def fold(expr: cst.BaseExpression) -> cst.BaseExpression:
    """``expr`` tested for truth, with ``not``/``and``/``or`` over ``True``/``False`` worked out
    (an operand that calls something is kept where it would run)."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        operand = fold(expr.expression)
        value = _constant(operand)
        if value is not None:
            return _name(not value, expr)
        return expr.with_changes(expression=operand)
    if isinstance(expr, cst.BooleanOperation):
        left, right = fold(expr.left), fold(expr.right)
        conjunction = isinstance(expr.operator, cst.And)
        first, second = _constant(left), _constant(right)
        if first is not None:  # True and x, False or x -> x; False and x, True or x -> the constant
            if first != conjunction:
                return _name(first, expr)
            return right.with_changes(lpar=expr.lpar, rpar=expr.rpar) if expr.lpar and not right.lpar else right
        if second is not None:  # x and True -> x (for truth), x and False -> False where x calls nothing
            if second == conjunction:
                return left
            if calls_nothing(left):
                return _name(second, expr)
        return expr.with_changes(left=left, right=right)
    return expr


class _MetaTests(InCompiledFunctions):
    prune = LAYOUT_TYPES

    def __init__(self, compiled: set[str], to_format):
        super().__init__(compiled, to_format)
        self.replaced = 0  # meta comparisons made constants
        self.elifs: set[int] = set()
        self.before: dict[int, int] = {}  # If -> meta comparisons replaced before its test, and after it
        self.after: dict[int, int] = {}

    def leave_Comparison(self, original_node, updated_node):
        if not self.depth:
            return updated_node
        answer = _meta_answer(updated_node)
        if answer is None:
            return updated_node
        self.replaced += 1
        return _name(answer, updated_node)

    def visit_If(self, node: cst.If) -> None:
        if isinstance(node.orelse, cst.If):
            self.elifs.add(id(node.orelse))

    def visit_If_test(self, node: cst.If) -> None:
        self.before[id(node)] = self.replaced

    def visit_If_body(self, node: cst.If) -> None:
        self.after[id(node)] = self.replaced

    def leave_If(self, original_node, updated_node):
        before = self.before.pop(id(original_node), self.replaced)
        after = self.after.pop(id(original_node), self.replaced)
        if not self.depth or after == before:
            return updated_node
        test = fold(updated_node.test)
        value = _constant(test)
        if value is None:
            return updated_node.with_changes(test=test)
        if id(original_node) in self.elifs:  # an elif: its test stays, worked out
            return updated_node.with_changes(test=test)
        if value:
            return branch_statements(updated_node, updated_node.body)
        orelse = updated_node.orelse
        if isinstance(orelse, cst.If):  # if False: ... elif t: -> if t:
            return orelse.with_changes(leading_lines=updated_node.leading_lines)
        return branch_statements(updated_node, orelse.body if orelse is not None else None)
