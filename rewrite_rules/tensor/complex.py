"""Complex numbers: real/imag/conj/adjoint/angle and the conjugate views.

torch reads ``x.real``/``x.imag`` as attributes; MindSpore spells them as
methods, so a read passed through gives a bound method: they become
``ops.real(x)``/``ops.imag(x)``. torch conjugates lazily (a conjugate bit that
``resolve_conj`` materialises); MindSpore always materialises, so
``resolve_conj``/``resolve_neg`` are the identity. complex128 stays complex128
in every form (cases below run on complex128 input).

``angle`` of a real tensor has no MindSpore kernel: it is 0 or pi (NaN kept),
in the input's float dtype (float32 for integers), as torch computes it.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P, call_cases
from rewrite_rules.api import Example, MethodRule, PropertyRule
from rewrite_rules.tensor.binding import atom, code_of, expr, method, same
from rewrite_rules.torch_functions.builders import IN, case, fn

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
    call.result = angle_of(call.get("input"), ctx)


def _torch_identity(call, ctx):
    call.result = call.get("input")


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
                     Example("result = x.angle().sum()", inputs=REAL))),
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
]
