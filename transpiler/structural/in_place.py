"""In-place tensor methods as explicit updates. MindSpore's in-place methods
return the right value but leave the tensor unchanged on CPU (or have no
kernel), so ``x.add_(y)`` becomes ``ops.assign(x, x.add(y))``: assign updates
the tensor object itself, so every alias (a Parameter met in a
``for p in model.parameters()`` loop, a tensor kept in a list) sees the change,
as in torch. Items, ``x[i].add_(y)``, become ``x[i] = ...`` (assign refuses
views), and shape-changing ones (``x.unsqueeze_(0)``) rebind the name."""

from __future__ import annotations

import libcst as cst


def assign_in_place(
    ctx, receiver: cst.BaseExpression, value: cst.BaseExpression, rebinds: bool = False
) -> cst.BaseSmallStatement:
    if isinstance(receiver, cst.Subscript) or rebinds:
        return cst.Assign(targets=[cst.AssignTarget(receiver)], value=value)
    return cst.Expr(cst.Call(ctx.ref("mindspore.ops.assign"), [cst.Arg(receiver), cst.Arg(value)]))
