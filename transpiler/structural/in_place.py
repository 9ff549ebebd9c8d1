"""In-place tensor methods as assignments. MindSpore's in-place methods return
the right value but leave the tensor unchanged on CPU (or have no kernel), so
``x.add_(y)`` becomes ``x = x + y``, and for attributes and items, which may be
Parameters, ``ops.assign(target, value)``."""

from __future__ import annotations

import libcst as cst


def assign_in_place(ctx, receiver: cst.BaseExpression, value: cst.BaseExpression) -> cst.BaseSmallStatement:
    if isinstance(receiver, cst.Name):
        return cst.Assign(targets=[cst.AssignTarget(receiver)], value=value)
    return cst.Expr(cst.Call(ctx.ref("mindspore.ops.assign"), [cst.Arg(receiver), cst.Arg(value)]))
