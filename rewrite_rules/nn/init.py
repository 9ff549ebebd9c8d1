"""torch.nn.init.* -> mindspore.common.initializer applied to the tensor.

``nn.init.xavier_uniform_(layer.weight, gain=2.0)`` becomes
``layer.weight.set_data(initializer(XavierUniform(gain=2.0), layer.weight.shape, layer.weight.dtype))``
for attributes (Parameters), and ``ops.assign(w, initializer(...).init_data())``
for names (plain tensors have no set_data; an initializer tensor is
lazy until init_data()).

Distributions were checked against torch: MindSpore's Xavier/He initialisers
compute fans like torch (conv weights included), ``Normal(sigma, mean)`` and
``TruncatedNormal(sigma, mean, a, b)`` take their parameters in another order
(written as keywords here; the truncation bounds are absolute in both), and
``Uniform(scale)`` is symmetric, so ``uniform_(a, b)`` is shifted by
``(a + b) / 2``. The rule cases compare every initializer by value: the
harness replays torch's random draws to MindSpore's initializers
(``transpiler.proof.replay``), so a wrong gain, fan, mode, mean, std or bound
gives other values. Tolerances are measured (see each rule's cases).
"""

from __future__ import annotations

import math

import libcst as cst

from rewrite_rules.cases import P, call_cases
from rewrite_rules.helpers import GENERATOR
from rewrite_rules.api import ApiRule, Example, Unconvertible, define
from rewrite_rules.tensor.binding import atom, code_of, expr, keyword, literal


_INIT = "mindspore.common.initializer"
_HE_NONLINEARITIES = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                      "conv_transpose3d", "sigmoid", "tanh", "relu", "leaky_relu")


_FRESH = ("mindspore.ops.zeros", "mindspore.ops.ones", "mindspore.ops.randn", "mindspore.ops.rand")


def _fresh(target: cst.BaseExpression, ctx):
    """(shape, dtype) of a tensor made in the call itself (``torch.empty(3, 5)``,
    converted to ``ops.zeros((3, 5))``), or None."""
    if not isinstance(target, cst.Call) or not target.args or target.args[0].keyword is not None:
        return None
    if code_of(target.func) not in {code_of(ctx.ref(name)) for name in _FRESH}:
        return None
    dtype = next((a.value for a in target.args if a.keyword is not None and a.keyword.value == "dtype"), None)
    return target.args[0].value, dtype or ctx.ref("mindspore.float32")


def _apply(call, ctx, initializer: cst.BaseExpression, shift: cst.BaseExpression | None = None) -> None:
    """Set ``call.result`` to the statement that fills the tensor argument
    (and returns it, as torch's initialisers do)."""
    target = call.get("tensor")
    fresh = _fresh(target, ctx)
    if fresh is not None:  # nobody else holds the tensor: the result is the initialised value
        value = cst.Call(cst.Attribute(cst.Call(ctx.ref(f"{_INIT}.initializer"), [cst.Arg(initializer), cst.Arg(fresh[0]),
                                                                                    cst.Arg(fresh[1])]),
                                       cst.Name("init_data")), [])
        call.result = value if shift is None else expr(f"{code_of(value)} + {atom(shift)}")
        return
    target = _stored(_shared(call, ctx, target))
    base = _reshaped(target)
    if base is not None:  # a view of the tensor: fill one of the view's shape, laid back out in the tensor's
        value = cst.Call(cst.Attribute(cst.Call(ctx.ref(f"{_INIT}.initializer"), [
            cst.Arg(initializer), cst.Arg(cst.Attribute(target, cst.Name("shape"))),
            cst.Arg(cst.Attribute(base, cst.Name("dtype")))]), cst.Name("init_data")), [])
        if shift is not None:
            value = expr(f"({code_of(value)} + {atom(shift)})")
        value = cst.Call(cst.Attribute(value, cst.Name("reshape")), [cst.Arg(cst.Attribute(base, cst.Name("shape")))])
        if isinstance(base, cst.Attribute):
            call.result = cst.Call(cst.Attribute(base, cst.Name("set_data")), [cst.Arg(value)])
        else:
            call.result = cst.Call(ctx.ref("mindspore.ops.assign"), [cst.Arg(base), cst.Arg(value)])
        return
    if not isinstance(target, (cst.Name, cst.Attribute)):
        raise Unconvertible("apply the initializer to a named tensor or parameter (its shape and dtype are needed)")
    value: cst.BaseExpression = cst.Call(
        ctx.ref(f"{_INIT}.initializer"),
        [cst.Arg(initializer), cst.Arg(cst.Attribute(target, cst.Name("shape"))), cst.Arg(cst.Attribute(target, cst.Name("dtype")))],
    )
    if isinstance(target, cst.Attribute) and shift is None:
        call.result = cst.Call(cst.Attribute(target, cst.Name("set_data")), [cst.Arg(value)])
        return
    value = cst.Call(cst.Attribute(value, cst.Name("init_data")), [])
    if shift is not None:
        value = expr(f"{code_of(value)} + {atom(shift)}")
    if isinstance(target, cst.Attribute):
        call.result = cst.Call(cst.Attribute(target, cst.Name("set_data")), [cst.Arg(value)])
    else:
        call.result = cst.Call(ctx.ref("mindspore.ops.assign"), [cst.Arg(target), cst.Arg(value)])


# torch functions whose result, without dtype or device, is their tensor argument itself
_SHARING = ("torch.as_tensor", "torch.asarray")


def _shared(call, ctx, target: cst.BaseExpression) -> cst.BaseExpression:
    """``w`` for ``torch.as_tensor(w)`` (monai's DenseNet initialises ``torch.as_tensor(m.weight)``):
    as_tensor returns w itself, which torch's initialiser fills."""
    source = call.source
    written = None
    if source is not None:
        written = next((a.value for a in source.args if a.keyword is not None and a.keyword.value == "tensor"), None)
        if written is None and source.args and source.args[0].keyword is None and not source.args[0].star:
            written = source.args[0].value
    if (isinstance(written, cst.Call) and ctx.analysis.qualified(written.func) in _SHARING
            and len(written.args) == 1 and written.args[0].keyword is None and not written.args[0].star
            and isinstance(target, cst.Call) and len(target.args) == 1 and target.args[0].keyword is None):
        return target.args[0].value
    return target


def _stored(target: cst.BaseExpression) -> cst.BaseExpression:
    """``w`` for ``w.data``: w.data is w's storage in torch; MindSpore's Parameter.data is a Tensor without set_data."""
    while isinstance(target, cst.Attribute) and target.attr.value == "data" and isinstance(target.value, (cst.Name, cst.Attribute)):
        target = target.value
    return target


# methods giving a view of a tensor with its elements in the same (row-major) order
_RESHAPES = ("view", "reshape", "flatten")


def _reshaped(target: cst.BaseExpression) -> cst.BaseExpression | None:
    """The named tensor ``w`` when ``target`` is ``w.view(...)`` (``.reshape``,
    ``.flatten``; ``w.data.view(...)`` too): torch fills the view, so the
    tensor's own elements change, laid out as the view's."""
    if isinstance(target, cst.Call) and isinstance(target.func, cst.Attribute) and target.func.attr.value in _RESHAPES:
        base = _stored(target.func.value)
        if isinstance(base, (cst.Name, cst.Attribute)):
            return base
    return None


def _init(ctx, name: str, *args: cst.Arg) -> cst.Call:
    return cst.Call(ctx.ref(f"{_INIT}.{name}"), list(args))


def _from(call, name: str, default: str) -> cst.BaseExpression:
    return call.get(name, default)


def _simple(init_name: str, *params: tuple[str, str, str]):
    """An initializer whose parameters map one to one: (torch, ms keyword, torch default)."""

    def hook(call, ctx):
        args = [keyword(ms, _from(call, torch, default)) for torch, ms, default in params if call.has(torch) or default]
        _apply(call, ctx, _init(ctx, init_name, *args))

    return hook


def _uniform(call, ctx):
    low, high = _from(call, "a", "0.0"), _from(call, "b", "1.0")
    try:
        lo, hi = float(literal(low)), float(literal(high))
        scale, shift = expr(repr((hi - lo) / 2)), (expr(repr((hi + lo) / 2)) if hi + lo != 0 else None)
    except (ValueError, TypeError):
        scale = expr(f"({code_of(high)} - {atom(low)}) / 2")
        shift = expr(f"({code_of(high)} + {atom(low)}) / 2")
    _apply(call, ctx, _init(ctx, "Uniform", keyword("scale", scale)), shift)


def _kaiming(init_name: str):
    def hook(call, ctx):
        nonlinearity = _from(call, "nonlinearity", "'leaky_relu'")
        try:
            value = literal(nonlinearity)
        except ValueError:
            # its value is not known here; MindSpore takes fewer than torch (no 'selu')
            raise Unconvertible(f"nonlinearity given through a variable: MindSpore's {init_name} takes only "
                                f"{', '.join(map(repr, _HE_NONLINEARITIES))} (torch also 'selu'); "
                                "write the value as a literal") from None
        if value not in _HE_NONLINEARITIES:
            raise Unconvertible(f"nonlinearity {value!r} is not supported by MindSpore's {init_name}")
        args = [keyword("negative_slope", _from(call, "a", "0")), keyword("mode", _from(call, "mode", "'fan_in'")),
                keyword("nonlinearity", nonlinearity)]
        _apply(call, ctx, _init(ctx, init_name, *args))

    return hook


def _gain(nonlinearity: str, param) -> float:
    """torch.nn.init.calculate_gain, evaluated at conversion time."""
    if nonlinearity in _HE_NONLINEARITIES[:7] or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise Unconvertible(f"unsupported nonlinearity {nonlinearity!r}")


# torch.nn.init.calculate_gain for arguments known only at run time (MindSpore has no public one)
_CALCULATE_GAIN = """
def {name}(nonlinearity, param=None):
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                        "conv_transpose3d", "sigmoid"):
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return SQRT(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            param = 0.01
        elif isinstance(param, bool) or not isinstance(param, (int, float)):
            raise ValueError(f"negative_slope {{param}} not a valid number")
        return SQRT(2.0 / (1 + param**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {{nonlinearity}}")
"""


def _calculate_gain(call, ctx):
    try:
        nonlinearity, param = literal(call.get("nonlinearity")), literal(call.get("param"), None)
    except ValueError:  # known at run time only: torch's function, written above the file's code
        source = _CALCULATE_GAIN.replace("SQRT", code_of(ctx.ref("math.sqrt")))
        call.result = cst.Call(define(ctx, "calculate_gain", source),
                               [cst.Arg(call.get("nonlinearity")), *([cst.Arg(call.get("param"))] if call.has("param") else [])])
        return
    call.result = expr(repr(_gain(nonlinearity, param)))


def _fans(call, ctx):
    """(fan_in, fan_out) from the shape, as torch computes them: input and
    output feature maps times the receptive field (the product of the
    remaining dimensions; 1 for a matrix)."""
    tensor = call.get("tensor")
    if not isinstance(tensor, (cst.Name, cst.Attribute)):
        raise Unconvertible("the tensor is read three times in the MindSpore form; assign it to a variable first")
    shape, prod = f"{code_of(tensor)}.shape", code_of(ctx.ref("math.prod"))
    call.result = expr(f"({shape}[1] * {prod}({shape}[2:]), {shape}[0] * {prod}({shape}[2:]))")


def _literal_nonlinearity(examples, name: str):
    """The call shape that passes every argument through a variable is marked:
    a nonlinearity whose value is not written out is not converted."""
    variable = Example(f"v_nonlinearity = 'relu'\nnn.init.{name}(w, nonlinearity=v_nonlinearity)", marked="through a variable")
    literal_with_variables = _values(f"v_a = 0.1\nv_mode = 'fan_out'\nnn.init.{name}({{args}})",
                                     [P("tensor", "w"), P("a", "v_a"), P("mode", "v_mode"), P("nonlinearity", "'relu'")],
                                     CONV_W, shapes=("keywords",), notes="literal_nonlinearity")
    return (*(e for e in examples if e.notes != "variables"), variable, *literal_with_variables)


def _values(statement: str, params, inputs, *, target="w", rtol=0.0, atol=0.0, notes="", **kw):
    """The initialised tensor, compared by value (torch's draws replayed).
    Tolerance 0 by default: MindSpore's initializers compute in float64 from
    torch's float32 draws, so the values are bitwise equal (measured). A
    forward pass through the layer differs by the matmul's rounding (max abs
    2.4e-7 measured: rtol/atol 1e-6); orthogonal differs by the QR
    factorisation's rounding (numpy's vs torch's LAPACK call; max abs 4.9e-7
    measured: atol 1e-6)."""
    return call_cases(f"{statement}\nresult = {target}", params, inputs, rtol=rtol, atol=atol, notes=notes, **kw)


CONV_W = {"w": "zeros(16, 8, 3, 3)"}
MATRIX_W = {"w": "zeros(40, 50)"}
LAYER = {"x": "randn(2, 30)"}


# How each initialiser's result is checked when the caller uses the returned
# tensor: (shape, extra arguments, check of ``w`` in torch terms).
_RETURNED = {
    "xavier_uniform_": ("40, 50", "", "w"), "xavier_normal_": ("40, 50", "", "w"), "kaiming_uniform_": ("40, 50", "", "w"),
    "kaiming_normal_": ("40, 50", "", "w"), "normal_": ("40, 50", "", "w"), "trunc_normal_": ("40, 50", "", "w"),
    "uniform_": ("40, 50", "", "w"),
    "constant_": ("3, 4", ", 0.25", "w"), "zeros_": ("3, 4", "", "w"), "ones_": ("3, 4", "", "w"),
    "eye_": ("3, 5", "", "w"), "dirac_": ("4, 2, 3, 3", "", "w"), "orthogonal_": ("4, 6", "", "w @ w.T"),
    "sparse_": ("40, 50", ", 0.3", "(w == 0).sum(0)"),
}
def _returned(name: str) -> tuple[Example, ...]:
    """torch's initialisers return the tensor they fill: ``w = nn.init.normal_(torch.empty(3, 5))``
    is common. The returned tensor is compared by value (random draws replayed), and checked to be
    the tensor filled."""
    shape, extra, check = _RETURNED[name]
    tolerance = {"atol": 1e-6} if name == "orthogonal_" else {"rtol": 0.0, "atol": 0.0}
    made = Example(f"w = nn.init.{name}(torch.empty({shape}){extra})\nresult = {check}", inputs={}, notes="returned", **tolerance)
    filled = Example(f"r = nn.init.{name}(w{extra})\nresult = (r - w).abs().max().item()", inputs={"w": f"zeros({shape})"},
                     notes="returns_its_tensor")
    return made, filled


def _rule(name: str, signature: str, hook, examples, notes: str = "") -> ApiRule:
    if name in _RETURNED:
        examples = (*examples, *_returned(name))
    return ApiRule(f"torch.nn.init.{name}", None, signature=signature, args={"generator": GENERATOR}
                   if "generator" in signature else {}, hook=hook, notes=notes, examples=tuple(examples))


RULES = [
    _rule("xavier_uniform_", "tensor, gain=1.0, generator=None", _simple("XavierUniform", ("gain", "gain", "")),
          (*_values("nn.init.xavier_uniform_({args})", [P("tensor", "w"), P("gain", "2.0", True)], CONV_W),
           *_values("layer = nn.Linear(30, 20)\nnn.init.xavier_uniform_({args})", [P("tensor", "layer.weight")], LAYER,
                    target="layer(x)", rtol=1e-6, atol=1e-6, shapes=("positional", "keywords"),
                    notes="through_a_layer"),
           Example("layer = nn.Linear(4, 2)\nr = nn.init.xavier_uniform_(layer.weight)\nresult = (r - layer.weight).abs().max().item()",
                   inputs={}, notes="returns_its_parameter"),
           # a view of the tensor (DiT's patch embedding, initialised like a Linear): the fans are the view's
           Example("nn.init.xavier_uniform_(w.view([w.shape[0], -1]))\nresult = w", inputs=CONV_W, rtol=0.0, atol=0.0,
                   notes="a_view"),
           Example("layer = nn.Conv2d(3, 4, 2)\nw = layer.weight.data\nnn.init.xavier_uniform_(w.view([w.shape[0], -1]))\n"
                   "result = layer(x)", inputs={"x": "randn(2, 3, 5, 5)"}, rtol=1e-6, atol=1e-6, notes="a_layer_view"),
           Example("w = nn.init.xavier_uniform_(torch.empty(3, 5))",
                   "w = mindspore.common.initializer.initializer(\n"
                   "    mindspore.common.initializer.XavierUniform(), (3, 5), mindspore.float32\n).init_data()"),
           Example("nn.init.xavier_uniform_(self.fc.weight, gain=2.0)",
                   "self.fc.weight.set_data(\n    mindspore.common.initializer.initializer(\n"
                   "        mindspore.common.initializer.XavierUniform(gain=2.0),\n"
                   "        self.fc.weight.shape,\n        self.fc.weight.dtype,\n    )\n)"))),
    _rule("xavier_normal_", "tensor, gain=1.0, generator=None", _simple("XavierNormal", ("gain", "gain", "")),
          _values("nn.init.xavier_normal_({args})", [P("tensor", "w"), P("gain", "2.0", True)], CONV_W)),
    _rule("kaiming_uniform_", "tensor, a=0, mode='fan_in', nonlinearity='leaky_relu', generator=None", _kaiming("HeUniform"),
          (*_literal_nonlinearity(_values(
              "nn.init.kaiming_uniform_({args})",
              [P("tensor", "w"), P("a", "0.1", True), P("mode", "'fan_out'", True), P("nonlinearity", "'relu'", True)],
              CONV_W), "kaiming_uniform_"),
           Example("w = w * 1\nnn.init.kaiming_uniform_(w, nonlinearity='selu')", marked="selu"))),
    _rule("kaiming_normal_", "tensor, a=0, mode='fan_in', nonlinearity='leaky_relu', generator=None", _kaiming("HeNormal"),
          _literal_nonlinearity(_values(
              "nn.init.kaiming_normal_({args})",
              [P("tensor", "w"), P("a", "0.2", True), P("mode", "'fan_out'", True), P("nonlinearity", "'leaky_relu'", True)],
              CONV_W), "kaiming_normal_")),
    _rule("normal_", "tensor, mean=0.0, std=1.0, generator=None",
          _simple("Normal", ("std", "sigma", "1.0"), ("mean", "mean", "")),
          _values("nn.init.normal_({args})", [P("tensor", "w"), P("mean", "0.5", True), P("std", "2.0", True)], MATRIX_W)),
    _rule("trunc_normal_", "tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None",
          _simple("TruncatedNormal", ("std", "sigma", "1.0"), ("mean", "mean", ""), ("a", "a", ""), ("b", "b", "")),
          _values("nn.init.trunc_normal_({args})",
                  [P("tensor", "w"), P("mean", "0.5", True), P("std", "2.0", True), P("a", "-1.0", True), P("b", "1.5", True)],
                  MATRIX_W)),
    _rule("uniform_", "tensor, a=0.0, b=1.0, generator=None", _uniform,
          (*_values("nn.init.uniform_({args})", [P("tensor", "w"), P("a", "-1.0", True), P("b", "3.0", True)], MATRIX_W),
           Example("layer = nn.Linear(6, 4)\nnn.init.uniform_(layer.weight.reshape(-1), 1.0, 2.0)\nresult = layer.weight * 1",
                   inputs={}, rtol=0.0, atol=0.0, notes="a_view")),
          notes="MindSpore's Uniform(scale) is symmetric: shifted by (a + b) / 2"),
    _rule("constant_", "tensor, val", _simple("Constant", ("val", "value", "")),
          (*call_cases("nn.init.constant_({args})\nresult = w", [P("tensor", "w"), P("val", "0.25")], {"w": "zeros(3, 4)"}),
           *call_cases("layer = nn.Linear(4, 2)\nnn.init.constant_({args})\nresult = layer(x)",
                       [P("tensor", "layer.weight"), P("val", "0.5")], {"x": "randn(3, 4)"}, shapes=("positional",)))),
    _rule("zeros_", "tensor", _simple("Zero"), call_cases("nn.init.zeros_({args})\nresult = w", [P("tensor", "w")], {"w": "randn(3, 4)"})),
    _rule("ones_", "tensor", _simple("One"), call_cases("nn.init.ones_({args})\nresult = w", [P("tensor", "w")], {"w": "randn(3, 4)"})),
    _rule("eye_", "tensor", _simple("Identity"), call_cases("nn.init.eye_({args})\nresult = w", [P("tensor", "w")], {"w": "randn(3, 5)"})),
    _rule("dirac_", "tensor, groups=1", _simple("Dirac", ("groups", "groups", "")),
          call_cases("nn.init.dirac_({args})\nresult = w", [P("tensor", "w"), P("groups", "2", True)], {"w": "randn(4, 2, 3, 3)"})),
    _rule("orthogonal_", "tensor, gain=1, generator=None", _simple("Orthogonal", ("gain", "gain", "")),
          (*_values("nn.init.orthogonal_({args})", [P("tensor", "w"), P("gain", "2.0", True)], {"w": "zeros(4, 6)"},
                    atol=1e-6),
           *_values("nn.init.orthogonal_({args})", [P("tensor", "w")], {"w": "zeros(6, 4)"}, atol=1e-6,
                    shapes=("positional",), notes="tall"))),
    _rule("sparse_", "tensor, sparsity, std=0.01, generator=None",
          _simple("Sparse", ("sparsity", "sparsity", ""), ("std", "sigma", "0.01")),
          _values("nn.init.sparse_({args})", [P("tensor", "w"), P("sparsity", "0.3"), P("std", "0.5", True)],
                  {"w": "zeros(40, 50)"})),
    # private in torch, yet common in model code (timm's variance_scaling_, lecun_normal_)
    _rule("_calculate_fan_in_and_fan_out", "tensor", _fans,
          (*call_cases("result = nn.init._calculate_fan_in_and_fan_out({args})", [P("tensor", "w")], CONV_W,
                       shapes=("positional", "keywords")),
           *call_cases("result = nn.init._calculate_fan_in_and_fan_out({args})", [P("tensor", "w")], MATRIX_W,
                       shapes=("positional",), notes="matrix"),
           Example("fan_in, fan_out = nn.init._calculate_fan_in_and_fan_out(w)",
                   "fan_in, fan_out = (\n    w.shape[1] * math.prod(w.shape[2:]),\n    w.shape[0] * math.prod(w.shape[2:]),\n)"),
           Example("f = nn.init._calculate_fan_in_and_fan_out(layer.weight.flatten(1))", marked="assign it to a variable")),
          notes="computed from the shape: (size(1), size(0)) times the product of the remaining dimensions"),
    _rule("calculate_gain", "nonlinearity, param=None", _calculate_gain,
          (*call_cases("result = nn.init.calculate_gain({args})", [P("nonlinearity", "'leaky_relu'"), P("param", "0.2", True)], {},
                       shapes=("positional", "keywords", "reordered", "defaults")),
           *call_cases("v_name = 'leaky_relu'\nv_param = 0.3\nresult = nn.init.calculate_gain({args})",
                       [P("nonlinearity", "v_name"), P("param", "v_param", True)], {},
                       shapes=("positional", "keywords", "defaults"), notes="run_time"),
           *call_cases("v_name = 'relu'\nresult = nn.init.calculate_gain({args})", [P("nonlinearity", "v_name")], {},
                       shapes=("positional",), notes="run_time_relu"),
           *call_cases("result = nn.init.calculate_gain({args})", [P("nonlinearity", "'tanh'")], {}, shapes=("positional",)),
           Example("g = nn.init.calculate_gain('relu')", "g = 1.4142135623730951")),
          notes="evaluated during conversion (a constant); arguments known at run time go through torch's function written above the file's code"),
]
