"""Complex numbers: real/imag/conj/adjoint/angle and the conjugate views.

torch reads ``x.real``/``x.imag`` as attributes; MindSpore spells them as
methods, so a read passed through gives a bound method: they become
``ops.real(x)``/``ops.imag(x)``. torch conjugates lazily (a conjugate bit that
``resolve_conj`` materialises); MindSpore always materialises, so
``resolve_conj``/``resolve_neg`` are the identity. complex128 stays complex128
in every form (cases below run on complex128 input).

``angle`` of a real tensor has no MindSpore kernel: it is 0 or pi (NaN kept),
in the input's float dtype (float32 for integers), as torch computes it.

Complex tensors from pairs and back (the rotary embeddings of LLaMA-style
decoders): ``torch.polar`` -> ``ops.polar``, ``torch.view_as_complex`` -> the
``ops.Complex`` primitive of the last axis unbound, ``torch.view_as_real`` -> ``ops.view_as_real``;
all run on CPU and match torch exactly (measured). MindSpore has no gradient
for a product of complex tensors ("For 'Mul', gradient not support for complex
type currently"), so ``view_as_real(a * b)`` of two names is written as the
complex product in real arithmetic, which has one (and equal values).
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P, call_cases
from rewrite_rules.api import Example, MethodRule, PropertyRule
from rewrite_rules.tensor.binding import atom, code_of, expr, method, same
from rewrite_rules.torch_functions.builders import IN, case, fn
from rewrite_rules.torch_functions.integer_inputs import is_complex_tensor, source_argument

C = {"x": "tensor([[1 + 2j, 3 - 1j], [0.5j, 2 + 0j]], dtype='complex128')"}
C64 = {"x": "tensor([[1 + 2j, 3 - 1j], [0.5j, 2 + 0j]], dtype='complex64')"}
REAL = {"x": "tensor([[1.5, -2.0, 0.0], [-0.5, nan, 3.0]], dtype='float64')"}
R3 = {"x": "randn(2, 3, 4)"}
PI = "3.141592653589793"


def _function(name: str):
    def hook(receiver, ctx):
        return cst.Call(ctx.ref(f"mindspore.ops.{name}"), [cst.Arg(receiver)])

    return hook


def angle_of(x: cst.BaseExpression, ctx) -> cst.BaseExpression:
    """ops.angle for complex input; 0 or pi (NaN kept) for real input."""
    ops, ms = code_of(ctx.ref("mindspore.ops")), code_of(ctx.ref("mindspore"))
    x = atom(x)
    dtype = f"{x}.dtype if {x}.is_floating_point() else {ms}.float32"
    real = f"{ops}.where({ops}.isnan({x}), {x}, {ops}.full_like({x}, {PI}, dtype={dtype}) * ({x} < 0))"
    return expr(f"({ops}.angle({x}) if {x}.is_complex() else {real})")


def _angle(bound, call, ctx):
    source = call.source.func.value if call.source is not None and isinstance(call.source.func, cst.Attribute) else None
    if is_complex_tensor(source, ctx):  # the source shows a complex tensor: the plain call
        bound.result = cst.Call(ctx.ref("mindspore.ops.angle"), [cst.Arg(call.receiver)])
    else:
        bound.result = angle_of(call.receiver, ctx)


def _same_property(name: str, examples) -> PropertyRule:
    return PropertyRule(name, rename=name, examples=tuple(examples))


def _identity(bound, call, ctx):
    bound.result = call.receiver


def _cast(dtype: str):
    def hook(bound, call, ctx):
        bound.result = cst.Call(cst.Attribute(call.receiver, cst.Name("astype")), [cst.Arg(ctx.ref(f"mindspore.{dtype}"))])

    return hook


def _read(attribute: str, inputs, *, resolve=False, **kw):
    """A case reading ``x.<attribute>`` (resolved on the torch side, where a
    conjugate view cannot be turned into numpy)."""
    tail = ".resolve_conj()" if resolve else ""
    return Example(f"result = x.{attribute}{tail}", inputs=inputs, **kw)


def _torch(name: str, target: str, hook=None, inputs=C, params=(IN,), **kw):
    return fn(f"torch.{name}", f"mindspore.ops.{target}", "input", params=params, inputs=inputs, hook=hook, **kw)


def _torch_angle(call, ctx):
    if is_complex_tensor(source_argument(call, "input"), ctx):
        call.result = cst.Call(ctx.ref("mindspore.ops.angle"), [cst.Arg(call.get("input"))])
    else:
        call.result = angle_of(call.get("input"), ctx)


def _torch_identity(call, ctx):
    call.result = call.get("input")


def _polar_inputs():
    return {"a": "uniform(0.5, 2.0, (3, 4))", "t": "uniform(-7.0, 7.0, (3, 4))"}


def _complex_primitive(ctx) -> str:
    return code_of(ctx.ref("mindspore.ops.Complex"))


def _view_as_complex(call, ctx):
    """The last axis (of length 2) unbound into the real and imaginary parts."""
    ops = code_of(ctx.ref("mindspore.ops"))
    call.result = expr(f"{_complex_primitive(ctx)}()(*{ops}.unbind({atom(call.get('input'))}, -1))")


def _plain(node: cst.BaseExpression) -> bool:
    """A name or an attribute of one: cheap to read twice, no side effects."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def _view_as_real(call, ctx):
    """A product of two plain operands in real arithmetic (MindSpore has no
    gradient for complex Mul); anything else through ops.view_as_real."""
    value = call.get("input")
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply) \
            and _plain(value.left) and _plain(value.right):
        ops = code_of(ctx.ref("mindspore.ops"))
        a, b = code_of(value.left.with_changes(lpar=[], rpar=[])), code_of(value.right.with_changes(lpar=[], rpar=[]))
        re_a, im_a, re_b, im_b = (f"{ops}.{part}({v})" for part, v in (("real", a), ("imag", a), ("real", b), ("imag", b)))
        call.result = expr(f"{ops}.stack(({re_a} * {re_b} - {im_a} * {im_b}, {re_a} * {im_b} + {im_a} * {re_b}), -1)")


# LLaMA's rotary embedding as published (precompute_freqs_cis / apply_rotary_emb)
_ROTARY = """\
def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)
    return freqs_cis


def reshape_for_broadcast(freqs_cis, x):
    ndim = x.ndim
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


freqs_cis = precompute_freqs_cis(8, 5)
result = apply_rotary_emb(xq, xk, freqs_cis)
"""
_ROTARY_INPUTS = {"xq": "randn(2, 5, 3, 8)", "xk": "randn(2, 5, 3, 8)"}
# the cached complex table of many decoders (a buffer, read back through .real/.imag)
_ROTARY_TABLE = """\
freqs = torch.outer(torch.arange(6).float(), 1.0 / 10000 ** (torch.arange(0, 8, 2).float() / 8))
table = torch.polar(torch.ones_like(freqs), freqs)
result = (table.real, table.imag, torch.view_as_real(table).shape)
"""

_ADJOINT_CASE = "result = x.{}().resolve_conj()"

RULES = [
    PropertyRule("real", hook=_function("real"), notes="ops.real(x): MindSpore's Tensor.real is a method",
                 examples=(_read("real", C), _read("real", C64), _read("real", REAL),
                           Example("y = x.real", "y = ops.real(x)"), Example("x.real = y", "x.real = y"))),
    PropertyRule("imag", hook=_function("imag"), notes="ops.imag(x): MindSpore's Tensor.imag is a method",
                 examples=(_read("imag", C), _read("imag", C64), Example("y = x.imag * 2", "y = ops.imag(x) * 2"))),
    _same_property("mT", (_read("mT", C), _read("mT", R3))),
    _same_property("H", (_read("H", C, resolve=True), _read("H", REAL))),
    _same_property("mH", (_read("mH", C, resolve=True), _read("mH", R3))),
    same("conj", examples=(Example("result = x.conj().resolve_conj()", inputs=C), Example("result = x.conj()", inputs=REAL))),
    same("adjoint", examples=(Example(_ADJOINT_CASE.format("adjoint"), inputs=C),
                              Example("result = x.adjoint()", inputs=R3))),
    method("conj_physical", "", function="mindspore.ops.conj", examples=call_cases("result = x.conj_physical()", [], C)),
    method("angle", "", hook=_angle, notes="ops.angle for complex input; 0 or pi for real input (no CPU kernel)",
           examples=(*call_cases("result = x.angle()", [], C), Example("result = x.angle()", inputs=REAL),
                     Example("result = x.angle()", inputs={"x": "tensor([1, -2, 0])"}),
                     Example("result = x.angle()", inputs={"x": "randn(3, 4)"}),
                     Example("result = x.angle().sum()", inputs=REAL),
                     # a complex tensor the source shows: the plain call
                     Example("c = torch.tensor([1 + 2j, -1j])\ny = c.angle()",
                             "c = mindspore.Tensor([1 + 2j, -1j], dtype=mindspore.complex64)\ny = ops.angle(c)"),
                     Example("v = [1j, 2, -3]\nresult = (torch.as_tensor(v).angle(), torch.angle(torch.tensor(v)))",
                             inputs={}))),
    method("resolve_conj", "", hook=_identity, notes="MindSpore conjugates eagerly: nothing to resolve",
           examples=(Example("result = x.conj().resolve_conj()", inputs=C),)),
    method("resolve_neg", "", hook=_identity, notes="MindSpore negates eagerly: nothing to resolve",
           examples=(Example("result = (-x).resolve_neg()", inputs=C),)),
    *(MethodRule(name, arity=(0, 0), notes="MindSpore has no lazy conjugate or negative views to ask about",
                 examples=(Example(f"x = x * 2\nflag = x.{name}()", marked="no lazy"),)) for name in ("is_conj", "is_neg")),
    method("cfloat", "", hook=_cast("complex64"), examples=(Example("result = x.cfloat()", inputs=REAL),)),
    method("cdouble", "", hook=_cast("complex128"),
           examples=(Example("result = x.cdouble()", inputs=REAL), Example("result = x.cdouble()", inputs=C64))),
    MethodRule("chalf", arity=(0, 0), notes="MindSpore has no complex32",
               examples=(Example("x = x * 2\ny = x.chalf()", marked="complex32"),)),
    _torch("real", "real", extra=(case("result = torch.real(x)", REAL), case("result = torch.real(x)", C64))),
    _torch("imag", "imag", extra=(case("result = torch.imag(x)", C64),)),
    _torch("conj", "conj", template="result = torch.conj({args}).resolve_conj()", extra=(case("result = torch.conj(x)", REAL),)),
    _torch("adjoint", "adjoint", args={"input": "x"}, template="result = torch.adjoint({args}).resolve_conj()",
           extra=(case("result = torch.adjoint(x)", R3),)),
    _torch("conj_physical", "conj"),
    _torch("resolve_conj", "conj", hook=_torch_identity, template="result = torch.resolve_conj({args}.conj())",
           notes="MindSpore conjugates eagerly: the input itself"),
    _torch("resolve_neg", "neg", hook=_torch_identity, params=(P("input", "-x"),),
           notes="MindSpore negates eagerly: the input itself"),
    fn("torch.angle", "mindspore.ops.angle", "input, *, out=None", params=[IN], inputs=C, hook=_torch_angle,
       notes="ops.angle for complex input; 0 or pi for real input (no CPU kernel)",
       extra=(case("result = torch.angle(x)", REAL), case("result = torch.angle(x)", {"x": "tensor([1, -2, 0])"}))),
    fn("torch.polar", signature="abs, angle, *, out=None", params=[P("abs", "a"), P("angle", "t")],
       inputs=_polar_inputs(), extra=(case("result = torch.polar(a.double(), t.double())", _polar_inputs()),
                                      Example(_ROTARY_TABLE, inputs={}))),
    fn("torch.view_as_complex", "mindspore.ops.Complex", "input", params=[IN], inputs={"x": "randn(3, 4, 2)"},
       hook=_view_as_complex, notes="ops.Complex of the last axis unbound into real and imaginary parts",
       extra=(case("result = torch.view_as_complex(x.double())", {"x": "randn(2, 2)"}),
              Example("y = torch.view_as_complex(x.reshape(3, -1, 2))",
                      "y = ops.Complex()(*ops.unbind(x.reshape(3, -1, 2), -1))"),
              Example(_ROTARY, inputs=_ROTARY_INPUTS, notes="LLaMA rotary embedding"),
              Example("z = torch.view_as_complex(x.reshape(2, 3, 2))\nresult = torch.view_as_real(z * z)",
                      inputs={"x": "randn(3, 4)"}))),
    fn("torch.view_as_real", signature="input", inputs=C64, hook=_view_as_real,
       notes="view_as_real(a * b) of two names as the complex product in real arithmetic: MindSpore has no "
             "gradient for complex Mul",
       extra=(case("result = torch.view_as_real(x)", C),
              Example("y = torch.view_as_real(a * b)",
                      "y = ops.stack(\n    (\n        ops.real(a) * ops.real(b) - ops.imag(a) * ops.imag(b),\n"
                      "        ops.real(a) * ops.imag(b) + ops.imag(a) * ops.real(b),\n    ),\n    -1,\n)"),
              Example("y = torch.view_as_real(a * b.conj())", "y = ops.view_as_real(a * b.conj())"),
              case("result = torch.view_as_real(x * y)", {**C64, "y": "tensor([[2j, 1 + 1j], [3 + 0j, -1j]], "
                                                                         "dtype='complex64')"}),
              case("result = torch.view_as_real(x * y)", {**C64, "y": "randn(2, 2)"}))),
]
