"""Element-wise ``torch.*`` functions of two or more tensors: arithmetic,
comparison, logic and bitwise operations."""

from __future__ import annotations

from rewrite_rules.api import Arg
from rewrite_rules.cases import P
from rewrite_rules.nn.float_args import int_literal_as_float
from rewrite_rules.torch_functions.builders import BOOLS, IN, INTS, OTHER, XY, case, compose, fn, ms, scaled

POSITIVE_XY = {"x": "uniform(0.5, 2.0, (3, 4))", "y": "uniform(0.5, 2.0, (3, 4))"}
NONZERO_Y = {"x": "randn(3, 4)", "y": "uniform(0.5, 2.0, (3, 4))"}
SHIFTS = {"x": "randint(-50, 50, (3, 4))", "y": "randint(0, 4, (3, 4))"}
_BINARY = "input, other, *, out=None"


def _binary(name: str, inputs=XY, *, target: str | None = None, rename_input: str | None = None, **options):
    args = {"input": rename_input} if rename_input else {}
    return fn(
        f"torch.{name}", target, _BINARY, args=args, params=[IN, OTHER], inputs=inputs, positional=2, **options
    )


_PLAIN = {
    "mul": XY, "multiply": XY, "maximum": XY, "minimum": XY, "fmax": XY, "hypot": XY, "logaddexp": XY,
    "logaddexp2": XY, "xlogy": POSITIVE_XY, "nextafter": XY, "atan2": XY, "arctan2": XY,
    "floor_divide": NONZERO_Y, "remainder": NONZERO_Y, "fmod": NONZERO_Y,
    "gcd": INTS, "lcm": INTS, "bitwise_and": INTS, "bitwise_or": INTS, "bitwise_xor": INTS,
    "bitwise_left_shift": SHIFTS, "bitwise_right_shift": SHIFTS,
    "eq": INTS, "ne": INTS, "gt": XY, "ge": INTS, "lt": XY, "le": INTS, "greater": XY,
    "greater_equal": INTS, "less": XY, "less_equal": INTS, "not_equal": INTS,
    "logical_and": BOOLS, "logical_or": BOOLS, "logical_xor": BOOLS, "kron": XY,
}

_ALPHA = "input, other, *, alpha=1, out=None"
_ALPHA_PARAMS = [IN, OTHER, P("alpha", "2", default=True, kind="keyword")]

RULES = [
    *(_binary(name, inputs) for name, inputs in _PLAIN.items()),
    _binary("copysign", rename_input="x"),
    _binary("ldexp", {"x": "randn(3, 4)", "y": "randint(-3, 4, (3, 4))"}, rename_input="x"),
    fn(
        "torch.add",
        signature=_ALPHA,
        params=_ALPHA_PARAMS,
        inputs=XY,
        positional=2,
        hook=scaled("other", "alpha"),
        notes="alpha= has no MindSpore argument: other is multiplied by alpha.",
        extra=(case("result = torch.add(x, 2.5)", XY), case("result = torch.add(i, 3)", {"i": "randint(0, 9, (4,))"})),
    ),
    fn(
        "torch.sub",
        signature=_ALPHA,
        params=_ALPHA_PARAMS,
        inputs=XY,
        positional=2,
        hook=scaled("other", "alpha"),
        notes="alpha= has no MindSpore argument: other is multiplied by alpha.",
    ),
    fn("torch.subtract", signature=_ALPHA, params=_ALPHA_PARAMS, inputs=XY, positional=2),
fn(
        "torch.rsub",
        ms("sub"),
        signature="input, other, *, alpha=1",
        params=[IN, OTHER, P("alpha", "2", default=True, kind="keyword")],
        inputs=XY,
        hook=compose("{ops}.sub({other}, {input} * {alpha})"),
        notes="rsub(input, other, alpha) is other - alpha * input.",
    ),
    *(
        fn(
            f"torch.{name}",
            signature="input, other, *, rounding_mode=None, out=None",
            params=[IN, OTHER, P("rounding_mode", '"floor"', default=True, kind="keyword")],
            inputs=NONZERO_Y,
            positional=2,
            extra=(case(f'result = torch.{name}(x, y, rounding_mode="trunc")', NONZERO_Y),),
        )
        for name in ("div", "divide")
    ),
    fn(
        "torch.true_divide",
        signature="input, other, *, out=None",
        args={"input": "dividend", "other": "divisor"},
        positional=2,
        params=[IN, OTHER],
        inputs=NONZERO_Y,
        extra=(case("result = torch.true_divide(i, 2)", {"i": "randint(0, 9, (4,))"}),),
    ),
    fn(
        "torch.pow",
        signature="input, exponent, *, out=None",
        params=[IN, P("exponent", "y")],
        inputs=POSITIVE_XY,
        positional=2,
        extra=(case("result = torch.pow(x, 2)", XY), case("result = torch.pow(2, y)", XY)),
    ),
    fn(
        "torch.float_power",
        signature="input, exponent, *, out=None",
        params=[IN, P("exponent", "y")],
        inputs=POSITIVE_XY,
        positional=2,
    ),
    fn(
        "torch.heaviside",
        signature="input, values, *, out=None",
        params=[IN, P("values", "y")],
        inputs={"x": "tensor([-1.5, 0.0, 2.0, 0.0])", "y": "tensor([0.5, 0.25, 1.0, 3.0])"},
    ),
    fn(
        "torch.lerp",
        signature="input, end, weight, *, out=None",
        # an int weight as a float: MindSpore's Lerp refuses an int ("Lerp()(..., weight=int)")
        args={"weight": Arg(value=int_literal_as_float)},
        params=[IN, P("end", "y"), P("weight", "w")],
        inputs={**XY, "w": "rand(3, 4)"},
        extra=(case("result = torch.lerp(x, y, 0.3)", XY), case("result = torch.lerp(x, y, 0)", XY),
               case("result = torch.lerp(x, y, 1)", XY)),
    ),
    *(
        fn(
            f"torch.{name}",
            signature="input, tensor1, tensor2, *, value=1, out=None",
            params=[IN, P("tensor1", "a"), P("tensor2", "b"), P("value", "0.5", default=True, kind="keyword")],
            inputs={"x": "randn(3, 4)", "a": "randn(3, 4)", "b": "uniform(0.5, 2.0, (3, 4))"},
            positional=3,
        )
        for name in ("addcmul", "addcdiv")
    ),
]
