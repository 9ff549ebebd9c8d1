"""Hooks and argument specs shared by several rule modules."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.api import Drop, Unconvertible, Unsupported, code_of, literal_value

# Arguments torch accepts on factories and layers that do not affect values.
DEVICE = Drop("device placement is global in MindSpore")
LAYOUT = Drop("MindSpore tensors are dense")
PIN_MEMORY = Drop("no pinned memory in MindSpore")
INPLACE = Drop("the result is the same; MindSpore layers never work in place")
OUT = Unsupported("out= is not supported; assign the result instead")
REQUIRES_GRAD = Unsupported(
    "tensors have no requires_grad in MindSpore; wrap in mindspore.Parameter or take gradients with value_and_grad",
    in_forward="a tensor made in construct is no Parameter: the flag would only fill its own .grad, which MindSpore "
               "has not; values and the Parameters' gradients are the same without it",
)
GENERATOR = Unsupported("torch.Generator objects have no MindSpore equivalent; seed with mindspore.set_seed")
FACTORY_ARGS = {"out": OUT, "layout": LAYOUT, "device": DEVICE, "requires_grad": REQUIRES_GRAD, "pin_memory": PIN_MEMORY}


def one_minus(expr: cst.BaseExpression, ctx) -> cst.BaseExpression:
    """BatchNorm momentum: MindSpore weights the running statistic, torch the batch."""
    try:
        value = literal_value(expr)
    except (ValueError, SyntaxError):
        return cst.parse_expression(f"1 - {code_of(cst.ensure_type(expr, cst.BaseExpression))}")
    if value is None:
        raise Unconvertible("momentum=None (cumulative moving average) has no MindSpore equivalent")
    return cst.parse_expression(repr(round(1 - float(value), 12)))


def as_tuple(expr: cst.BaseExpression, ctx) -> cst.BaseExpression:
    """LayerNorm normalized_shape: an int becomes a 1-tuple. A name is assumed
    to hold an int (the common ``nn.LayerNorm(d_model)``); a list held in a
    variable then fails loudly in MindSpore rather than computing wrongly."""
    if isinstance(expr, cst.Integer):
        return cst.parse_expression(f"({expr.value},)")
    if isinstance(expr, (cst.Tuple, cst.List)):
        return expr
    if isinstance(expr, (cst.Name, cst.Attribute, cst.BinaryOperation, cst.Subscript)):  # ConvNeXt: dims[-1]
        ctx.warn(expr, "torch.nn.LayerNorm", f"assumes {code_of(expr)} is an int; for a shape list pass a tuple and begin_norm_axis=-len(shape)")
        return cst.Tuple([cst.Element(expr)])
    raise Unconvertible("normalized_shape given as an expression whose length is unknown")


def require(name: str, why: str):
    """A hook that marks the call when argument ``name`` is not given."""

    def hook(call, ctx):
        if not call.has(name):
            raise Unconvertible(why)

    return hook


def chain(*hooks):
    def hook(call, ctx):
        for h in hooks:
            h(call, ctx)

    return hook


def literal_or_none(call, name):
    try:
        return True, call.literal(name)
    except (ValueError, SyntaxError):
        return False, None


# -- index dtypes -------------------------------------------------------------
# MindSpore's CPU kernels give int32 indices (argmin, sort, topk, cummin,
# multinomial ...) where torch gives int64. Users compare dtypes and mix
# indices with int64 tensors, so the result is cast to torch's dtype. Rules
# that cast write the MindSpore function form (``ops.sort(x)``), so that
# converting the output again finds no tensor method to wrap a second time.

INDEX_NOTE = "indices cast to int64 (MindSpore's CPU kernel gives int32, torch int64)"


def as_int64(expr: cst.BaseExpression, ctx) -> cst.BaseExpression:
    """``expr.astype(mindspore.int64)``."""
    return cst.Call(cst.Attribute(_atom(expr), cst.Name("astype")), [cst.Arg(ctx.ref("mindspore.int64"))])


def indices_as_int64(expr: cst.BaseExpression, ctx) -> cst.BaseExpression:
    """A ``(values, indices)`` pair with the indices cast to int64."""
    int64 = code_of(ctx.ref("mindspore.int64"))
    return cst.parse_expression(f"tuple(t.astype({int64}) if i else t for i, t in enumerate({code_of(expr)}))")


def _atom(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
