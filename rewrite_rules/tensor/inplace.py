"""In-place Tensor methods (``x.add_(y)``, ``x.zero_()`` ...).

On CPU MindSpore's in-place methods return the new value but leave the tensor
unchanged, or have no kernel. Each becomes an assignment of the out-of-place
value (``x = x.add(y)``; ``ops.assign(obj.attr, ...)`` for attributes, which
may be Parameters; ``x[i] = ...`` for items). The out-of-place form is
converted by its own rule, so its argument handling is shared.

Random fills (uniform_, normal_, bernoulli_, exponential_) are compared by
value: the harness replays torch's draws to MindSpore's random ops
(``transpiler.proof.replay``), so a wrong bound, mean, std, probability or
rate gives other values.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P, call_cases, marking
from rewrite_rules.helpers import GENERATOR, REQUIRES_GRAD
from rewrite_rules.api import Drop, Example, InPlace, MethodRule, Unconvertible, in_forward
from rewrite_rules.tensor.binding import atom, code_of, expr, in_place, method
from rewrite_rules.tensor.math import TANH_RANGE

X = {"x": "randn(3, 4)"}
XY = {"x": "randn(3, 4)", "y": "randn(3, 4)"}
RANDOM = {"x": "zeros(30, 40)"}  # filled at random: the values are the draws
IDX = {"x": "randn(3, 4)", "y": "randn(3, 4)", "i": "randint(0, 3, (2,))"}


def in_place_cases(statement: str, params, inputs=XY, marked: dict | None = None, **kw):
    """The in-place statement, then the receiver is the result. ``marked``:
    call shapes that must carry a marker (see cases.marking)."""
    return marking(call_cases(statement + "\nresult = x", params, inputs, **kw), marked or {})


def _value(make):
    """A method rule whose hook computes the new receiver value itself."""

    def hook(bound, call, ctx):
        bound.result = InPlace(make(bound, call, ctx))

    return hook


def _zero(bound, call, ctx):
    return cst.Call(ctx.ref("mindspore.ops.zeros_like"), [cst.Arg(call.receiver)])


def _fill(bound, call, ctx):
    return cst.Call(ctx.ref("mindspore.ops.full_like"), [cst.Arg(call.receiver), cst.Arg(bound.get("value"))])


def _copy(bound, call, ctx):
    """torch copies with broadcasting and a cast to the receiver's dtype."""
    x = atom(call.receiver)
    broadcast = code_of(ctx.ref("mindspore.ops.broadcast_to"))
    return expr(f"{broadcast}({code_of(bound.get('other'))}, {x}.shape).astype({x}.dtype)")


def _rand_like(x: str, ctx) -> str:
    """Uniform [0, 1) values of x's shape and dtype: ops.rand (ops.rand_like is deprecated in MindSpore 2.10)."""
    return f"{code_of(ctx.ref('mindspore.ops.rand'))}({x}.shape, dtype={x}.dtype)"


def _uniform(bound, call, ctx):
    x = atom(call.receiver)
    low, high = bound.get("from_") or expr("0.0"), bound.get("to") or expr("1.0")
    return expr(f"{_rand_like(x, ctx)} * ({code_of(high)} - {atom(low)}) + {atom(low)}")


def _normal(bound, call, ctx):
    x = atom(call.receiver)
    randn = code_of(ctx.ref("mindspore.ops.randn_like"))
    mean, std = bound.get("mean"), bound.get("std")
    value = f"{randn}({x})"
    if std is not None:
        value = f"{value} * {atom(std)}"
    if mean is not None:
        value = f"{value} + {atom(mean)}"
    return expr(value)


def bernoulli_of(x: cst.BaseExpression, p: cst.BaseExpression, ctx) -> cst.BaseExpression:
    """BernoulliExt has no CPU kernel: 1 where rand_like(x) < p, in x's dtype."""
    x = atom(x)
    return expr(f"({_rand_like(x, ctx)} < {atom(p)}).astype({x}.dtype)")


def _bernoulli(bound, call, ctx):
    return bernoulli_of(call.receiver, bound.get("p") or expr("0.5"), ctx)


def _exponential(bound, call, ctx):
    x = atom(call.receiver)
    lambd = bound.get("lambd")
    value = f"-(1 - {_rand_like(x, ctx)}).log()"
    return expr(value if lambd is None else f"{value} / {atom(lambd)}")


# Inverse-CDF sampling from rand_like/randn_like would be equal in distribution,
# but these fills cannot be replayed draw for draw, so no case could prove it.
_UNREPLAYED = ("MindSpore has no cauchy_/geometric_/log_normal_; a composition from rand_like would be equal in "
               "distribution only, and torch's draws of this fill cannot be replayed to check it")


def _random(bound, call, ctx):
    """Integers in [from, to) (random_(to): [0, to)); the InplaceRandom kernel is missing on CPU."""
    low, high = bound.get("from_"), bound.get("to")
    if low is None:
        raise Unconvertible("random_() without bounds draws over the dtype's whole range; pass from and to")
    if high is None:
        low, high = expr("0"), low
    x = atom(call.receiver)
    randint = code_of(ctx.ref("mindspore.ops.randint"))
    return expr(f"{randint}({code_of(low)}, {code_of(high)}, {x}.shape).astype({x}.dtype)")


def _bernoulli_of(bound, call, ctx):
    """x.bernoulli(): each element is 1 with probability x (or p)."""
    bound.result = bernoulli_of(call.receiver, bound.get("p") or call.receiver, ctx)


def _random_values(statement: str, params, inputs=RANDOM, rtol=0.0, atol=0.0, **kw):
    """The filled tensor, compared by value (torch's draws replayed).
    Tolerance 0 by default (normal_, bernoulli_: bitwise equal, measured).
    uniform_ is computed in float32 as u * (to - from) + from: within two
    float32 ulps of values up to 3 (max abs 2.4e-7 measured: atol 5e-7).
    exponential_ is -log(1 - u) / lambd from a float32 uniform, whose spacing
    near 1 (6e-8) limits the tail: max rel 4.8e-4 measured on 1,200 draws
    (rtol 1e-3; a wrong lambd is off by 100%)."""
    return call_cases(f"{statement}\nresult = x", params, inputs, rtol=rtol, atol=atol, **kw)


_SAME_ARGS = {
    # name: (template of the in-place call, params, inputs)
    "add_": ("x.add_({args})", [P("other", "y"), P("alpha", "2", True, "keyword")], XY),
    "sub_": ("x.sub_({args})", [P("other", "y"), P("alpha", "2", True, "keyword")], XY),
    "mul_": ("x.mul_({args})", [P("other", "y")], XY),
    "div_": ("x.div_({args})", [P("other", "y"), P("rounding_mode", "'floor'", True, "keyword")], XY),
    "pow_": ("x.pow_({args})", [P("exponent", "2")], X),
    "clamp_": ("x.clamp_({args})", [P("min", "-0.5"), P("max", "0.5", True)], X),
    "clip_": ("x.clip_({args})", [P("min", "-0.5"), P("max", "0.5", True)], X),
    "clamp_min_": ("x.clamp_min_({args})", [P("min", "0.1")], X),
    "clamp_max_": ("x.clamp_max_({args})", [P("max", "0.1")], X),
    "lerp_": ("x.lerp_({args})", [P("end", "y"), P("weight", "0.3")], XY),
    "addcmul_": ("x.addcmul_({args})", [P("tensor1", "y"), P("tensor2", "x"), P("value", "0.5", True, "keyword")], XY),
    "addcdiv_": ("x.addcdiv_({args})", [P("tensor1", "y"), P("tensor2", "x.abs() + 0.5"), P("value", "0.5", True, "keyword")], XY),
    "fmod_": ("x.fmod_({args})", [P("other", "0.7")], X),
    "remainder_": ("x.remainder_({args})", [P("other", "0.7")], X),
    "masked_fill_": ("x.masked_fill_({args})", [P("mask", "y > 0"), P("value", "0.5")], XY),
    "index_fill_": ("x.index_fill_({args})", [P("dim", "0"), P("index", "i"), P("value", "-1.0")], IDX),
    "index_add_": ("x.index_add_({args})", [P("dim", "0"), P("index", "i[:1]"), P("source", "y[:1]")], IDX),
    "scatter_": ("x.scatter_({args})", [P("dim", "1"), P("index", "y.argsort(1)[:, :2]"), P("src", "y[:, :2]")], XY),
    "scatter_add_": ("x.scatter_add_({args})", [P("dim", "1"), P("index", "y.argsort(1)"), P("src", "y")], XY),
    "index_put_": ("x.index_put_({args})", [P("indices", "(i[:1], i[1:] + 1)"), P("values", "y[0, :1]"),
                                          P("accumulate", "True", True)], IDX),
    "transpose_": ("x.transpose_({args})", [P("dim0", "0"), P("dim1", "1")], X),
    "unsqueeze_": ("x.unsqueeze_({args})", [P("dim", "1")], X),
    "squeeze_": ("x.unsqueeze(1).squeeze_({args})", [P("dim", "1")], X),
    "tril_": ("x.tril_({args})", [P("diagonal", "1", True)], X),
    "triu_": ("x.triu_({args})", [P("diagonal", "-1", True)], X),
    "floor_divide_": ("x.floor_divide_({args})", [P("other", "y")], XY),
}
# torch keeps the receiver's dtype; these out-of-place forms give bool.
_TO_BOOL = {
    "logical_not_": ("x.logical_not_()", [], X),
    "eq_": ("x.eq_({args})", [P("other", "y.round()")], XY),
    "ne_": ("x.ne_({args})", [P("other", "y")], XY),
    "lt_": ("x.lt_({args})", [P("other", "y")], XY),
    "le_": ("x.le_({args})", [P("other", "y")], XY),
    "gt_": ("x.gt_({args})", [P("other", "y")], XY),
    "ge_": ("x.ge_({args})", [P("other", "y")], XY),
}
_UNARY = ["abs_", "neg_", "exp_", "expm1_", "sigmoid_", "tanh_", "relu_", "sin_", "cos_", "floor_", "ceil_", "trunc_",
          "frac_", "sign_", "square_", "erf_", "atan_", "t_", "detach_", "round_"]
_POSITIVE = ["sqrt_", "rsqrt_", "log_", "log1p_", "log2_", "reciprocal_"]


def _statement_of(template: str) -> str:
    """``x.unsqueeze(1).squeeze_`` is not an in-place statement on x: such
    templates assign first."""
    if template.startswith("x.unsqueeze(1)."):
        return "x = x.unsqueeze(1)\n" + template.replace("x.unsqueeze(1).", "x.", 1)
    return template


# Receivers other than a plain name: a Parameter attribute (ops.assign), an
# item (setitem; ops.assign refuses views), .data of a tensor.
_RECEIVERS = (
    *call_cases("layer = nn.Linear(4, 2)\nwith torch.no_grad():\n    layer.weight.mul_({args})\nresult = layer(x)",
                [P("other", "0.5")], X, shapes=("positional",), notes="parameter"),
    *call_cases("layer = nn.Linear(4, 2)\nlayer.bias.data.mul_({args})\nresult = layer(x)",
                [P("other", "0.0")], X, shapes=("positional",), notes="parameter_data"),
    *call_cases("x[0].mul_({args})\nresult = x", [P("other", "3.0")], X, shapes=("positional",), notes="item"),
    *call_cases("x[:, 1:3].mul_({args})\nresult = x", [P("other", "3.0")], X, shapes=("positional",), notes="slice"),
    *call_cases("x.data.mul_({args})\nresult = x", [P("other", "3.0")], X, shapes=("positional",), notes="data"),
)

# These change the shape: the name is rebound, the tensor cannot be assigned into.
_RESHAPING = {"transpose_", "unsqueeze_", "squeeze_", "t_"}

_NO_REQUIRES_GRAD = REQUIRES_GRAD.reason
# vector-quantize-pytorch: a loss that starts as a zero buffer is made to require grad while training
_ZERO_LOSS = ("class Quantize(nn.Module):\n"
              "    def __init__(self):\n        super().__init__()\n"
              "        self.proj = nn.Linear(3, 3)\n        self.register_buffer('zero', torch.tensor(0.0))\n\n"
              "    def forward(self, x):\n        loss = self.zero\n        if self.training:\n"
              "            loss.requires_grad_()\n        return self.proj(x).round(), loss\n\n\n"
              "net = Quantize().eval()\n")


def _requires_grad_in_forward(bound, call, ctx):
    if not in_forward(ctx):
        raise Unconvertible(_NO_REQUIRES_GRAD)
    bound.result = call.receiver


RULES = [
    *(in_place(name, rebinds=name in _RESHAPING,
               examples=in_place_cases(_statement_of(t), params, inputs) + (_RECEIVERS if name == "mul_" else ()))
      for name, (t, params, inputs) in _SAME_ARGS.items()),
    *(in_place(name, cast=True, examples=in_place_cases(t, params, inputs)) for name, (t, params, inputs) in _TO_BOOL.items()),
    *(in_place(name, rebinds=name in _RESHAPING, examples=in_place_cases(f"x.{name}()", [], X)) for name in _UNARY if name != "tanh_"),
    in_place("tanh_", examples=(*in_place_cases("x.tanh_()", [], X), *in_place_cases("x.tanh_()", [], TANH_RANGE, shapes=("positional",)),
                                Example("result = x.tanh_()", inputs=TANH_RANGE, results=("result", "x")),
                                Example("result = torch.tensor([0.5, -4.0, 6.0]).tanh_()", inputs={}))),
    *(in_place(name, examples=in_place_cases(f"x = x.abs() + 0.5\nx.{name}()", [], X)) for name in _POSITIVE),
    method("zero_", "", hook=_value(_zero), notes="InplaceZero has no CPU kernel: x = ops.zeros_like(x)",
           examples=in_place_cases("x.zero_()", [], X)),
    method("fill_", "value", hook=_value(_fill), notes="InplaceFillScalar has no CPU kernel: x = ops.full_like(x, value)",
           examples=(*in_place_cases("x.fill_({args})", [P("value", "2.5")], X),
                     *in_place_cases("x.fill_({args})", [P("value", "y.sum()")], XY, shapes=("positional",)))),
    method("copy_", "other, non_blocking=False", hook=_value(_copy), args={"non_blocking": Drop("no asynchronous copies")},
           notes="broadcast to the receiver's shape and cast to its dtype, as torch copies",
           examples=(*in_place_cases("x.copy_({args})", [P("other", "y")], XY),
                     *in_place_cases("x.copy_({args})", [P("other", "y[0].long()")], XY, shapes=("positional",)))),
    method("uniform_", "from_=0.0, to=1.0, *, generator=None", hook=_value(_uniform),
           args={"generator": GENERATOR},
           notes="x = ops.rand(x.shape, dtype=x.dtype) * (to - from) + from (the in-place kernels are missing on CPU); torch's first "
                 "parameter is named `from`, a Python keyword, so it is only ever passed by position",
           examples=_random_values("x.uniform_({args})", [P("from_", "-2.0", True), P("to", "3.0", True)],
                                   shapes=("positional", "defaults", "variables"), atol=5e-7)),
    method("normal_", "mean=0.0, std=1.0, *, generator=None", hook=_value(_normal), args={"generator": GENERATOR},
           notes="x = ops.randn_like(x) * std + mean (the in-place kernels are missing on CPU)",
           examples=_random_values("x.normal_({args})", [P("mean", "0.5", True), P("std", "2.0", True)])),
    method("bernoulli_", "p=0.5, *, generator=None", hook=_value(_bernoulli), args={"generator": GENERATOR},
           notes="BernoulliExt has no CPU kernel: (rand_like(x) < p)",
           examples=(*_random_values("x.bernoulli_({args})", [P("p", "0.3", True)]),
                     *_random_values("x.bernoulli_({args})", [P("p", "q")], {**RANDOM, "q": "rand(30, 40)"},
                                     shapes=("positional",), notes="probability_tensor"))),
    method("exponential_", "lambd=1.0, *, generator=None", hook=_value(_exponential), args={"generator": GENERATOR},
           notes="inverse-CDF sampling from rand_like: -log(1 - u) / lambd",
           examples=_random_values("x.exponential_({args})", [P("lambd", "2.0", True)], rtol=1e-3, atol=1e-6)),
    *(MethodRule(name, notes=_UNREPLAYED, examples=(Example(f"x = x * 2\nx.{name}()", marked="has no cauchy_"),))
      for name in ("cauchy_", "geometric_", "log_normal_")),
    method("random_", "from_=None, to=None, *, generator=None", hook=_value(_random), args={"generator": GENERATOR},
           notes="ops.randint(from, to, x.shape) cast to x's dtype (InplaceRandom has no CPU kernel); torch's first "
                 "parameter is named `from`, a Python keyword, so it is only ever passed by position",
           examples=(*_random_values("x.random_({args})", [P("from_", "3"), P("to", "8")], shapes=("positional", "variables")),
                     *_random_values("x.random_({args})", [P("to", "4")], {"x": "zeros(30, 40, dtype='int32')"},
                                     shapes=("positional",), notes="int32"),
                     Example("x = x * 2\nx.random_()", marked="whole range"))),
    method("bernoulli", "p=None, *, generator=None", hook=_bernoulli_of, args={"generator": GENERATOR},
           notes="BernoulliExt has no CPU kernel: (rand_like(x) < p), p the input itself unless given",
           examples=(*call_cases("result = x.bernoulli({args})", [P("p", "0.3", True)], {"x": "rand(30, 40)"}, rtol=0.0, atol=0.0),
                     Example("result = x.bernoulli()", inputs={"x": "tensor([[0.0, 1.0], [1.0, 0.0]])"}))),
    method("requires_grad_", "requires_grad=True", hook=_requires_grad_in_forward,
           notes="in a Cell's forward the tensor itself (MindSpore differentiates construct as a whole); elsewhere "
                 "marked: " + _NO_REQUIRES_GRAD,
           examples=(Example("x = x * 2\nx.requires_grad_()", marked="requires_grad"),
                     Example(_ZERO_LOSS + "result = net(x)", inputs={"x": "randn(4, 3)"}),
                     Example(_ZERO_LOSS + "result = net.train()(x)", inputs={"x": "randn(4, 3)"}))),
]
