"""Element-wise ``torch.*`` functions of one tensor: torch.exp(x) -> ops.exp(x)."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P
from rewrite_rules.tensor.math import DOUBLE, HALF, SIGNED, TANH_NOTE, TANH_RANGE, signbit_of, tanh_of
from rewrite_rules.torch_functions.builders import ABOVE_ONE, POSITIVE, UNIT, X, case, fn
from rewrite_rules.torch_functions.integer_inputs import FLOAT_RESULT, float_input, is_complex_tensor, source_argument

# name -> (input set, MindSpore name of the first parameter when it is not `input`)
_SAME_NAME = {
    "abs": X, "absolute": X, "acos": UNIT, "arccos": UNIT, "acosh": ABOVE_ONE, "arccosh": ABOVE_ONE,
    "asin": UNIT, "asinh": X, "arcsinh": X, "atan": X, "arctan": X, "atanh": UNIT, "arctanh": UNIT,
    "ceil": X, "cos": X, "cosh": X, "digamma": POSITIVE, "erf": X, "erfc": X, "erfinv": UNIT, "exp": X,
    "exp2": X, "expm1": X, "floor": X, "i0": X, "lgamma": POSITIVE, "log": POSITIVE, "log10": POSITIVE,
    "log1p": POSITIVE, "log2": POSITIVE, "neg": X, "negative": X, "positive": X, "reciprocal": POSITIVE,
    "rsqrt": POSITIVE, "sigmoid": X, "sign": X, "sgn": X, "sin": X, "sinc": X, "sinh": X,
    "square": X, "tan": UNIT, "trunc": X, "isnan": X, "isinf": X, "isfinite": X,
    "isneginf": X, "isposinf": X, "isreal": X, "logical_not": X,
}
_FIRST_PARAM_X = {"arcsin": UNIT, "deg2rad": X, "rad2deg": X, "frac": X, "sqrt": POSITIVE}

_NO_OUT = {"positive", "isnan", "isinf", "isfinite", "isreal"}

# torch computes these in float32 for an integer or bool input; MindSpore's CPU kernels
# refuse one (measured for log, exp, sin, cos, rsqrt, erf, log1p, expm1, log2, log10 ...):
# an input the source shows to be an integer tensor is cast to float32 first (FLOAT_RESULT)
# integer inputs in the shapes research code writes them
_INTEGER_CASES = {
    "log": ("result = torch.log(torch.arange(1, 6))", "result = torch.log(torch.tensor([1, 2, 4]))",
            "result = torch.log(i.long() + 1)"),
    "exp": ("result = torch.exp(-torch.arange(0, 8, 2))", "result = torch.exp(i > 2)",
            "result = torch.exp(torch.arange(4, dtype=torch.int32))"),
}


def _integer_cases(name):
    if name not in FLOAT_RESULT:
        return ()
    snippets = _INTEGER_CASES.get(name, (f"result = torch.{name}(i.long())",))
    return tuple(case(snippet, {"i": "randint(1, 4, (3, 4))"}) for snippet in snippets)


def _complex_abs(call, ctx):
    """The magnitude of a tensor the source shows to be complex: ops.abs of a complex tensor is
    complex64 in MindSpore (torch: float32); the ComplexAbs primitive gives torch's dtype."""
    if is_complex_tensor(source_argument(call, "input"), ctx):
        call.result = cst.Call(cst.Call(ctx.ref("mindspore.ops.ComplexAbs"), []), [cst.Arg(call.get("input"))])


def _unary(name: str, inputs, rename_input: str | None = None, extra=(), **options):
    signature = "input" if name in _NO_OUT else "input, *, out=None"
    args = {"input": rename_input} if rename_input else {}
    hook = float_input() if name in FLOAT_RESULT else _complex_abs if name in ("abs", "absolute") else None
    if name in ("abs", "absolute"):
        extra = (*extra, case(f"result = torch.{name}(torch.fft.rfft(x))", X, rtol=1e-5, atol=1e-5),
                 case(f"result = torch.{name}(torch.view_as_complex(x.reshape(3, 2, 2)))", X))
    return fn(f"torch.{name}", signature=signature, args=args, positional=1, inputs=inputs, hook=hook,
              extra=(*extra, *_integer_cases(name)), **options)


def _tanh(call, ctx):
    call.result = tanh_of(call.get("input"), ctx)


def _signbit(call, ctx):
    call.result = signbit_of(call.get("input"), ctx)


# float16 and float64 keep their dtype (cases in the shape that was reported)
_DTYPES = ("sigmoid", "sign", "sgn")


def _dtype_cases(name):
    if name not in _DTYPES:
        return ()
    return (case(f"result = torch.{name}(x)", HALF, rtol=1e-3, atol=1e-3), case(f"result = torch.{name}(x)", DOUBLE))


RULES = [
    *(_unary(name, inputs, extra=_dtype_cases(name)) for name, inputs in _SAME_NAME.items()),
    *(_unary(name, inputs, rename_input="x") for name, inputs in _FIRST_PARAM_X.items()),
    fn("torch.signbit", signature="input, *, out=None", positional=1, inputs=X, hook=_signbit,
       notes="the sign bit read through an integer view: MindSpore's signbit misses -0.0",
       extra=(case("result = torch.signbit(x)", SIGNED), case("result = torch.signbit(x.double())", SIGNED),
              case("result = torch.signbit(i)", {"i": "tensor([3, -1, 0])"}))),
    fn("torch.tanh", signature="input, *, out=None", positional=1, inputs=X, hook=_tanh,
       notes=TANH_NOTE,
       extra=(case("result = torch.tanh(x)", TANH_RANGE), case("result = torch.tanh(x.double())", TANH_RANGE),
              case("result = torch.tanh(x.half())", TANH_RANGE, rtol=1e-3, atol=1e-3))),
]
