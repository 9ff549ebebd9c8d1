"""In-place forms of math methods that MindSpore's Tensor lacks (``x.acos_()``,
``x.cumsum_(1)``, ``x.addmm_(a, b)`` ...) or that have no CPU kernel there
(InplaceAddmm, InplaceErfinv, InplaceIndexCopy, InplaceMaskedScatter).

Each becomes an assignment of the out-of-place value, converted by its own
rule (see ``tensor_binding.in_place``); comparisons and logical operations
are cast back to the receiver's dtype, as torch keeps it.
"""

from __future__ import annotations

from rewrite_rules.cases import P
from rewrite_rules.tensor.binding import in_place
from rewrite_rules.tensor.inplace import XY, X, in_place_cases

UNIT = {"x": "uniform(0.05, 0.95, (3, 4))", "y": "randn(3, 4)"}  # acos, atanh, erfinv, logit
POSITIVE = {"x": "uniform(0.5, 3.0, (3, 4))", "y": "uniform(0.5, 3.0, (3, 4))"}
ABOVE_ONE = {"x": "uniform(1.1, 3.0, (3, 4))"}
INTS = {"x": "randint(-8, 9, (3, 4))", "y": "randint(1, 9, (3, 4))"}
SHIFTS = {"x": "randint(-64, 64, (3, 4))", "y": "randint(0, 4, (3, 4))"}
BOOLS = {"x": "bool(3, 4)", "y": "bool(3, 4)"}
COMPLEX = {"x": "tensor([[1 + 2j, 3 - 1j], [0.5j, 2 + 0j]], dtype='complex128')"}
SPECIAL = {"x": "tensor([1.0, nan, inf, -inf, -2.5])"}
MATS = {"x": "randn(3, 4)", "a": "randn(3, 5)", "b": "randn(5, 4)", "v": "randn(5)", "u": "randn(3)", "w": "randn(4)",
        "p": "randn(2, 3, 5)", "q": "randn(2, 5, 4)", "z": "randn(2, 3, 4)"}
_SCALES = [P("beta", "0.5", True, "keyword"), P("alpha", "2.0", True, "keyword")]

_UNARY = {
    "absolute_": X, "arctan_": X, "asinh_": X, "arcsinh_": X, "cosh_": X, "sinh_": X, "tan_": X, "deg2rad_": X,
    "rad2deg_": X, "erfc_": X, "i0_": X, "negative_": X, "sgn_": X, "sinc_": X, "fix_": X, "exp2_": X,
    "acos_": UNIT, "arccos_": UNIT, "asin_": UNIT, "arcsin_": UNIT, "atanh_": UNIT, "arctanh_": UNIT, "erfinv_": UNIT,
    "logit_": UNIT, "digamma_": POSITIVE, "lgamma_": POSITIVE, "log10_": POSITIVE, "acosh_": ABOVE_ONE,
    "arccosh_": ABOVE_ONE, "nan_to_num_": SPECIAL, "conj_physical_": COMPLEX, "bitwise_not_": INTS,
}

_WITH_ARGS = {
    # name: (params, inputs)
    "atan2_": ([P("other", "y")], XY),
    "arctan2_": ([P("other", "y")], XY),
    "copysign_": ([P("other", "y")], XY),
    "hypot_": ([P("other", "y")], XY),
    "nextafter_": ([P("other", "y")], XY),
    "heaviside_": ([P("values", "y")], XY),
    "multiply_": ([P("other", "y")], XY),
    "true_divide_": ([P("other", "y")], XY),
    "divide_": ([P("other", "y"), P("rounding_mode", "'floor'", True, "keyword")], XY),
    "subtract_": ([P("other", "y"), P("alpha", "2", True, "keyword")], XY),
    "xlogy_": ([P("other", "y")], POSITIVE),
    "igamma_": ([P("other", "y")], POSITIVE),
    "igammac_": ([P("other", "y")], POSITIVE),
    "ldexp_": ([P("other", "y.round()")], XY),
    "gcd_": ([P("other", "y")], INTS),
    "lcm_": ([P("other", "y")], INTS),
    "bitwise_and_": ([P("other", "y")], INTS),
    "bitwise_or_": ([P("other", "y")], INTS),
    "bitwise_xor_": ([P("other", "y")], INTS),
    "bitwise_left_shift_": ([P("other", "y")], SHIFTS),
    "bitwise_right_shift_": ([P("other", "y")], SHIFTS),
    "cumsum_": ([P("dim", "1")], X),
    "cumprod_": ([P("dim", "0")], X),
    "mvlgamma_": ([P("p", "2")], {"x": "uniform(1.5, 4.0, (3, 4))"}),
    "polygamma_": ([P("n", "1")], POSITIVE),
    "renorm_": ([P("p", "2"), P("dim", "0"), P("maxnorm", "1.0")], X),
    "addmm_": ([P("mat1", "a"), P("mat2", "b"), *_SCALES], MATS),
    "addmv_": ([P("mat", "a"), P("vec", "v"), *_SCALES], {**MATS, "x": "randn(3)"}),
    "addr_": ([P("vec1", "u"), P("vec2", "w"), *_SCALES], MATS),
    "addbmm_": ([P("batch1", "p"), P("batch2", "q"), *_SCALES], MATS),
    "baddbmm_": ([P("batch1", "p"), P("batch2", "q"), *_SCALES], {**MATS, "x": "randn(2, 3, 4)"}),
    "masked_scatter_": ([P("mask", "y > 0"), P("source", "y * 10")], XY),
    "index_copy_": ([P("dim", "0"), P("index", "torch.tensor([2, 0])"), P("source", "y[:2]")], XY),
    "put_": ([P("index", "torch.tensor([1, -2, 5])"), P("source", "torch.tensor([9.0, 8.0, 7.0])"),
              P("accumulate", "True", True)], X),
    "scatter_reduce_": ([P("dim", "1"), P("index", "i"), P("src", "y"), P("reduce", "'sum'")],
                        {**XY, "i": "randint(0, 4, (3, 2))"}),
}
# torch keeps the receiver's dtype; the out-of-place forms give bool.
_TO_BOOL = {
    "greater_": XY, "greater_equal_": XY, "less_": XY, "less_equal_": XY, "not_equal_": XY,
    "logical_and_": XY, "logical_or_": XY, "logical_xor_": XY,
}
# Literal arguments only (the out-of-place rule evaluates them while converting).
_LITERAL_ONLY = {"scatter_reduce_": "must be literals"}

RULES = [
    *(in_place(name, examples=in_place_cases(f"x.{name}()", [], inputs)) for name, inputs in _UNARY.items()),
    *(in_place(name, examples=in_place_cases(f"x.{name}({{args}})", params, inputs,
                                             marked={"variables": _LITERAL_ONLY[name]} if name in _LITERAL_ONLY else None))
      for name, (params, inputs) in _WITH_ARGS.items()),
    *(in_place(name, cast=True, examples=in_place_cases(f"x.{name}({{args}})", [P("other", "y")], inputs))
      for name, inputs in _TO_BOOL.items()),
    in_place("float_power_", examples=in_place_cases("x = x.double()\nx.float_power_({args})", [P("exponent", "2")], X)),
    *(in_place(name, rebinds=True, examples=in_place_cases(f"x.{name}({{args}})", [P(first, "0"), P(second, "1")], X))
      for name, first, second in (("swapaxes_", "axis0", "axis1"), ("swapdims_", "dim0", "dim1"))),
]
