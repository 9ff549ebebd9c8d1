"""Shared pieces of the torch.nn / torch.nn.functional rule modules: argument
specs that recur in many layers, value hooks, and execution-case shorthands.

(No RULES here: the registry imports this module and finds none.)
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P, call_cases
from rewrite_rules.helpers import DEVICE, INPLACE
from rewrite_rules.api import Example, Unconvertible, Unsupported

__all__ = ["P", "DEVICE", "INPLACE", "DTYPE", "LOSS_LEGACY", "KAIMING_RESET", "norm_reset", "reset_example",
           "layer_cases", "fn_cases", "need_dim", "bool_literal"]
# (P, DEVICE and INPLACE are re-exported so rule modules import their shared pieces from one place.)

DTYPE = Unsupported("dtype= on a layer is not supported; cast the input or the parameters instead")

# torch's deprecated loss arguments, superseded by reduction=.
LOSS_LEGACY = {
    "size_average": Unsupported("size_average is deprecated in torch; pass reduction= instead"),
    "reduce": Unsupported("reduce is deprecated in torch; pass reduction= instead"),
}


_INIT = "mindspore.common.initializer"

# torch's reset_parameters() of Linear and the convolutions, which MindSpore's Dense and Conv Cells also
# draw when built: the weight kaiming-uniform with a = sqrt(5), the bias uniform in +-1/sqrt(fan_in)
# (fan_in: the elements of one output's weight slice, for transposed convolutions too)
KAIMING_RESET = (
    f"self.weight.set_data({_INIT}.initializer({_INIT}.HeUniform(negative_slope=5 ** 0.5), self.weight.shape, "
    "self.weight.dtype))",
    "fan_in = self.weight[0].size",
    f"if self.bias is not None and fan_in:\n    self.bias.set_data({_INIT}.initializer({_INIT}.Uniform(fan_in ** -0.5), "
    "self.bias.shape, self.bias.dtype))",
)


def norm_reset(prefix: str = "", running_statistics: bool = False) -> tuple[str, ...]:
    """torch's reset_parameters() of a norm layer: scale ones, shift zeros (MindSpore keeps them,
    as constants, without affine too) and, with running statistics, mean zeros and variance ones."""
    values = {"gamma": "ones", "beta": "zeros"}
    if running_statistics:
        values = {"moving_mean": "zeros", "moving_variance": "ones", **values}
    return tuple(f"self.{prefix}{name}.set_data(mindspore.ops.{fill}_like(self.{prefix}{name}))"
                 for name, fill in values.items())


def reset_example(ctor: str, args: str, x: str, before: str = "", after: str = "") -> Example:
    """A subclass calling ``super().reset_parameters()`` (timm's ScaledStdConv2d):
    the layer's parameters are drawn again as torch draws them (the harness
    replays torch's draws, so a wrong bound or fan gives another output).
    ``before``/``after``: statements around the reset (change the values it restores)."""
    return Example(
        f"class Reset(nn.{ctor}):\n    def reset_parameters(self):\n        super().reset_parameters()\n\n\n"
        f"layer = Reset({args})\n{before}layer.reset_parameters()\n{after}result = layer(x)",
        inputs={"x": x}, atol=1e-5, notes="reset_parameters",
    )


def layer_cases(ctor: str, params, inputs, *, call: str = "layer(x)", setup: str = "", **kw):
    """Cases constructing ``nn.<ctor>(...)`` and calling it: ``result = layer(x)``.
    ``setup`` runs between construction and call (e.g. ``layer.eval()``)."""
    template = f"layer = nn.{ctor}({{args}})\n{setup}result = {call}"
    return call_cases(template, list(params), inputs, **kw)


def fn_cases(fn: str, params, inputs, **kw):
    """Cases calling ``F.<fn>(...)``."""
    return call_cases(f"result = F.{fn}({{args}})", list(params), inputs, **kw)


def need_dim(name: str = "dim"):
    """torch's implicit softmax dim is a legacy rule; MindSpore uses -1."""

    def hook(call, ctx):
        value = call.get(name)
        if value is None or (isinstance(value, cst.Name) and value.value == "None"):
            raise Unconvertible(
                "dim not given: torch picks a legacy implicit dim, MindSpore uses -1; pass dim explicitly"
            )

    return hook


def bool_literal(call, name: str):
    """(known, value) of a bool argument (torch default when absent)."""
    try:
        return True, call.literal(name)
    except (ValueError, SyntaxError):
        return False, None
