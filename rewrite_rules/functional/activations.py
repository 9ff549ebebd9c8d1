"""torch.nn.functional activations -> mindspore.ops.

Differences carried: leaky_relu's slope default (MindSpore 0.2), dim -> axis,
first-parameter names (``input`` vs ``input_x``/``x``), ``inplace=`` dropped
(the value is the same), rrelu in eval mode composed as leaky_relu.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.nn.activations import elu_alpha_one
from rewrite_rules.nn.shared import INPLACE, P, bool_literal, fn_cases, implicit_dim
from rewrite_rules.api import ApiRule, Arg, Drop, Example, Unconvertible, Unsupported, code_of
from rewrite_rules.tensor.math import LOG_SOFTMAX_INPUTS, LOG_SOFTMAX_NOTE, LOG_SOFTMAX_TOL, TANH_NOTE, TANH_RANGE, log_softmax_call, tanh_of

X = {"x": "randn(2, 3, 4)"}
_STACKLEVEL = Drop("torch-internal warning level")


def _unary(name: str, ms_name: str | None = None, first: str = "input", inplace: bool = False, extra=()) -> ApiRule:
    """``F.<name>(input[, inplace])`` -> ``ops.<ms_name>(<first>)``."""
    signature = "input, inplace=False" if inplace else "input"
    args = {"inplace": INPLACE} if inplace else {}
    if first != "input":
        args["input"] = first
    params = [P("input", "x")] + ([P("inplace", "False", default=True)] if inplace else [])
    return ApiRule(
        f"torch.nn.functional.{name}",
        f"mindspore.ops.{ms_name or name}",
        signature=signature,
        args=args,
        positional=1,
        examples=(*extra, *fn_cases(name, params, X)),
    )


def _tanh(call, ctx):
    call.result = tanh_of(call.get("input"), ctx)


def _rrelu(call, ctx):
    """Eval mode (torch's default training=False) uses the fixed slope
    (lower + upper) / 2; MindSpore's ops.rrelu always samples, so compose."""
    known, training = bool_literal(call, "training")
    training_expr = call.get("training")
    call.remove("training")
    if known and training:
        return
    lower = code_of(call.get("lower", "0.125"))
    upper = code_of(call.get("upper", "0.3333333333333333"))
    slope = cst.parse_expression(f"({lower} + {upper}) / 2")
    fixed = cst.Call(ctx.ref("mindspore.ops.leaky_relu"), [cst.Arg(call.get("input")), cst.Arg(slope)])
    if known:
        call.result = fixed
        return
    # training through a variable: choose at run time
    if not isinstance(call.get("input"), cst.Name):
        raise Unconvertible("training passed through a variable with a compound input expression")
    random = cst.Call(
        ctx.ref("mindspore.ops.rrelu"),
        [cst.Arg(call.get("input")), cst.Arg(cst.parse_expression(lower)), cst.Arg(cst.parse_expression(upper))],
    )
    call.result = cst.IfExp(test=training_expr, body=random, orelse=fixed)


def _softmax_like(name: str, ms_first: str, extra=()) -> ApiRule:
    args = {"dim": "axis", "_stacklevel": _STACKLEVEL}
    if ms_first != "input":
        args["input"] = ms_first
    return ApiRule(
        f"torch.nn.functional.{name}",
        f"mindspore.ops.{name}",
        signature="input, dim=None, _stacklevel=3, dtype=None",
        args=args,
        positional=2,
        hook=implicit_dim(name),
        examples=(
            *extra,
            # without dim torch takes dim 0 of a 3-d input, dim 1 of a 2-d or 4-d one
            *(Example(f"result = F.{name}(x * 2)", inputs={"x": f"randn({shape})"}, notes=f"implicit {rank}d", atol=1e-5)
              for rank, shape in ((2, "3, 4"), (3, "2, 3, 4"), (4, "2, 3, 4, 5"))),
            *fn_cases(name, [P("input", "x"), P("dim", "1")], X, atol=1e-5),
            *fn_cases(name, [P("input", "x"), P("dim", "-1"), P("dtype", "torch.float64", kind="keyword")], X,
                      shapes=("keywords",)),
        ),
    )


RULES = [
    _unary("relu", inplace=True, extra=(Example("y = F.relu(x)", "y = ops.relu(x)"),)),
    _unary("relu6", first="x", inplace=True),
    _unary("selu", first="input_x", inplace=True),
    _unary("silu", inplace=True),
    _unary("mish", first="x", inplace=True),
    _unary("hardswish", inplace=True),
    _unary("hardsigmoid", inplace=True),
    _unary("sigmoid"),
    ApiRule("torch.nn.functional.tanh", "mindspore.ops.tanh", signature="input", hook=_tanh,
            notes=TANH_NOTE,
            examples=(*fn_cases("tanh", [P("input", "x")], X), *fn_cases("tanh", [P("input", "x")], TANH_RANGE))),
    _unary("softsign", first="x"),
    _unary("tanhshrink"),
    _unary("logsigmoid", first="x"),
    ApiRule(
        "torch.nn.functional.leaky_relu",
        "mindspore.ops.leaky_relu",
        signature="input, negative_slope=0.01, inplace=False",
        args={"negative_slope": Arg(to="alpha", explicit=True), "inplace": INPLACE},
        positional=1,
        notes="alpha is always written: MindSpore's default slope is 0.2, torch's 0.01.",
        examples=(
            Example("y = F.leaky_relu(x)", "y = ops.leaky_relu(x, alpha=0.01)"),
            *fn_cases("leaky_relu", [P("input", "x"), P("negative_slope", "0.2", default=True),
                                     P("inplace", "False", default=True)], X),
        ),
    ),
    ApiRule(
        "torch.nn.functional.elu",
        "mindspore.ops.elu",
        signature="input, alpha=1.0, inplace=False",
        args={"input": "input_x", "inplace": INPLACE},
        positional=2,
        hook=elu_alpha_one,
        notes="MindSpore's Elu kernel accepts only alpha=1.0; other values are marked.",
        examples=(
            *fn_cases("elu", [P("input", "x"), P("alpha", "1.0", default=True), P("inplace", "False", default=True)], X),
            Example("y = F.elu(x, 0.5)", marked="alpha=1.0"),
        ),
    ),
    ApiRule(
        "torch.nn.functional.celu",
        "mindspore.ops.celu",
        signature="input, alpha=1.0, inplace=False",
        args={"input": "x", "inplace": INPLACE},
        positional=2,
        examples=fn_cases("celu", [P("input", "x"), P("alpha", "0.5", default=True), P("inplace", "False", default=True)], X),
    ),
    ApiRule(
        "torch.nn.functional.gelu",
        "mindspore.ops.gelu",
        signature="input, *, approximate='none'",
        examples=fn_cases("gelu", [P("input", "x"), P("approximate", "'tanh'", default=True, kind="keyword")], X),
    ),
    ApiRule(
        "torch.nn.functional.prelu",
        "mindspore.ops.prelu",
        signature="input, weight",
        examples=fn_cases("prelu", [P("input", "x"), P("weight", "w")], {"x": "randn(2, 3, 4)", "w": "rand(3)"}),
    ),
    ApiRule(
        "torch.nn.functional.softplus",
        "mindspore.ops.softplus",
        signature="input, beta=1.0, threshold=20.0",
        examples=fn_cases("softplus", [P("input", "x"), P("beta", "2.0", default=True), P("threshold", "1.0", default=True)], X),
    ),
    ApiRule(
        "torch.nn.functional.hardtanh",
        "mindspore.ops.hardtanh",
        signature="input, min_val=-1.0, max_val=1.0, inplace=False",
        args={"inplace": INPLACE},
        positional=3,
        examples=fn_cases("hardtanh", [P("input", "x"), P("min_val", "-0.5", default=True), P("max_val", "0.7", default=True),
                                       P("inplace", "False", default=True)], X),
    ),
    ApiRule(
        "torch.nn.functional.softshrink",
        "mindspore.ops.softshrink",
        signature="input, lambd=0.5",
        examples=fn_cases("softshrink", [P("input", "x"), P("lambd", "0.3", default=True)], X),
    ),
    ApiRule(
        "torch.nn.functional.hardshrink",
        "mindspore.ops.hardshrink",
        signature="input, lambd=0.5",
        examples=fn_cases("hardshrink", [P("input", "x"), P("lambd", "0.3", default=True)], X),
    ),
    ApiRule(
        "torch.nn.functional.threshold",
        "mindspore.ops.threshold",
        signature="input, threshold, value, inplace=False",
        args={"threshold": "thr", "inplace": INPLACE},
        positional=3,
        examples=fn_cases("threshold", [P("input", "x"), P("threshold", "0.1"), P("value", "20.0"),
                                        P("inplace", "False", default=True)], X),
    ),
    ApiRule(
        "torch.nn.functional.glu",
        "mindspore.ops.glu",
        signature="input, dim=-1",
        args={"input": "x", "dim": "axis"},
        positional=2,
        examples=fn_cases("glu", [P("input", "x"), P("dim", "1", default=True)], {"x": "randn(2, 4, 6)"}),
    ),
    ApiRule(
        "torch.nn.functional.rrelu",
        "mindspore.ops.rrelu",
        signature="input, lower=0.125, upper=0.3333333333333333, training=False, inplace=False",
        args={"inplace": INPLACE},
        positional=3,
        hook=_rrelu,
        notes="training=False (torch's default) is composed as leaky_relu with slope (lower+upper)/2; "
        "MindSpore's ops.rrelu always samples random slopes.",
        examples=(
            *fn_cases("rrelu", [P("input", "x"), P("lower", "0.1", default=True), P("upper", "0.3", default=True),
                                P("training", "False", default=True)], X),
            # training=True: a random slope per negative entry; the harness replays torch's slopes
            *fn_cases("rrelu", [P("input", "x"), P("lower", "0.1", default=True), P("upper", "0.3", default=True),
                                P("training", "True", kind="keyword")], X, notes="training: slopes replayed"),
        ),
    ),
    _softmax_like("softmax", "input", extra=(Example("y = F.softmax(x, dim=-1)", "y = ops.softmax(x, axis=-1)"),)),
    ApiRule(
        "torch.nn.functional.log_softmax",
        None,
        signature="input, dim=None, _stacklevel=3, dtype=None",
        args={"_stacklevel": _STACKLEVEL},
        hook=log_softmax_call,
        notes=LOG_SOFTMAX_NOTE,
        examples=(
            Example("y = F.log_softmax(x, dim=1)", "y = ops.log_softmax(x, 1)"),
            Example("y = F.log_softmax(x, -1, dtype=torch.float64)", "y = ops.log_softmax(x.astype(mindspore.float64), -1)"),
            # without dim torch takes dim 0 of a 0-d, 1-d or 3-d input, dim 1 of a 2-d or 4-d one
            *(Example(f"result = F.log_softmax(x * 2)", inputs={"x": f"randn({shape})"}, notes=f"implicit {rank}d",
                      **LOG_SOFTMAX_TOL)
              for rank, shape in ((1, "5"), (2, "3, 4"), (3, "2, 3, 4"), (4, "2, 3, 4, 5"))),
            Example("result = F.log_softmax(x.sum())", inputs=X, notes="implicit 0d", **LOG_SOFTMAX_TOL),
            *fn_cases("log_softmax", [P("input", "x"), P("dim", "1"), P("_stacklevel", "5", True),
                                      P("dtype", "torch.float64", True)], X, **LOG_SOFTMAX_TOL),
            *fn_cases("log_softmax", [P("input", "x"), P("dim", "-1")], LOG_SOFTMAX_INPUTS, **LOG_SOFTMAX_TOL),
            # float64: MindSpore's kernel has float32 precision (measured ~3e-6 abs off torch's float64)
            Example("result = F.log_softmax(x.double(), dim=1)", inputs=LOG_SOFTMAX_INPUTS, **LOG_SOFTMAX_TOL,
                    notes="float64 at float32 precision"),
            Example("result = F.log_softmax(x, dim=0, dtype=torch.float64)", inputs=LOG_SOFTMAX_INPUTS,
                    **LOG_SOFTMAX_TOL, notes="float64 at float32 precision"),
            Example("result = F.log_softmax(x, dtype=torch.float64)", inputs=X, **LOG_SOFTMAX_TOL,
                    notes="implicit dim with dtype="),
            Example("result = F.log_softmax(x.half(), 1)", inputs=LOG_SOFTMAX_INPUTS, rtol=1e-3, atol=2e-2,
                    notes="float16: values up to 55 (an ulp of 0.03)"),
            Example("d = None\nresult = F.log_softmax(x, d)", inputs=X, notes="dim through a variable",
                    **LOG_SOFTMAX_TOL),
        ),
    ),
    _softmax_like("softmin", "x"),
]
