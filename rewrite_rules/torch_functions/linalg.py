"""Matrix products and linear algebra: torch.mm/bmm/mv/outer/dot/addmm/det/inverse..."""

from __future__ import annotations

from rewrite_rules.cases import P
from rewrite_rules.api import ApiRule, Arg, Example, Unconvertible, code_of, literal_value
from rewrite_rules.tensor.linalg import SVD_CHECK, SVD_INPUTS, svd_of
from rewrite_rules.torch_functions.builders import IN, case, compose, fn, ms


def _svd(call, ctx):
    call.result = svd_of(call.get("input"), call.get("some"), call.get("compute_uv"), ctx)


def _qr_some(call, ctx):
    """torch.qr(input, some=True) -> ops.qr(input, mode='reduced'|'complete')."""
    some = call.get("some")
    call.remove("some")
    if some is None:
        return
    try:
        value = literal_value(some)
    except ValueError:
        call.add_keyword("mode", f"'reduced' if {code_of(some)} else 'complete'")
        return
    if value is False:
        call.add_keyword("mode", "'complete'")


def _qr_mode(call, ctx):
    """torch.linalg.qr's mode 'r' returns an empty Q: MindSpore's qr has 'reduced' and 'complete' only."""
    mode = call.get("mode")
    if mode is None:
        return
    try:
        value = literal_value(mode)
    except ValueError:
        return  # MindSpore refuses 'r' at run time
    if value == "r":
        raise Unconvertible("mode='r' (R only, Q empty): MindSpore's qr computes Q too; use mode='reduced' and drop Q")


_QR_INPUTS = {"x": "randn(5, 3)"}
_QR_WIDE = {"x": "randn(2, 3, 4)"}

MATS = {"a": "randn(3, 4)", "b": "randn(4, 5)"}
BATCH = {"a": "randn(2, 3, 4)", "b": "randn(2, 4, 5)"}
VECS = {"u": "randn(3)", "v": "randn(3)"}
SQUARE = {"x": "tensor([[2.0, 0.5, 0.1], [0.3, 3.0, 0.2], [0.1, 0.4, 1.5]])"}
_PRODUCT = dict(rtol=1e-4, atol=1e-5)
_SCALES = [P("beta", "0.5", default=True, kind="keyword"), P("alpha", "2.0", default=True, kind="keyword")]

RULES = [
    fn("torch.mm", signature="input, mat2, *, out=None", params=[P("input", "a"), P("mat2", "b")], inputs=MATS, **_PRODUCT),
    fn("torch.bmm", signature="input, mat2, *, out=None", args={"input": "input_x"}, positional=2,
       params=[P("input", "a"), P("mat2", "b")], inputs=BATCH, **_PRODUCT),
    fn("torch.mv", signature="input, vec, *, out=None", args={"input": "mat"}, positional=2,
       params=[P("input", "a"), P("vec", "v")], inputs={"a": "randn(3, 4)", "v": "randn(4)"}, **_PRODUCT),
    fn("torch.outer", signature="input, vec2, *, out=None", params=[P("input", "u"), P("vec2", "v")], inputs=VECS, **_PRODUCT),
    fn("torch.ger", signature="input, vec2, *, out=None", params=[P("input", "u"), P("vec2", "v")], inputs=VECS, **_PRODUCT),
    fn("torch.dot", ms("inner"), "input, tensor, *, out=None", hook=compose("{ops}.inner({input}, {tensor})"),
       notes="as inner: MindSpore's dot needs 2-D inputs.",
       params=[P("input", "u"), P("tensor", "v")], inputs=VECS, **_PRODUCT),
    fn("torch.inner", signature="input, other, *, out=None", params=[P("input", "a"), P("other", "b")],
       inputs={"a": "randn(2, 4)", "b": "randn(3, 4)"}, **_PRODUCT),
    fn("torch.addmm", signature="input, mat1, mat2, *, beta=1, alpha=1, out=None",
       params=[IN, P("mat1", "a"), P("mat2", "b"), *_SCALES], inputs={**MATS, "x": "randn(3, 5)"}, **_PRODUCT),
    fn("torch.addbmm", signature="input, batch1, batch2, *, beta=1, alpha=1, out=None",
       params=[IN, P("batch1", "a"), P("batch2", "b"), *_SCALES], inputs={**BATCH, "x": "randn(3, 5)"}, **_PRODUCT),
    fn("torch.baddbmm", signature="input, batch1, batch2, *, beta=1, alpha=1, out=None",
       params=[IN, P("batch1", "a"), P("batch2", "b"), *_SCALES], inputs={**BATCH, "x": "randn(2, 3, 5)"}, positional=3,
       **_PRODUCT),
    fn("torch.addmv", signature="input, mat, vec, *, beta=1, alpha=1, out=None",
       params=[IN, P("mat", "a"), P("vec", "v"), *_SCALES], inputs={"x": "randn(3)", "a": "randn(3, 4)", "v": "randn(4)"},
       **_PRODUCT),
    fn("torch.addr", signature="input, vec1, vec2, *, beta=1, alpha=1, out=None", args={"input": "x"}, positional=3,
       params=[IN, P("vec1", "u"), P("vec2", "v"), *_SCALES], inputs={**VECS, "x": "randn(3, 3)"}, **_PRODUCT),
    fn("torch.det", signature="input", inputs=SQUARE, **_PRODUCT),
    fn("torch.logdet", signature="input", inputs=SQUARE, **_PRODUCT),
    fn("torch.inverse", signature="input, *, out=None", inputs=SQUARE, **_PRODUCT),
    # Glow's invertible 1x1 convolution: its log-determinant, in float64
    fn("torch.slogdet", signature="input", template="sign, logabsdet = torch.slogdet({args})",
       results=("sign", "logabsdet"), inputs=SQUARE, rtol=1e-4, atol=1e-5,
       notes="(sign, logabsdet) as a plain tuple: index it or unpack it (torch's field names are not there)",
       extra=(case("result = torch.slogdet(x.double())[1].float()", SQUARE),
              case("result = torch.slogdet(x.reshape(1, 3, 3).expand(2, 3, 3) * torch.tensor([1.0, -1.0]).reshape(2, 1, 1))",
                   SQUARE, rtol=1e-4, atol=1e-5))),
    fn("torch.linalg.slogdet", ms("slogdet"), "A, *, out=None", args={"A": "input"}, positional=1, params=[P("A", "x")],
       template="sign, logabsdet = torch.linalg.slogdet({args})", results=("sign", "logabsdet"), inputs=SQUARE,
       rtol=1e-4, atol=1e-5),
    fn("torch.linalg.det", ms("det"), "A, *, out=None", args={"A": "input"}, positional=1, params=[P("A", "x")],
       inputs=SQUARE, **_PRODUCT),
    fn("torch.linalg.inv", ms("inverse"), "A, *, out=None", args={"A": "input"}, positional=1, params=[P("A", "x")],
       inputs=SQUARE, **_PRODUCT),
    fn("torch.svd", ms("svd"), "input, some=True, compute_uv=True, *, out=None", hook=_svd,
       template="u, s, v = torch.svd({args})" + SVD_CHECK, params=[IN, P("some", "True", default=True)], inputs=SVD_INPUTS,
       notes="(U, S, V) reordered from MindSpore's (S, U, V); singular vectors may differ in sign (both are valid SVDs)",
       results=("result",), rtol=1e-4, atol=1e-5,
       extra=(case("u, s, v = torch.svd(x.T, some=False)\nresult = (s, u.abs(), v.abs())", SVD_INPUTS, rtol=1e-4, atol=1e-5),
              Example("y = torch.svd(x, compute_uv=False)", marked="compute_uv"))),
    fn("torch.linalg.qr", ms("qr"), "A, mode='reduced', *, out=None", args={"A": "input"}, positional=2, hook=_qr_mode,
       template="q, r = torch.linalg.qr({args})\nresult = (q, r)", params=[P("A", "x"), P("mode", "'complete'", default=True)],
       inputs=_QR_INPUTS, rtol=1e-4, atol=1e-5,
       notes="Householder QR as torch's (LAPACK): the same signs (measured equal to 2.4e-7).",
       extra=(case("q, r = torch.linalg.qr(x)\nresult = (q, r, q @ r)", _QR_WIDE, rtol=1e-4, atol=1e-5),
              Example("q, r = torch.linalg.qr(x, mode='r')", marked="mode='r'"))),
    fn("torch.qr", ms("qr"), "input, some=True, *, out=None", hook=_qr_some,
       template="q, r = torch.qr({args})\nresult = (q, r)", params=[IN, P("some", "False", default=True)],
       inputs=_QR_INPUTS, rtol=1e-4, atol=1e-5, notes="some=False -> mode='complete'.",
       extra=(case("q, r = torch.qr(x)\nresult = (q, r)", _QR_WIDE, rtol=1e-4, atol=1e-5),)),
    fn("torch.matrix_power", ms("matrix_power"), "input, n", params=[IN, P("n", "3")], inputs=SQUARE, **_PRODUCT),
    fn("torch.cross", signature="input, other, dim=None, *, out=None", params=[IN, P("other", "y"), P("dim", "0", default=True)],
       inputs={"x": "randn(3, 4)", "y": "randn(3, 4)"}, **_PRODUCT),
    fn("torch.tensordot", ms("tensor_dot"), "a, b, dims=2, out=None",
       args={"a": "x1", "b": "x2", "dims": Arg(to="axes", explicit=True)}, positional=2,
       params=[P("a", "a"), P("b", "b"), P("dims", "2", default=True)],
       inputs={"a": "randn(3, 4, 5)", "b": "randn(4, 5, 2)"}, notes="dims is always written: MindSpore's axes has no default.",
       extra=(case("result = torch.tensordot(a, b, dims=([1, 2], [0, 1]))", {"a": "randn(3, 4, 5)", "b": "randn(4, 5, 2)"},
                   rtol=1e-4, atol=1e-5),), **_PRODUCT),
]
