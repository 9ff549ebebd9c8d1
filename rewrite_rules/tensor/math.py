"""Element-wise Tensor methods: unary math, arithmetic, comparison and logic.

Most have the same name, arguments and values in MindSpore (the execution
cases prove it); the others are rewritten to an equivalent composition.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P, call_cases
from rewrite_rules.api import Example, Unconvertible, define
from rewrite_rules.spec import MethodRule
from rewrite_rules.tensor.binding import atom, code_of, expr, keyword, literal, method, same
from rewrite_rules.torch_functions.integer_inputs import FLOAT_RESULT, float_receiver, is_complex_tensor

X = {"x": "randn(3, 4)"}
XY = {"x": "randn(3, 4)", "y": "randn(3, 4)"}
UNIT = {"x": "rand(3, 4)"}  # (0, 1): acos, atanh, erfinv, logit
POSITIVE = "p = x.abs() + 0.5\n"


def _complex_abs(call, ctx):
    """x.abs() of a tensor the source shows to be complex: MindSpore's abs of one is complex64
    (|x| + 0j), torch's float32; the ComplexAbs primitive gives torch's dtype."""
    source = call.source.func.value if call.source is not None and isinstance(call.source.func, cst.Attribute) else None
    if is_complex_tensor(source, ctx):
        return cst.Call(cst.Call(ctx.ref("mindspore.ops.ComplexAbs"), []), [cst.Arg(call.receiver)])
    return call.call


_COMPLEX_ABS_CASES = tuple(
    Example(f"{made}\nresult = {read}", inputs={}) for made, read in (
        ("c = torch.tensor([3 + 4j, -1j, 0.5])", "c.abs()"),
        ("c = torch.tensor([[3 + 4j, -1j], [2, 1j]])", "(c.conj().abs(), c[0].absolute(), c.mT.abs())"),
        ("c = torch.view_as_complex(torch.ones(3, 2))", "c.abs()"),
        ("c = torch.full((2,), 1 - 1j)\nd = -c", "(d.abs(), torch.abs(d))"),
        ("c = torch.zeros(2, dtype=torch.cfloat)", "c.abs()"),
    ))


def _unary(name: str, inputs=X, prefix: str = "", receiver: str = "x", **kw):
    examples = call_cases(f"{prefix}result = {receiver}.{name}({{args}})", [], inputs, **kw)
    if name in ("abs", "absolute"):
        return MethodRule(name, rename=name, hook=_complex_abs, examples=(*examples, *_COMPLEX_ABS_CASES),
                          notes="of a tensor the source shows to be complex: ops.ComplexAbs()(x), float32 as in "
                                "torch (MindSpore's abs of a complex tensor is complex64)")
    if name in FLOAT_RESULT:
        # MindSpore's CPU kernels refuse integer and bool inputs where torch computes in float32:
        # the receiver is cast where the source shows an integer tensor (see integer_inputs)
        examples = (*examples, *_INTEGER_METHOD_CASES.get(name, ()))
        return MethodRule(name, rename=name, hook=float_receiver, examples=tuple(examples),
                          notes="an integer or bool receiver the source shows is cast to float32 first (as torch computes)")
    return same(name, examples=examples)


_INTEGER_METHOD_CASES = {
    "log": (Example("result = torch.arange(1, 6).log()", inputs={}),
            Example("y = torch.arange(1, 6).log()", "y = ops.arange(1, 6).astype(mindspore.float32).log()")),
    "exp": (Example("result = (-torch.arange(0, 8, 2)).exp()", inputs={}),
            Example("result = (x > 0).exp()", inputs=X)),
    "sqrt": (Example("result = torch.tensor([1, 4, 9]).sqrt()", inputs={}),
             Example("result = (x > 0).long().sqrt()", inputs=X)),
    "rsqrt": (Example("result = torch.arange(1, 4).rsqrt()", inputs={}),),
    "sin": (Example("result = torch.arange(4).sin()", inputs={}),),
    "cos": (Example("result = torch.arange(4).cos()", inputs={}),),
}


_PLAIN = [
    "abs", "absolute", "atan", "arctan", "asinh", "arcsinh", "exp", "expm1", "sin", "cos", "tan",
    "sigmoid", "sinh", "cosh", "neg", "negative", "sign", "sgn", "floor", "ceil", "trunc", "frac", "square",
    "erf", "erfc", "deg2rad", "rad2deg", "sinc", "i0", "positive", "isnan", "isinf", "isfinite",
    "nan_to_num", "logical_not", "isneginf", "isposinf", "isreal",
]
_UNIT = ["acos", "arccos", "asin", "arcsin", "atanh", "arctanh", "erfinv", "logit"]
_POSITIVE = ["log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "lgamma", "digamma"]

_BINARY = [
    "mul", "true_divide", "atan2", "arctan2", "maximum", "minimum", "fmax",
    "hypot", "logaddexp", "logaddexp2", "eq", "ne", "gt", "ge", "lt", "le", "greater", "less",
    "greater_equal", "less_equal", "not_equal", "logical_and", "logical_or", "logical_xor", "xlogy",
]


def _binary(name: str, param: str = "other", value: str = "y", inputs=XY, **kw):
    return same(name, examples=call_cases(f"result = x.{name}({{args}})", [P(param, value)], inputs, **kw))


def _need_dim(bound, call, ctx):
    if bound.get("dim") is None:
        raise Unconvertible("dim not given: torch picks a legacy implicit dim, MindSpore uses -1; pass dim explicitly")


def _round(bound, call, ctx):
    """torch rounds to ``decimals`` as round(x * 10**d) / 10**d; MindSpore's
    CPU kernel only takes decimals=0."""
    decimals = bound.get("decimals")
    receiver = call.receiver
    if decimals is None:
        bound.result = cst.Call(cst.Attribute(receiver, cst.Name("round")), [])
        return
    try:
        value = literal(decimals)
    except ValueError:
        value = None
    if value == 0:
        bound.result = cst.Call(cst.Attribute(receiver, cst.Name("round")), [])
        return
    scale = repr(10**value) if isinstance(value, int) and value > 0 else f"10 ** ({code_of(decimals)})"
    bound.result = expr(f"({atom(receiver)} * {scale}).round() / {scale}")


def _addcdiv(bound, call, ctx):
    """The AddcdivExt kernel is missing on CPU: x + value * t1 / t2."""
    t1, t2 = bound.get("tensor1"), bound.get("tensor2")
    value = bound.get("value")
    quotient = f"{atom(t1)} / {atom(t2)}"
    scaled = quotient if value is None else f"{atom(value)} * {quotient}"
    bound.result = expr(f"{atom(call.receiver)} + {scaled}")


def _fmin(bound, call, ctx):
    """The FMin kernel is missing on CPU: minimum that ignores NaN."""
    x, y = atom(call.receiver), atom(bound.get("other"))
    ops = code_of(ctx.ref("mindspore.ops"))
    bound.result = expr(f"{ops}.where({ops}.isnan({x}), {y}, {ops}.where({ops}.isnan({y}), {x}, {ops}.minimum({x}, {y})))")


def _bitwise_not(bound, call, ctx):
    """The BitwiseNot kernel is missing on CPU: ~x (logical not on bool) equals
    -x - 1 on two's complement integers."""
    x = atom(call.receiver)
    bound.result = expr(f"{x}.logical_not() if {x}.dtype == mindspore.bool_ else -{x} - 1")
    ctx.imports_needed.add(("mindspore", "mindspore"))


def signbit_of(x: cst.BaseExpression, ctx) -> cst.BaseExpression:
    """MindSpore's signbit (and copysign) miss the sign of -0.0 and -NaN:
    read the sign bit through an integer view of the same width."""
    ms, x = code_of(ctx.ref("mindspore")), atom(x)
    view = f"{x}.view({ms}.int64 if {x}.itemsize == 8 else {ms}.int32 if {x}.itemsize == 4 else {ms}.int16)"
    return expr(f"(({view} < 0) if {x}.is_floating_point() else {x} < 0)")


def _signbit(bound, call, ctx):
    bound.result = signbit_of(call.receiver, ctx)


def equal_of(x: cst.BaseExpression, y: cst.BaseExpression, ctx) -> cst.BaseExpression:
    """torch.equal: one bool (same shape and all elements equal)."""
    x, y = atom(x), atom(y)
    return expr(f"({x}.shape == {y}.shape and bool({code_of(ctx.ref('mindspore.ops.equal'))}({x}, {y}).all()))")


def _equal(bound, call, ctx):
    bound.result = equal_of(call.receiver, bound.get("other"), ctx)


SIGNED = {"x": "tensor([1.0, -2.0, 0.0, -0.0, nan, -nan, inf, -inf])"}


_PRECISE_TANH = '''
def {name}(x):
    """torch.tanh (written by ms-migrate)."""
    # MindSpore's float32 tanh kernel is off by up to 1e-4 for 3 < |x| < 9: 2 * sigmoid(2x) - 1 there
    if x.dtype != MINDSPORE.float32:
        return OPS.tanh(x)
    return OPS.where(x.abs() < 1, OPS.tanh(x), 2 * OPS.sigmoid(2 * x) - 1)
'''


def tanh_of(x: cst.BaseExpression, ctx) -> cst.BaseExpression:
    """MindSpore's float32 tanh kernel is off by up to 1e-4 (and exceeds 1)
    for 3 < |x| < 9 (measured on CPU; its gradient too): for |x| >= 1 use
    2 * sigmoid(2x) - 1, accurate there to 2e-7. float16/float64 are exact.
    A function written above the code does it, so ``x`` is computed once."""
    ops, ms = code_of(ctx.ref("mindspore.ops")), code_of(ctx.ref("mindspore"))
    return cst.Call(define(ctx, "precise_tanh", _PRECISE_TANH.replace("OPS", ops).replace("MINDSPORE", ms)), [cst.Arg(x)])


def _tanh(bound, call, ctx):
    bound.result = tanh_of(call.receiver, ctx)


TANH_NOTE = "MindSpore's float32 tanh kernel is off by up to 1e-4 for 3 < |x| < 9: composed from sigmoid for |x| >= 1"
# where MindSpore's float32 tanh kernel is off (3 < |x| < 9), and both signs
TANH_RANGE = {"x": "uniform(-9.0, 9.0, (6, 50))"}


_LOG_SOFTMAX = '''
def {name}(x, axis=None, dtype=None):
    """torch.nn.functional.log_softmax with torch's implicit dim (written by ms-migrate)."""
    if dtype is not None:
        x = x.astype(dtype)
    if axis is None:  # torch's legacy choice: dim 0 for inputs of 0, 1 or 3 dimensions, else 1
        axis = 0 if x.ndim in (0, 1, 3) else 1
    return OPS.log_softmax(x, axis)
'''


def log_softmax_function(ctx) -> cst.Name:
    """The name of ``log_softmax(x, axis=None, dtype=None)``, written once above the code,
    only where the plain call cannot say what torch does: a dim not written as an integer
    (torch's legacy implicit dim when it is None, chosen by the input's rank at run time)."""
    return define(ctx, "log_softmax", _LOG_SOFTMAX.replace("OPS", code_of(ctx.ref("mindspore.ops"))))


def _int_dim(dim) -> bool:
    """Whether ``dim`` is written as an integer (``1``, ``-1``)."""
    try:
        value = literal(dim)
    except (ValueError, SyntaxError):
        return False
    return isinstance(value, int) and not isinstance(value, bool)


def _given(node) -> bool:
    return node is not None and not (isinstance(node, cst.Name) and node.value == "None")


def log_softmax_of(ctx, x, dim=None, dtype=None) -> cst.Call:
    """``ops.log_softmax(x, dim)`` for an integer dim (``x.astype(dtype)`` first for dtype=);
    otherwise ``log_softmax(x[, dim][, dtype=dtype])`` written above the code, where a
    None dim is torch's implicit dim."""
    x = x.with_changes(lpar=[], rpar=[]) if x.lpar else x
    if _int_dim(dim):
        if _given(dtype):
            x = cst.parse_expression(f"{atom(x)}.astype({code_of(dtype)})")
        return cst.Call(ctx.ref("mindspore.ops.log_softmax"), [cst.Arg(x), cst.Arg(dim)])
    args = [cst.Arg(x)]
    if _given(dim):
        args.append(cst.Arg(dim))
    if _given(dtype):
        args.append(cst.Arg(dtype, keyword=cst.Name("dtype"), equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))))
    return cst.Call(log_softmax_function(ctx), args)


LOG_SOFTMAX_NOTE = ("ops.log_softmax(x, axis) for an integer dim (dtype=: x.astype(dtype) first); a dim not written "
                    "as an integer goes through log_softmax(x, axis, dtype) written above the code, with torch's "
                    "legacy implicit dim when it is None. MindSpore's kernel computes float64 inputs with float32 "
                    "precision (measured ~3e-6 abs off torch's float64): a float64 log_softmax agrees with torch to "
                    "float32 precision only")
# log_softmax values: small and large magnitudes, a row of equal values
LOG_SOFTMAX_INPUTS = {"x": "tensor([[0.5, -1.2, 3.0, 0.0], [10.0, 10.0, 10.0, 10.0], [-20.0, 5.0, 35.0, 0.1]])"}
# float32 rounding (MindSpore's kernel: within 3.4e-6 of torch's float64 at scale 1, 7.8e-6 at scale 10; measured)
LOG_SOFTMAX_TOL = {"rtol": 1e-5, "atol": 1e-5}


def log_softmax_call(call, ctx):
    """Hook of torch.log_softmax and F.log_softmax (``input, dim=None, ..., dtype=None``)."""
    call.result = log_softmax_of(ctx, call.get("input"), call.get("dim"), call.get("dtype"))


def _log_softmax(bound, call, ctx):
    bound.result = log_softmax_of(ctx, call.receiver, bound.get("dim"), bound.get("dtype"))


def _polygamma(bound, call, ctx):
    """ops.polygamma takes n as a tensor, first."""
    n = cst.Call(ctx.ref("mindspore.Tensor"), [cst.Arg(bound.get("n"))])
    bound.result = cst.Call(ctx.ref("mindspore.ops.polygamma"), [cst.Arg(n), cst.Arg(call.receiver)])


def _frexp(bound, call, ctx):
    """(mantissa, exponent) with x = mantissa * 2**exponent, 0.5 <= |mantissa| < 1
    (0 for 0): composed from log2 and floor."""
    ops, ms, x = code_of(ctx.ref("mindspore.ops")), code_of(ctx.ref("mindspore")), atom(call.receiver)
    # MindSpore's log2 of a power of two can fall just below the integer (log2(2.0) = 0.99999976):
    # the estimate is moved by one where the mantissa it gives leaves [0.5, 1)
    estimate = f"{ops}.where({x} == 0, 0, {ops}.floor({ops}.log2({x}.abs())) + 1).astype({ms}.int32)"
    mantissa = f"({x} / {ops}.pow(2.0, e).astype({x}.dtype))"
    exponent = (f"(lambda e: e + ({mantissa}.abs() >= 1).astype({ms}.int32)"
                f" - (({mantissa}.abs() < 0.5) & ({x} != 0)).astype({ms}.int32))({estimate})")
    bound.result = expr(f"(lambda e: ({mantissa}, e))({exponent})")


INTS = {"x": "randint(-8, 9, (3, 4))", "y": "randint(1, 9, (3, 4))"}
SHIFTS = {"x": "randint(-64, 64, (3, 4))", "y": "randint(0, 4, (3, 4))"}


def _clamp_side(side: str):
    def hook(bound, call, ctx):
        clamp = cst.Attribute(call.receiver, cst.Name("clamp"))
        bound.result = cst.Call(clamp, [keyword(side, bound.get(side))])

    return hook


HALF = {"x": "tensor([0.5, -1.2, 0.0, 3.0, -7.5], dtype='float16')"}
DOUBLE = {"x": "tensor([0.5, -1.2, 0.0, 3.0, -7.5], dtype='float64')"}


def _dtype_cases(name):
    """float16 and float64 keep their dtype (cases in the shape that was reported)."""
    return (Example(f"result = x.{name}()", inputs=HALF, rtol=1e-3, atol=1e-3), Example(f"result = x.{name}()", inputs=DOUBLE))


RULES = [
    *(_unary(n) for n in _PLAIN if n not in ("sigmoid", "sign", "sgn")),
    *(same(n, examples=(*call_cases(f"result = x.{n}()", [], X), *_dtype_cases(n))) for n in ("sigmoid", "sign", "sgn")),
    *(_unary(n, UNIT) for n in _UNIT),
    *(_unary(n, prefix=POSITIVE, receiver="p") for n in _POSITIVE),
    _unary("acosh", prefix="p = x.abs() + 1.5\n", receiver="p"),
    _unary("arccosh", prefix="p = x.abs() + 1.5\n", receiver="p"),
    *(_binary(n) for n in _BINARY),
    method("floor_divide", "other", function="mindspore.ops.floor_divide",
           notes="Tensor.floor_divide of a Python number has no CPU kernel (FloorDivScalar): ops.floor_divide",
           examples=(*call_cases("result = x.floor_divide({args})", [P("other", "y")], XY),
                     *call_cases("result = x.floor_divide({args})", [P("other", "0.7")], X, shapes=("positional",)),
                     Example("result = x.floor_divide(2)", inputs={"x": "randint(-9, 9, (3, 4))"}, notes="int"))),
    _binary("fmod", value="0.7"),
    _binary("remainder", value="0.7"),
    _binary("heaviside", "values"),
    method("float_power", "exponent", args={"exponent": "other"},
           examples=call_cases("result = x.float_power({args})", [P("exponent", "2")], X)),
    method("multiply", "other", args={"other": "value"},
           examples=call_cases("result = x.multiply({args})", [P("other", "y")], XY)),
    same("pow", examples=(
        *call_cases("result = x.pow({args})", [P("exponent", "2")], X),
        *call_cases(POSITIVE + "result = p.pow({args})", [P("exponent", "y")], XY),
    )),
    same("add", examples=call_cases("result = x.add({args})", [P("other", "y"), P("alpha", "2", True, "keyword")], XY)),
    same("sub", examples=call_cases("result = x.sub({args})", [P("other", "y"), P("alpha", "2", True, "keyword")], XY)),
    same("subtract", examples=call_cases("result = x.subtract({args})", [P("other", "y"), P("alpha", "2", True, "keyword")], XY)),
    same("div", examples=(
        *call_cases("result = x.div({args})", [P("other", "y"), P("rounding_mode", "'floor'", True, "keyword")], XY),
        *call_cases("result = x.div({args})", [P("other", "y"), P("rounding_mode", "'trunc'", True, "keyword")], XY, shapes=("keywords",)),
    )),
    same("divide", examples=call_cases("result = x.divide({args})", [P("other", "y"), P("rounding_mode", "'floor'", True, "keyword")], XY)),
    same("clamp", examples=(
        *call_cases("result = x.clamp({args})", [P("min", "-0.5"), P("max", "0.5", True)], X),
        *call_cases("result = x.clamp({args})", [P("max", "0.5", kind="keyword")], X, shapes=("keywords",)),
    )),
    same("clip", examples=call_cases("result = x.clip({args})", [P("min", "-0.5"), P("max", "0.5", True)], X)),
    method("clamp_min", "min", hook=_clamp_side("min"), notes="-> clamp(min=...)",
           examples=call_cases("result = x.clamp_min({args})", [P("min", "0.1")], X)),
    method("clamp_max", "max", hook=_clamp_side("max"), notes="-> clamp(max=...)",
           examples=call_cases("result = x.clamp_max({args})", [P("max", "0.1")], X)),
    same("lerp", examples=call_cases("result = x.lerp({args})", [P("end", "y"), P("weight", "0.3")], XY)),
    same("addcmul", examples=call_cases(
        "result = x.addcmul({args})", [P("tensor1", "y"), P("tensor2", "x"), P("value", "0.5", True, "keyword")], XY)),
    method("addcdiv", "tensor1, tensor2, *, value=1", hook=_addcdiv,
           notes="AddcdivExt has no CPU kernel: composed as x + value * tensor1 / tensor2",
           examples=call_cases("result = x.addcdiv({args})",
                               [P("tensor1", "y"), P("tensor2", "x.abs() + 0.5"), P("value", "0.5", True, "keyword")], XY)),
    method("fmin", "other", hook=_fmin, notes="FMin has no CPU kernel: composed from where/isnan/minimum",
           examples=call_cases("y[0, 0] = float('nan')\nresult = x.fmin({args})", [P("other", "y")], XY)),
    same("isclose", examples=call_cases(
        "result = x.isclose({args})",
        [P("other", "x + y * 1e-6"), P("rtol", "1e-05", True), P("atol", "1e-07", True), P("equal_nan", "False", True)], XY)),
    same("allclose", examples=call_cases(
        "result = x.allclose({args})",
        [P("other", "x + y * 1e-6"), P("rtol", "1e-05", True), P("atol", "1e-07", True), P("equal_nan", "False", True)], XY)),
    method("softmax", "dim=None, dtype=None", args={"dim": "axis"}, hook=_need_dim,
           examples=(*call_cases("result = x.softmax({args})", [P("dim", "0")], X),
                     Example("x = x * 2\ny = x.softmax()", marked="implicit dim"))),
    method("log_softmax", "dim=None, dtype=None", hook=_log_softmax, notes=LOG_SOFTMAX_NOTE,
           examples=(*call_cases("result = x.log_softmax({args})", [P("dim", "1"), P("dtype", "torch.float64", True)], X,
                                 **LOG_SOFTMAX_TOL),
                     *call_cases("result = x.log_softmax({args})", [P("dim", "-1")], LOG_SOFTMAX_INPUTS, **LOG_SOFTMAX_TOL),
                     Example("y = x.log_softmax(dim=-1)", "y = ops.log_softmax(x, -1)"),
                     Example("y = x.log_softmax(1, dtype=torch.float64)",
                             "y = ops.log_softmax(x.astype(mindspore.float64), 1)"),
                     # float64: MindSpore's kernel has float32 precision (measured ~3e-6 abs off torch)
                     Example("result = x.double().log_softmax(1)", inputs=LOG_SOFTMAX_INPUTS, **LOG_SOFTMAX_TOL,
                             notes="float64 at float32 precision"),
                     Example("result = (x * 2).log_softmax(0)", inputs={"x": "randn(5)"}, notes="1d", **LOG_SOFTMAX_TOL),
                     Example("result = x.sum().log_softmax(0)", inputs=X, notes="0-d", **LOG_SOFTMAX_TOL))),
    method("relu", "", function="mindspore.ops.relu", notes="Tensor.relu does not exist in MindSpore: ops.relu(x)",
           examples=call_cases("result = x.relu({args})", [], X)),
    method("round", "*, decimals=0", hook=_round,
           notes="MindSpore's round takes only decimals=0 on CPU: round(x * 10**d) / 10**d, as torch computes it",
           examples=call_cases("result = x.round({args})", [P("decimals", "2", True, "keyword")], X)),
    *(same(n, examples=call_cases(f"result = (x > 0).int().{n}({{args}})", [P("other", "(y > 0).int() * 3")], XY))
      for n in ("bitwise_and", "bitwise_or", "bitwise_xor")),
    method("tanh", "", hook=_tanh, notes=TANH_NOTE,
           examples=(*call_cases("result = x.tanh()", [], X), Example("result = x.tanh()", inputs=TANH_RANGE),
                     Example("result = x.double().tanh()", inputs=TANH_RANGE),
                     Example("result = x.half().tanh()", inputs=TANH_RANGE, rtol=1e-3, atol=1e-3))),
    *(_binary(n, inputs=INTS) for n in ("gcd", "lcm")),
    *(_binary(n, inputs=SHIFTS) for n in ("bitwise_left_shift", "bitwise_right_shift")),
    _binary("copysign"),
    _binary("nextafter"),
    _binary("ldexp", value="y", inputs={"x": "randn(3, 4)", "y": "randint(-3, 4, (3, 4))"}),
    *(same(n, examples=call_cases(f"result = (x.abs() + 0.5).{n}({{args}})", [P("other", "y.abs() + 1")], XY))
      for n in ("igamma", "igammac")),
    same("mvlgamma", examples=call_cases(f"{POSITIVE}result = (p + 2).mvlgamma({{args}})", [P("p", "2")], XY)),
    same("hardshrink", examples=call_cases("result = x.hardshrink({args})", [P("lambd", "0.3", True)], X)),
    method("renorm", "p, dim, maxnorm", args={"dim": "axis"},
           examples=call_cases("result = x.renorm({args})", [P("p", "2"), P("dim", "0"), P("maxnorm", "1.0")], X)),
    method("exp2", "", function="mindspore.ops.exp2", notes="Tensor.exp2 does not exist in MindSpore: ops.exp2",
           examples=call_cases("result = x.exp2()", [], X)),
    method("fix", "", target="trunc", notes="fix is trunc", examples=call_cases("result = (x * 3).fix()", [], X)),
    method("polygamma", "n", hook=_polygamma, notes="ops.polygamma(mindspore.Tensor(n), x)",
           examples=(*call_cases(f"{POSITIVE}result = p.polygamma({{args}})", [P("n", "1")], X),
                     *call_cases(f"{POSITIVE}result = p.polygamma({{args}})", [P("n", "3")], X, shapes=("positional",)))),
    method("frexp", "", hook=_frexp, notes="composed from log2 and floor (MindSpore has no frexp)",
           examples=(*call_cases("result = x.frexp()", [], {"x": "tensor([[1.0, -2.5, 0.0], [3.75, 1e-3, -1024.0]])"}),
                     Example("result = x.frexp()", inputs={"x": "tensor([2.0, 4.0, 0.5, -8.0, 1024.0, 0.25])"},
                             notes="powers_of_two"),
                     Example("result = x.frexp()", inputs={"x": "randn(3, 4)"}))),
    method("prelu", "weight", function="mindspore.ops.prelu", notes="Tensor.prelu does not exist in MindSpore: ops.prelu",
           examples=call_cases("result = x.prelu({args})", [P("weight", "torch.tensor([0.25])")], X)),
    method("signbit", "", hook=_signbit, notes="the sign bit read through an integer view: MindSpore's signbit misses -0.0",
           examples=(*call_cases("result = x.signbit()", [], X), Example("result = x.signbit()", inputs=SIGNED),
                     Example("result = x.double().signbit()", inputs=SIGNED), Example("result = x.half().signbit()", inputs=SIGNED),
                     Example("result = x.signbit()", inputs={"x": "tensor([3, -1, 0])"}),
                     Example("result = x.signbit().sum()", inputs=SIGNED))),
    method("equal", "other", hook=_equal, notes="one bool, as torch.equal (MindSpore's Tensor.equal is element-wise)",
           examples=(*call_cases("result = x.equal({args})", [P("other", "y")], XY),
                     Example("result = x.equal(x.clone())", inputs=X), Example("result = x.equal(x[:2])", inputs=X))),
    method("bitwise_not", "", hook=_bitwise_not,
           notes="BitwiseNot has no CPU kernel: logical_not for bool, -x - 1 for integers",
           examples=(*call_cases("i = (x * 4).int()\nresult = i.bitwise_not({args})", [], X),
                     *call_cases("m = x > 0\nresult = m.bitwise_not({args})", [], X))),
]
