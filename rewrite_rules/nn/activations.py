"""torch.nn activation layers -> mindspore.nn activation Cells.

Differences carried: LeakyReLU's slope default (MindSpore 0.2, torch 0.01),
GELU's approximation default (MindSpore tanh, torch exact), dim -> axis, and
class renames (Hardswish -> HSwish, Softshrink -> SoftShrink, SELU -> SeLU, ...).
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.nn.float_args import as_float
from rewrite_rules.nn.shared import DEVICE, DTYPE, INPLACE, P, implicit_dim, layer_cases
from rewrite_rules.api import ApiRule, Arg, Example, Unconvertible, Unsupported, code_of, define, literal_value, render
from rewrite_rules.tensor.math import LOG_SOFTMAX_INPUTS, LOG_SOFTMAX_NOTE, LOG_SOFTMAX_TOL, log_softmax_function
from rewrite_rules.nn.module_paths import with_module_paths

X = {"x": "randn(2, 3, 4)"}


def _gelu_approximate(expr, ctx):
    """torch 'none'/'tanh' -> MindSpore False/True."""
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        if value == "none":
            return cst.Name("False")
        if value == "tanh":
            return cst.Name("True")
        raise Unconvertible(f"unknown GELU approximate={value!r}")
    return cst.parse_expression(f"{code_of(expr)} == 'tanh'")


def elu_alpha_one(call, ctx):
    """MindSpore's Elu kernel only implements alpha == 1.0."""
    try:
        alpha = call.literal("alpha")
    except (ValueError, SyntaxError):
        return  # a variable: MindSpore raises at run time unless it is 1.0, so nothing goes silently wrong
    if float(alpha) != 1.0:
        raise Unconvertible("MindSpore's ELU supports only alpha=1.0")


def _plain(torch_name: str, target: str, signature: str = "", args=None, cases=(), **kw) -> ApiRule:
    return ApiRule(torch_name, target, signature=signature, args=args or {}, examples=tuple(cases), **kw)


def _no_arg(name: str, target: str, ms_name: str | None = None) -> ApiRule:
    """An activation without parameters; torch's ``*args, **kwargs`` accept nothing useful."""
    return _plain(f"torch.nn.{name}", f"mindspore.nn.{ms_name or name}", cases=layer_cases(name, [], X))


def _inplace_only(name: str, ms_name: str | None = None, extra=()) -> ApiRule:
    """An activation whose only torch argument is ``inplace``."""
    return _plain(
        f"torch.nn.{name}",
        f"mindspore.nn.{ms_name or name}",
        signature="inplace=False",
        args={"inplace": INPLACE},
        cases=(
            *extra,
            *layer_cases(name, [P("inplace", "False", default=True)], X),
        ),
    )


def _dim_layer(name: str, function: str) -> ApiRule:
    """Softmax-like layers: dim -> axis; without dim, torch's implicit dim at run time."""
    return _plain(
        f"torch.nn.{name}",
        f"mindspore.nn.{name}",
        signature="dim=None",
        args={"dim": "axis"},
        positional=0,
        hook=implicit_dim(function, layer=True),
        cases=(
            Example(f"sm = nn.{name}(dim=1)", f"sm = nn.{name}(axis=1)"),
            # without dim torch takes dim 0 of a 3-d input, dim 1 of a 2-d or 4-d one
            *(Example(f"layer = nn.{name}()\nresult = layer(x)", inputs={"x": f"randn({shape})"}, notes=f"implicit {rank}d",
                      atol=1e-5) for rank, shape in ((2, "3, 4"), (3, "2, 3, 4"), (4, "2, 3, 4, 5"))),
            # LogSoftmax differs from torch by up to 3.6e-6 (measured)
            *layer_cases(name, [P("dim", "1")], X, atol=1e-5),
            *layer_cases(name, [P("dim", "-1")], X, shapes=("keywords",), atol=1e-5),
        ),
    )


_LOG_SOFTMAX = '''
class {name}(CELL):
    """torch.nn.LogSoftmax with torch's implicit dim (written by ms-migrate)."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def construct(self, x):
        return LOG_SOFTMAX(x, self.dim)
'''


def _log_softmax_layer(call, ctx):
    """``nn.LogSoftmax(axis=dim)`` for an integer dim; otherwise a Cell calling ``log_softmax``
    (rewrite_rules.tensor.math), which takes torch's implicit dim when dim is None."""
    dim = call.get("dim")
    try:
        value = literal_value(dim) if dim is not None else None
    except (ValueError, SyntaxError):
        value = None
    if isinstance(value, int) and not isinstance(value, bool):
        call.result = cst.Call(ctx.ref("mindspore.nn.LogSoftmax"), [cst.Arg(dim, keyword=cst.Name("axis"), equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))])
        return
    source = _LOG_SOFTMAX.replace("CELL", code_of(ctx.ref("mindspore.nn.Cell")))
    source = source.replace("LOG_SOFTMAX", log_softmax_function(ctx).value)
    call.result = cst.Call(define(ctx, "LogSoftmax", source), [cst.Arg(dim)] if dim is not None else [])


_SOFTPLUS = '''
class {name}(CELL):
    """torch.nn.Softplus (written by ms-migrate)."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def construct(self, x):
        return SOFTPLUS(x, self.beta, self.threshold)
'''


def _softplus_layer(call, ctx):
    """A Cell written above the code that calls ops.softplus with the layer's beta and threshold."""
    source = _SOFTPLUS.replace("CELL", code_of(ctx.ref("mindspore.nn.Cell")))
    call.result = render(call, define(ctx, "Softplus", source.replace("SOFTPLUS", code_of(ctx.ref("mindspore.ops.softplus")))))


RULES = [
    _inplace_only("ReLU", extra=(Example("act = nn.ReLU(inplace=True)", "act = nn.ReLU()"),)),
    _inplace_only("ReLU6"),
    _inplace_only("SiLU"),
    _inplace_only("Mish"),
    _inplace_only("Hardswish", "HSwish"),
    _inplace_only("Hardsigmoid", "HSigmoid"),
    _inplace_only("SELU", "SeLU"),
    _no_arg("Sigmoid", "Sigmoid"),
    _no_arg("Tanh", "Tanh"),
    _no_arg("Softsign", "Softsign"),
    _no_arg("Tanhshrink", "Tanhshrink"),
    _no_arg("LogSigmoid", "LogSigmoid"),
    _plain(
        "torch.nn.Softmax2d",
        "mindspore.nn.Softmax2d",
        cases=layer_cases("Softmax2d", [], {"x": "randn(2, 3, 4, 5)"}),
    ),
    _plain(
        "torch.nn.GELU",
        "mindspore.nn.GELU",
        signature="approximate='none'",
        args={"approximate": Arg(explicit=True, value=_gelu_approximate)},
        positional=0,
        notes="approximate is always written: MindSpore's default is the tanh approximation, torch's is exact.",
        cases=(
            Example("act = nn.GELU()", "act = nn.GELU(approximate=False)"),
            *layer_cases("GELU", [P("approximate", "'tanh'", default=True)], X),
            *layer_cases("GELU", [P("approximate", "'none'")], X, shapes=("keywords",)),
        ),
    ),
    _plain(
        "torch.nn.LeakyReLU",
        "mindspore.nn.LeakyReLU",
        signature="negative_slope=0.01, inplace=False",
        args={"negative_slope": Arg(to="alpha", explicit=True), "inplace": INPLACE},
        positional=0,
        notes="alpha is always written: MindSpore's default slope is 0.2, torch's 0.01.",
        cases=(
            Example("act = nn.LeakyReLU()", "act = nn.LeakyReLU(alpha=0.01)"),
            *layer_cases("LeakyReLU", [P("negative_slope", "0.1", default=True), P("inplace", "False", default=True)], X),
        ),
    ),
    _plain(
        "torch.nn.ELU",
        "mindspore.nn.ELU",
        signature="alpha=1.0, inplace=False",
        args={"inplace": INPLACE, "alpha": Arg(value=as_float)},  # MindSpore refuses an int alpha
        hook=elu_alpha_one,
        notes="MindSpore's Elu kernel accepts only alpha=1.0 (measured: 'alpha must be 1.0f'); other values are marked.",
        cases=(
            *layer_cases("ELU", [P("alpha", "1.0", default=True), P("inplace", "False", default=True)], X),
            *layer_cases("ELU", [P("alpha", "1")], X),
            Example("layer = nn.ELU(alpha=1)", "layer = nn.ELU(alpha=1.0)"),
            Example("layer = nn.ELU(0.5)", marked="alpha=1.0"),
        ),
    ),
    _plain(
        "torch.nn.CELU",
        "mindspore.nn.CELU",
        signature="alpha=1.0, inplace=False",
        args={"inplace": INPLACE},
        cases=layer_cases("CELU", [P("alpha", "0.5", default=True), P("inplace", "False", default=True)], X),
    ),
    _plain(
        "torch.nn.PReLU",
        "mindspore.nn.PReLU",
        signature="num_parameters=1, init=0.25, device=None, dtype=None",
        args={"num_parameters": "channel", "init": "w", "device": DEVICE, "dtype": DTYPE},
        positional=2,
        weights={"weight": "w"},
        notes="num_parameters -> channel, init -> w; the learnable slope is the Parameter 'w'.",
        cases=(
            *layer_cases("PReLU", [P("num_parameters", "3", default=True), P("init", "0.1", default=True)],
                         {"x": "randn(2, 3, 4)"}),
        ),
    ),
    _plain(
        "torch.nn.Hardtanh",
        "mindspore.nn.Hardtanh",
        signature="min_val=-1.0, max_val=1.0, inplace=False, min_value=None, max_value=None",
        args={
            "inplace": INPLACE,
            "min_value": Unsupported("min_value is a deprecated alias; use min_val"),
            "max_value": Unsupported("max_value is a deprecated alias; use max_val"),
        },
        cases=layer_cases("Hardtanh", [P("min_val", "-0.5", default=True), P("max_val", "0.7", default=True)], X),
    ),
    _plain(
        "torch.nn.Softshrink",
        "mindspore.nn.SoftShrink",
        signature="lambd=0.5",
        cases=layer_cases("Softshrink", [P("lambd", "0.3", default=True)], X),
    ),
    _plain(
        "torch.nn.Hardshrink",
        "mindspore.nn.HShrink",
        signature="lambd=0.5",
        cases=layer_cases("Hardshrink", [P("lambd", "0.3", default=True)], X),
    ),
    _plain(
        "torch.nn.Threshold",
        "mindspore.nn.Threshold",
        signature="threshold, value, inplace=False",
        args={"inplace": INPLACE},
        cases=layer_cases("Threshold", [P("threshold", "0.1"), P("value", "20.0"), P("inplace", "False", default=True)], X),
    ),
    _plain(
        "torch.nn.GLU",
        "mindspore.nn.GLU",
        signature="dim=-1",
        args={"dim": "axis"},
        positional=0,
        cases=layer_cases("GLU", [P("dim", "1", default=True)], {"x": "randn(2, 4, 6)"}),
    ),
    _plain(
        "torch.nn.RReLU",
        None,
        signature="lower=0.125, upper=0.3333333333333333, inplace=False",
        notes="mindspore.nn.RReLU samples random slopes even in eval mode (measured), where torch uses the fixed "
        "slope (lower+upper)/2; use nn.LeakyReLU(alpha=(lower+upper)/2) for inference",
        cases=(Example("act = nn.RReLU(0.1, 0.3)", marked="random slopes even in eval mode"),),
    ),
    _plain(
        "torch.nn.Softplus",
        None,
        signature="beta=1.0, threshold=20.0",
        hook=_softplus_layer,
        notes="mindspore.nn has no Softplus Cell: a Cell written above the code calls ops.softplus(x, beta, "
              "threshold) (linear above threshold / beta, as torch).",
        cases=(
            *layer_cases("Softplus", [P("beta", "2.0", default=True), P("threshold", "1.5", default=True)],
                         {"x": "randn(2, 3, 4)"}),
            Example("layer = nn.Softplus(beta=2, threshold=10)\nresult = layer(x * 8)", inputs=X,
                    notes="integer beta and threshold; values on both sides of the threshold"),
        ),
    ),
    _dim_layer("Softmax", "softmax"),
    _plain(
        "torch.nn.LogSoftmax",
        None,
        signature="dim=None",
        hook=_log_softmax_layer,
        notes="nn.LogSoftmax(axis=dim) for an integer dim; otherwise a Cell written above the code calling "
              "log_softmax (torch's implicit dim when dim is None). " + LOG_SOFTMAX_NOTE,
        cases=(
            # without dim torch takes dim 0 of a 1-d or 3-d input, dim 1 of a 2-d or 4-d one
            *(Example("layer = nn.LogSoftmax()\nresult = layer(x)", inputs={"x": f"randn({shape})"}, notes=f"implicit {rank}d",
                      **LOG_SOFTMAX_TOL) for rank, shape in ((1, "5"), (2, "3, 4"), (3, "2, 3, 4"), (4, "2, 3, 4, 5"))),
            Example("sm = nn.LogSoftmax(dim=1)", "sm = nn.LogSoftmax(axis=1)"),
            *layer_cases("LogSoftmax", [P("dim", "1")], X, **LOG_SOFTMAX_TOL),
            *layer_cases("LogSoftmax", [P("dim", "-1")], LOG_SOFTMAX_INPUTS, **LOG_SOFTMAX_TOL),
            # float64: MindSpore's kernel has float32 precision (measured ~3e-6 abs off torch's float64)
            Example("layer = nn.LogSoftmax(1)\nresult = layer(x.double())", inputs=LOG_SOFTMAX_INPUTS,
                    **LOG_SOFTMAX_TOL, notes="float64 at float32 precision"),
            Example("d = 1\nlayer = nn.LogSoftmax(d)\nresult = (layer(x), layer.dim)", inputs=X, **LOG_SOFTMAX_TOL,
                    notes="dim through a variable"),
        ),
    ),
    _dim_layer("Softmin", "softmin"),
]

RULES = with_module_paths(RULES)  # torch.nn.modules.X and torch.nn.modules.<submodule>.X too
