"""Shared pieces of the torch.nn / torch.nn.functional rule modules: argument
specs that recur in many layers, value hooks, and execution-case shorthands.

(No RULES here: the registry imports this module and finds none.)
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P, call_cases
from rewrite_rules.helpers import DEVICE, INPLACE, chain
from rewrite_rules.api import Arg, Example, Unconvertible, Unsupported, code_of, define

__all__ = ["P", "DEVICE", "INPLACE", "DTYPE", "LOSS_LEGACY", "with_legacy_reduction", "KAIMING_RESET", "norm_reset",
           "reset_example", "layer_cases", "fn_cases", "implicit_dim", "bool_literal"]
# (P, DEVICE and INPLACE are re-exported so rule modules import their shared pieces from one place.)

DTYPE = Unsupported("dtype= on a layer is not supported; cast the input or the parameters instead")

# torch's deprecated loss arguments, superseded by reduction=: read by legacy_reduction, a loss rule's first hook.
LOSS_LEGACY = {"size_average": Arg(), "reduce": Arg()}


def legacy_reduction(call, ctx) -> None:
    """``size_average``/``reduce`` as torch reads them (``_Reduction.legacy_get_string``):
    when either is given (not None) they decide the reduction and ``reduction=``
    is ignored; None counts as True. Written as the ``reduction=`` they amount
    to; a value only known at run time marks the call."""
    legacy = {name: call.literal(name) if call.has(name) else None for name in LOSS_LEGACY}
    for name in LOSS_LEGACY:
        call.remove(name)
    if all(value is None for value in legacy.values()):
        return
    size_average, reduce = (True if value is None else bool(value) for value in legacy.values())
    call.set("reduction", repr("mean" if size_average and reduce else "sum" if reduce else "none"))


def with_legacy_reduction(hook):
    """A loss rule's hook, run after legacy_reduction."""
    return legacy_reduction if hook is None else chain(legacy_reduction, hook)


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


_IMPLICIT_DIM_FUNCTION = '''
def {name}(x):
    """torch.nn.functional.FUNCTION without dim (written by ms-migrate)."""
    # torch's legacy choice: dim 0 for inputs of 0, 1 or 3 dimensions, else dim 1
    return OPERATION(x, axis=0 if x.ndim in (0, 1, 3) else 1)
'''

_IMPLICIT_DIM_LAYER = '''
class {name}(CELL):
    """torch.nn.LAYER() without dim (written by ms-migrate)."""

    def construct(self, x):
        return FUNCTION(x)
'''

_LAYERS = {"softmax": "Softmax", "log_softmax": "LogSoftmax", "softmin": "Softmin"}


def _implicit_dim_function(function: str, ctx) -> cst.Name:
    """``softmax_with_implicit_dim(x)``: MindSpore's op over the dim torch picks at run time."""
    source = _IMPLICIT_DIM_FUNCTION.replace("OPERATION", code_of(ctx.ref(f"mindspore.ops.{function}")))
    return define(ctx, f"{function}_with_implicit_dim", source.replace("FUNCTION", function))


def implicit_dim(function: str, layer: bool = False):
    """softmax, log_softmax and softmin without ``dim``: torch picks the dim
    from the input's rank (a legacy rule; MindSpore's default is -1), so the
    call goes through a function written above the code that does the same
    (the layers through a Cell that calls it)."""

    def hook(call, ctx):
        value = call.get("dim")
        if value is not None and not (isinstance(value, cst.Name) and value.value == "None"):
            return
        if layer:
            name = _LAYERS[function]
            source = _IMPLICIT_DIM_LAYER.replace("CELL", code_of(ctx.ref("mindspore.nn.Cell"))).replace("LAYER", name)
            source = source.replace("FUNCTION", _implicit_dim_function(function, ctx).value)
            call.result = cst.Call(define(ctx, f"{name}WithImplicitDim", source), [])
            return
        if call.has("dtype"):
            raise Unconvertible("dim not given: torch picks a legacy implicit dim (MindSpore uses -1); pass dim "
                                "explicitly to convert it with dtype=")
        call.result = cst.Call(_implicit_dim_function(function, ctx), [cst.Arg(call.get("input"))])

    return hook


def bool_literal(call, name: str):
    """(known, value) of a bool argument (torch default when absent)."""
    try:
        return True, call.literal(name)
    except (ValueError, SyntaxError):
        return False, None
