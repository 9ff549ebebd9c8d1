"""Hooks and argument specs shared by several rule modules."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.spec import Drop, Unconvertible, Unsupported
from transpiler.engine import code_of, literal_value

# Arguments torch accepts on factories and layers that do not affect values.
DEVICE = Drop("device placement is global in MindSpore")
LAYOUT = Drop("MindSpore tensors are dense")
PIN_MEMORY = Drop("no pinned memory in MindSpore")
INPLACE = Drop("the result is the same; MindSpore layers never work in place")
OUT = Unsupported("out= is not supported; assign the result instead")
REQUIRES_GRAD = Unsupported(
    "tensors have no requires_grad in MindSpore; wrap in mindspore.Parameter or take gradients with value_and_grad"
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
    if isinstance(expr, (cst.Name, cst.Attribute, cst.BinaryOperation)):
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
