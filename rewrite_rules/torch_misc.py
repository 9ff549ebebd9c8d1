"""Clamping, closeness tests, rounding and other ``torch.*`` functions with
arguments beyond one or two tensors; tensor predicates."""

from __future__ import annotations

from rewrite_rules.cases import P
from rewrite_rules.spec import Arg, Unconvertible, Unsupported
from rewrite_rules.tensor_math import equal_of
from rewrite_rules.torch_builders import IN, OTHER, X, XY, case, compose, fn, literal, ms

NEAR = {"x": "randn(3, 4)", "y": "tensor([[0.0, 1.0, 2.0, 3.0], [1.0, 1.0, 1.0, 1.0], [0.5, 0.5, 0.5, 0.5]])"}
SPECIAL = {"x": "tensor([1.0, nan, inf, -inf, -2.5])"}
_CLAMP = "input, min=None, max=None, *, out=None"
_BOUNDS = [IN, P("min", "-0.5"), P("max", "0.5", default=True)]


def _unique(call, ctx):
    """MindSpore's unique does not sort; torch sorts by default."""
    for flag in ("return_inverse", "return_counts"):
        known, value = literal(call, flag)
        if not known or value:
            raise Unconvertible(f"{flag}=True: MindSpore's unique returns the indices of its unsorted output")
    if call.has("dim") and literal(call, "dim") != (True, None):
        raise Unconvertible("unique with dim= has no MindSpore equivalent")
    known, sort = literal(call, "sorted")
    if not known:
        raise Unconvertible("sorted through a variable")
    compose("{ops}.sort({ops}.unique({input})[0])[0]" if sort else "{ops}.unique({input})[0]")(call, ctx)


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
    fn("torch.log_softmax", signature="input, dim=None, dtype=None",
       args={"input": "logits", "dim": "axis", "dtype": Unsupported("cast the input first")},
       params=[IN, P("dim", "1")], positional=2, hook=_softmax_dim, inputs=X, rtol=1e-5, atol=1e-5),
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
       params=[IN, P("sorted", "True", default=True)], hook=_unique, inputs={"x": "randint(0, 6, (10,))"},
       marked={"variables": "sorted through a variable"},
       notes="sorted after MindSpore's unique (which does not sort); return_inverse/return_counts are marked."),
    fn("torch.is_tensor", signature="obj", params=[P("obj", "x", kind="positional")], inputs=X, extra=(case("result = torch.is_tensor(3)"),)),
    fn("torch.is_floating_point", signature="input", inputs=X,
       extra=(case("result = torch.is_floating_point(i)", {"i": "randint(0, 3, (2,))"}),)),
    fn("torch.is_complex", signature="input", inputs=X),
    fn("torch.is_nonzero", signature="input", inputs={"x": "tensor([1.5])"},
       extra=(case("result = torch.is_nonzero(x)", {"x": "tensor([0.0])"}),)),
]
