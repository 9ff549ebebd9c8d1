"""In-place tensor methods as explicit updates. MindSpore's in-place methods
return the right value but leave the tensor unchanged on CPU (or have no
kernel), so ``x.add_(y)`` becomes ``ops.assign(x, x.add(y))``: assign updates
the tensor object itself, so every alias (a Parameter met in a
``for p in model.parameters()`` loop, a tensor kept in a list) sees the change,
as in torch. Items, ``x[i].add_(y)``, become ``x[i] = ...`` (assign refuses
views), and shape-changing ones (``x.unsqueeze_(0)``) rebind the name."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.spec import Unconvertible


def assign_in_place(
    ctx, receiver: cst.BaseExpression, value: cst.BaseExpression, rebinds: bool = False
) -> cst.BaseSmallStatement:
    if isinstance(receiver, cst.Subscript) or rebinds:
        return cst.Assign(targets=[cst.AssignTarget(receiver)], value=value)
    return cst.Expr(cst.Call(ctx.ref("mindspore.ops.assign"), [cst.Arg(receiver), cst.Arg(value)]))


# torch functions whose result is always a tensor of its own, never a view of
# an argument: an in-place method applied to their result changes nothing else.
_FRESH_FACTORIES = frozenset(
    f"torch.{name}"
    for name in (
        "tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "linspace",
        "logspace", "eye", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
        "randint_like", "Tensor", "FloatTensor", "DoubleTensor", "LongTensor", "IntTensor", "BoolTensor",
    )
)


def _is_fresh(source: cst.BaseExpression, analysis) -> bool:
    if not isinstance(source, cst.Call):
        return False
    if isinstance(source.func, cst.Attribute) and source.func.attr.value == "clone":
        return True
    return analysis.qualified(source.func) in _FRESH_FACTORIES


def in_place_value(ctx, source_receiver: cst.BaseExpression, receiver: cst.BaseExpression, in_place):
    """An in-place method whose result is used (``y = x.add_(1)``,
    ``torch.ones(2).add_(1)``): torch returns the updated receiver. A freshly
    made receiver is seen by nobody else, so its new value is the result; a
    named tensor is updated with ``ops.assign``, which returns the new value.
    Items and reshaping methods can only be statements of their own."""
    if _is_fresh(source_receiver, ctx.analysis):
        return in_place.value
    if in_place.rebinds or not isinstance(receiver, (cst.Name, cst.Attribute)):
        raise Unconvertible("in-place operation inside an expression; make it a statement of its own")
    return cst.Call(ctx.ref("mindspore.ops.assign"), [cst.Arg(receiver), cst.Arg(in_place.value)])
