"""In-place tensor methods as explicit updates. MindSpore's in-place methods
return the right value but leave the tensor unchanged on CPU (or have no
kernel), so ``x.add_(y)`` becomes ``ops.assign(x, x.add(y))``: assign updates
the tensor object itself, so every alias (a Parameter met in a
``for p in model.parameters()`` loop, a tensor kept in a list) sees the change,
as in torch. Items, ``x[i].add_(y)``, become ``x[i] = ...`` (assign refuses
views), and shape-changing ones (``x.unsqueeze_(0)``) rebind the name.

In a Cell's forward a local tensor is rebound instead (``y = y.add(1)``):
gradients do not flow through ``ops.assign`` (measured: d/dy of
``assign(y, y * g)`` is 1, not g), and a forward computes, it does not update
aliases. Attributes (buffers such as running statistics) are still assigned.

Inside an expression (``return x.mul_(gamma)``, ``nn.Parameter(torch.zeros(n).uniform_())``)
the call becomes the updated value: ``ops.assign(x, ...)`` (which returns it)
for a name or attribute, the value alone for a temporary nobody else sees or
in a return statement, a ``:=`` rebinding in a forward."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.spec import Unconvertible


def assign_in_place(
    ctx, receiver: cst.BaseExpression, value: cst.BaseExpression, rebinds: bool = False, in_forward: bool = False
) -> cst.BaseSmallStatement:
    if isinstance(receiver, cst.Subscript) or rebinds or (in_forward and isinstance(receiver, cst.Name)):
        return cst.Assign(targets=[cst.AssignTarget(receiver)], value=value)
    return cst.Expr(_assign(ctx, receiver, value))


def in_place_value(ctx, receiver: cst.BaseExpression, value: cst.BaseExpression, rebinds: bool, *,
                   in_forward: bool, returned: bool) -> cst.BaseExpression:
    """The expression an in-place call inside an expression becomes; raises
    Unconvertible where the update cannot be kept."""
    if isinstance(receiver, cst.Subscript):
        raise Unconvertible("in-place operation on an item inside an expression; make it a statement of its own")
    if isinstance(receiver, cst.Name):
        if returned:
            return value  # nothing in this function reads the name afterwards
        if in_forward or rebinds:
            return cst.NamedExpr(receiver, value, lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return _assign(ctx, receiver, value)
    if isinstance(receiver, cst.Attribute):
        if rebinds:
            raise Unconvertible("in-place operation changing an attribute's shape inside an expression; "
                                "make it a statement of its own")
        return _assign(ctx, receiver, value)
    if _occurrences(receiver, value) > 1:
        raise Unconvertible("in-place operation on a temporary the MindSpore form would compute twice; "
                            "assign the temporary to a variable first")
    return value  # a temporary nobody else sees: its new value is all there is


def _assign(ctx, receiver, value) -> cst.Call:
    return cst.Call(ctx.ref("mindspore.ops.assign"), [cst.Arg(receiver), cst.Arg(value)])


def _occurrences(needle: cst.CSTNode, haystack: cst.CSTNode) -> int:
    count = 0

    class Counter(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            nonlocal count
            if node.deep_equals(needle):
                count += 1
                return False
            return True

    haystack.visit(Counter())
    return count
