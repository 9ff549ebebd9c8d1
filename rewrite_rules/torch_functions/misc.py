"""Clamping, closeness tests, rounding and other ``torch.*`` functions with
arguments beyond one or two tensors; tensor predicates."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P
from rewrite_rules.api import Arg, Unconvertible, Unsupported, code_of
from rewrite_rules.tensor.math import LOG_SOFTMAX_INPUTS, LOG_SOFTMAX_NOTE, LOG_SOFTMAX_TOL, equal_of, log_softmax_call
from rewrite_rules.torch_functions.builders import IN, OTHER, X, XY, atom, case, compose, fn, literal, ms

NEAR = {"x": "randn(3, 4)", "y": "tensor([[0.0, 1.0, 2.0, 3.0], [1.0, 1.0, 1.0, 1.0], [0.5, 0.5, 0.5, 0.5]])"}
SPECIAL = {"x": "tensor([1.0, nan, inf, -inf, -2.5])"}
_CLAMP = "input, min=None, max=None, *, out=None"
_BOUNDS = [IN, P("min", "-0.5"), P("max", "0.5", default=True)]


def unique_of(x, call, ctx):
    """The Unique2 kernel behind torch's sorted unique is missing on CPU, and
    ops.unique does not sort: sort, then unique_consecutive; inverse indices
    by searchsorted into the unique values. torch on CPU sorts even with
    sorted=False, so the result is always sorted."""
    flags = {}
    for flag in ("return_inverse", "return_counts"):
        known, value = literal(call, flag)
        if not known:
            raise Unconvertible(f"{flag} through a variable")
        flags[flag] = value
    if call.has("dim") and literal(call, "dim") != (True, None):
        raise Unconvertible("unique with dim= has no MindSpore equivalent")
    ops, x = code_of(ctx.ref("mindspore.ops")), atom(x)
    values = f"{ops}.unique_consecutive({ops}.sort({x}.reshape(-1))[0]"
    if not flags["return_inverse"]:
        return cst.parse_expression(values + (", return_counts=True)" if flags["return_counts"] else ")"))
    inverse = f"{ops}.searchsorted(values, {x})"
    if flags["return_counts"]:
        return cst.parse_expression(f"(lambda values, counts: (values, {inverse}, counts))(*{values}, return_counts=True))")
    return cst.parse_expression(f"(lambda values: (values, {inverse}))({values}))")


def _unique(call, ctx):
    call.result = unique_of(call.get("input"), call, ctx)


def _size(call, ctx):
    call.result = cst.Call(cst.Name("tuple"), [cst.Arg(call.get("sizes"))] if call.has("sizes") else [])


def _equal(call, ctx):
    call.result = equal_of(call.get("input"), call.get("other"), ctx)


def _softmax_dim(call, ctx):
    if not call.has("dim"):
        raise Unconvertible("dim not given: torch picks a legacy implicit dim, MindSpore uses -1; pass dim explicitly")


def _round_decimals(call, ctx):
    known, decimals = literal(call, "decimals")
    if known and decimals == 0:
        call.remove("decimals")
        return
    compose("{ops}.round({input} * 10 ** {decimals}) / 10 ** {decimals}")(call, ctx)


RULES = [
    fn("torch.clamp", signature=_CLAMP, params=_BOUNDS, inputs=X,
       extra=(case("result = torch.clamp(x, min=lo, max=hi)", {"x": "randn(3, 4)", "lo": "uniform(-1, 0, (3, 4))",
                                                                 "hi": "uniform(0, 1, (3, 4))"}),
              case("result = torch.clamp(i, 0, 3)", {"i": "randint(-5, 6, (3, 4))"}))),
    fn("torch.clip", signature=_CLAMP, params=_BOUNDS, inputs=X),
    fn("torch.clamp_min", ms("clamp"), "input, min", args={"min": "min"}, params=[IN, P("min", "0.2")], inputs=X,
       positional=2),
    fn("torch.clamp_max", ms("clamp"), "input, max", params=[IN, P("max", "0.2")], inputs=X, positional=1),
    fn("torch.isclose", signature="input, other, rtol=1e-05, atol=1e-08, equal_nan=False",
       params=[IN, OTHER, P("rtol", "0.1", default=True), P("atol", "0.5", default=True), P("equal_nan", "True", default=True)],
       inputs=NEAR),
    fn("torch.allclose", ms("isclose"), "input, other, rtol=1e-05, atol=1e-08, equal_nan=False",
       params=[IN, OTHER, P("rtol", "0.1", default=True), P("atol", "3.0", default=True), P("equal_nan", "True", default=True)],
       hook=compose("bool({ops}.isclose({input}, {other}, {rtol}, {atol}, {equal_nan}).all())"), inputs=NEAR,
       notes="as bool(isclose(...).all()): MindSpore has no allclose function.",
       extra=(case("result = torch.allclose(x, x + 1e-9)", X), case("result = torch.allclose(x, y)", XY))),
    fn("torch.equal", ms("equal"), "input, other", params=[IN, OTHER], inputs=XY,
       hook=_equal,
       notes="torch.equal is one bool; MindSpore's equal is element-wise.",
       extra=(case("result = torch.equal(x, x)", X), case("result = torch.equal(x, x[:2])", X))),
    fn("torch.round", signature="input, *, decimals=0, out=None", params=[IN, P("decimals", "2", default=True, kind="keyword")],
       inputs={"x": "uniform(-3, 3, (3, 4))"}, hook=_round_decimals,
       notes="decimals != 0 as round(x * 10**d) / 10**d: MindSpore's CPU kernel only rounds to integers."),
    fn("torch.logit", signature="input, eps=None, *, out=None", params=[IN, P("eps", "0.1", default=True)],
       inputs={"x": "rand(3, 4)"}, rtol=1e-4, atol=1e-5),
    fn("torch.nan_to_num", signature="input, nan=0.0, posinf=None, neginf=None, *, out=None",
       args={"nan": Arg(explicit=True)},
       params=[IN, P("nan", "1.5", default=True), P("posinf", "9.0", default=True), P("neginf", "-9.0", default=True)],
       inputs=SPECIAL, notes="nan is always written: MindSpore's default is None."),
    fn("torch.relu", signature="input", inputs=X),
    fn("torch.softmax", signature="input, dim=None, dtype=None", args={"dim": "axis"},
       params=[IN, P("dim", "1")], positional=3, hook=_softmax_dim, inputs=X, rtol=1e-5, atol=1e-6,
       extra=(case("result = torch.softmax(x, -1, dtype=torch.float64)", X),)),
    fn("torch.log_softmax", None, signature="input, dim=None, dtype=None", notes=LOG_SOFTMAX_NOTE,
       params=[IN, P("dim", "1"), P("dtype", "torch.float64", default=True)], inputs=X,
       hook=log_softmax_call, **LOG_SOFTMAX_TOL,
       # float64: MindSpore's kernel has float32 precision (measured ~3e-6 abs off torch's float64)
       extra=(case("result = torch.log_softmax(x.double(), -1)", LOG_SOFTMAX_INPUTS, **LOG_SOFTMAX_TOL),)),
    fn("torch.polygamma", signature="n, input, *, out=None", params=[P("n", "1"), IN], inputs={"x": "uniform(0.5, 3, (3, 4))"},
       hook=compose("{ops}.polygamma({ms}.Tensor({n}), {input})"), notes="n is passed as a Tensor, as MindSpore requires.",
       rtol=1e-4, atol=1e-5),
    fn("torch.mvlgamma", signature="input, p, *, out=None", params=[IN, P("p", "2")], inputs={"x": "uniform(1.0, 3, (3, 4))"},
       rtol=1e-4, atol=1e-5),
    fn("torch.dist", ms("vector_norm"), "input, other, p=2", params=[IN, OTHER, P("p", "3.0", default=True)], inputs=XY,
       hook=compose("{ops}.vector_norm({input} - {other}, {p})"), rtol=1e-4,
       notes="as vector_norm(input - other, p): MindSpore's dist takes only an int p."),
    fn("torch.cosine_similarity", signature="x1, x2, dim=1, eps=1e-08",
       params=[P("x1", "x"), P("x2", "y"), P("dim", "0", default=True), P("eps", "1e-6", default=True)], inputs=XY, rtol=1e-4,
       atol=1e-5),
    fn("torch.pdist", signature="input, p=2", params=[IN, P("p", "1.0", default=True)], inputs=X, rtol=1e-4, atol=1e-5),
    fn("torch.unique", signature="input, sorted=True, return_inverse=False, return_counts=False, dim=None",
       params=[IN, P("sorted", "True", default=True), P("return_inverse", "True", default=True),
               P("return_counts", "True", default=True)], hook=_unique, inputs={"x": "randint(0, 6, (10,))"},
       marked={"variables": "return_inverse through a variable"},
       notes="sort, then ops.unique_consecutive (Unique2 has no CPU kernel and ops.unique does not sort); "
             "inverse indices by searchsorted",
       extra=(case("result = torch.unique(x)", {"x": "randint(0, 6, (3, 4))"}),
              case("result = torch.unique(x, sorted=False)", {"x": "tensor([3, 1, 2, 3, 1, 5, 0])"}),
              case("result = torch.unique(x, return_inverse=True)", {"x": "randint(0, 6, (3, 4))"}),
              case("result = torch.unique(x, return_counts=True)", {"x": "randn(5)"}))),
    fn("torch.is_tensor", signature="obj", params=[P("obj", "x", kind="positional")], inputs=X, extra=(case("result = torch.is_tensor(3)"),)),
    fn("torch.is_floating_point", signature="input", inputs=X,
       extra=(case("result = torch.is_floating_point(i)", {"i": "randint(0, 3, (2,))"}),)),
    fn("torch.is_complex", signature="input", inputs=X),
    fn("torch.is_nonzero", signature="input", inputs={"x": "tensor([1.5])"},
       extra=(case("result = torch.is_nonzero(x)", {"x": "tensor([0.0])"}),)),
    fn("torch.Size", None, "sizes=()", params=[P("sizes", "[2, 3]", kind="positional")], inputs={}, hook=_size,
       notes="a tuple: MindSpore shapes are tuples",
       extra=(case("result = torch.Size()"), case("result = torch.Size(x.shape)", X))),
]
