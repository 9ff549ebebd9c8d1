"""Matrix products and linear algebra as Tensor methods."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P, call_cases
from rewrite_rules.api import Example, MethodRule, Unconvertible
from rewrite_rules.tensor.binding import atom, code_of, expr, literal, method, same
from rewrite_rules.torch_functions.builders import case
from rewrite_rules.torch_functions.sparse import EDGES, sparse_method_product

M = {"x": "randn(3, 4)", "q": "randn(4, 4)", "v": "randn(4)"}
SPD = "s = q @ q.T + 4 * (v * 0 + 1).diag_embed()\n"


def _dot(bound, call, ctx):
    """MindSpore's dot wants >= 2-D inputs; torch's dot is 1-D only, where
    inner is the same product."""
    bound.result = cst.Call(cst.Attribute(call.receiver, cst.Name("inner")), [cst.Arg(bound.get("tensor"))])


def _diag(bound, call, ctx):
    """torch diag: a 1-D input becomes a diagonal matrix, a 2-D input gives its
    diagonal. MindSpore's diag makes a 4-D tensor from a 2-D input and has no
    offset: diagonal() for 2-D, ops.diag_embed for 1-D."""
    x = atom(call.receiver)
    k = bound.get("diagonal")
    offset = code_of(k) if k is not None else "0"
    embed = code_of(ctx.ref("mindspore.ops.diag_embed"))
    bound.result = expr(f"{x}.diagonal({offset}) if {x}.ndim == 2 else {embed}({x}, {offset})")


def svd_of(x, some, compute_uv, ctx) -> cst.BaseExpression:
    """torch.svd returns (U, S, V); MindSpore's ops.svd (S, U, V): reordered.
    Each singular vector pair is unique up to its sign only; both are valid."""
    try:
        if not literal(compute_uv, True):
            raise Unconvertible("compute_uv=False: torch returns zero-filled U and V, MindSpore only S")
    except ValueError:
        raise Unconvertible("compute_uv through a variable") from None
    svd = code_of(ctx.ref("mindspore.ops.svd"))
    try:
        full = "False" if literal(some, True) else "True"
    except ValueError:
        full = f"not {atom(some)}"
    return expr(f"(lambda s, u, v: (u, s, v))(*{svd}({code_of(x)}, full_matrices={full}))")


def _svd(bound, call, ctx):
    bound.result = svd_of(call.receiver, bound.get("some"), bound.get("compute_uv"), ctx)


def _corrcoef(bound, call, ctx):
    """Pearson correlation from cov (MindSpore has no corrcoef): cov over the
    standard deviations, clamped to [-1, 1] as torch does; 0-d for one variable, like cov."""
    x = atom(call.receiver)
    atleast_2d = code_of(ctx.ref("mindspore.ops.atleast_2d"))
    bound.result = expr(f"(lambda c: (c / (c.diagonal()[:, None] * c.diagonal()[None, :]).sqrt()).clamp(-1, 1))"
                        f"({atleast_2d}({atleast_2d}({x}).cov())).squeeze()")


def _vdot(bound, call, ctx):
    """The conjugate of the receiver times other, summed (ops.inner for 1-D)."""
    inner = code_of(ctx.ref("mindspore.ops.inner"))
    bound.result = expr(f"{inner}({atom(call.receiver)}.conj(), {code_of(bound.get('other'))})")


def _pinverse(bound, call, ctx):
    bound.result = cst.Call(ctx.ref("mindspore.ops.pinv"), [cst.Arg(call.receiver),
                                                           cst.Arg(bound.get("rcond") or expr("1e-15"), keyword=cst.Name("rtol"))])


def _stft(bound, call, ctx):
    """ops.stft spells the padding modes in capitals."""
    mode = bound.get("pad_mode")
    if isinstance(mode, cst.SimpleString):
        bound.set("pad_mode", repr(mode.evaluated_value.upper()))
    elif mode is not None:
        bound.set("pad_mode", f"{atom(mode)}.upper()")
    if bound.has("align_to_window"):
        raise Unconvertible("align_to_window= has no MindSpore equivalent")


def _marked(name: str, reason: str, example: str) -> MethodRule:
    return MethodRule(name, notes=reason, examples=(Example(f"x = x * 2\n{example}", marked=reason[:30]),))


# SVD factors agree up to the sign of each singular vector pair: compare the
# singular values, |U|, |V| and the reconstruction U diag(S) V^T.
SVD_CHECK = "\nresult = (s, u.abs(), v.abs(), (u * s) @ v.T)"
SVD_INPUTS = {"x": "tensor([[1.3, 0.2, -1.5, 0.7], [0.1, 2.0, 0.4, -0.3], [0.9, -0.8, 1.1, 0.6]])"}

_SPARSE = "of a sparse COO matrix the file makes, or its t(): its SparseTensorDenseMatmul"


def _sparse_cases(name: str) -> tuple:
    # a hand-written backward's a.t().matmul(grad), a saved in forward: tests/rules/test_autograd_functions.py
    return (case(f"a = torch.sparse_coo_tensor(i, v, (4, 4))\nresult = (a.{name}(x), a.t().{name}(x))", EDGES,
                 rtol=1e-5, atol=1e-6),
            Example(f"a = torch.sparse_coo_tensor(i, v, (4, 4))\ny = a.t().{name}(x)",
                    f"a = mindspore.COOTensor(i.T, v, (4, 4))\n"
                    f"y = ops.SparseTensorDenseMatmul(adjoint_st=True)(*a.to_tuple(), x)"))


RULES = [
    method("matmul", "other", hook=sparse_method_product("other"), notes=_SPARSE,
           examples=(*call_cases("result = x.matmul({args})", [P("other", "q")], M), *_sparse_cases("matmul"))),
    method("mm", "mat2", hook=sparse_method_product("mat2"), notes=_SPARSE,
           examples=(*call_cases("result = x.mm({args})", [P("mat2", "q")], M), *_sparse_cases("mm"))),
    same("bmm", examples=call_cases("result = x.unsqueeze(0).bmm({args})", [P("mat2", "q.unsqueeze(0)")], M)),
    method("mv", "vec", function="mindspore.ops.mv", notes="Tensor.mv does not exist in MindSpore: ops.mv",
           examples=call_cases("result = q.mv({args})", [P("vec", "v")], M)),
    method("dot", "tensor", hook=_dot, notes="MindSpore's dot needs >= 2-D inputs; inner is the 1-D dot product",
           examples=call_cases("result = v.dot({args})", [P("tensor", "v * 2")], M)),
    same("inner", examples=call_cases("result = x.inner({args})", [P("other", "x")], M)),
    same("outer", examples=call_cases("result = v.outer({args})", [P("vec2", "v + 1")], M)),
    same("ger", examples=call_cases("result = v.ger({args})", [P("vec2", "v + 1")], M)),
    same("addmm", examples=call_cases(
        "result = x.addmm({args})", [P("mat1", "x"), P("mat2", "q"), P("beta", "0.5", True, "keyword"), P("alpha", "2", True, "keyword")], M)),
    same("addmv", examples=call_cases(
        "result = v.addmv({args})", [P("mat", "q"), P("vec", "v"), P("beta", "0.5", True, "keyword"), P("alpha", "2", True, "keyword")], M)),
    same("addr", examples=call_cases(
        "result = q.addr({args})", [P("vec1", "v"), P("vec2", "v"), P("beta", "0.5", True, "keyword"), P("alpha", "2", True, "keyword")], M)),
    same("baddbmm", examples=call_cases(
        "result = q.unsqueeze(0).baddbmm({args})",
        [P("batch1", "q.unsqueeze(0)"), P("batch2", "q.unsqueeze(0)"), P("beta", "0.5", True, "keyword"), P("alpha", "2", True, "keyword")], M)),
    same("addbmm", examples=call_cases(
        "result = q.addbmm({args})",
        [P("batch1", "q.unsqueeze(0).tile((2, 1, 1))"), P("batch2", "q.unsqueeze(0).tile((2, 1, 1))"),
         P("beta", "0.5", True, "keyword"), P("alpha", "2", True, "keyword")], M)),
    same("cross", examples=call_cases("result = x[:, :3].cross({args})", [P("other", "x[:, 1:]"), P("dim", "1")], M)),
    same("det", examples=call_cases("result = q.det()", [], M, rtol=1e-4, atol=1e-5)),
    same("inverse", examples=call_cases("result = q.inverse()", [], M, rtol=1e-4, atol=1e-5)),
    same("matrix_power", examples=call_cases("result = q.matrix_power({args})", [P("n", "3")], M, rtol=1e-4, atol=1e-5)),
    same("logdet", examples=call_cases(SPD + "result = s.logdet()", [], M, rtol=1e-4, atol=1e-5)),
    same("slogdet", examples=call_cases("sign, logabsdet = q.slogdet()", [], M, results=("sign", "logabsdet"), rtol=1e-4, atol=1e-5)),
    same("cholesky", examples=call_cases(SPD + "result = s.cholesky({args})", [P("upper", "False", True)], M, rtol=1e-4, atol=1e-5)),
    same("cov", examples=call_cases("result = x.cov({args})", [P("correction", "0", True, "keyword")], M)),
    method("diag", "diagonal=0", hook=_diag,
           notes="2-D input: diagonal(); 1-D input: ops.diag_embed (MindSpore's diag makes a 4-D tensor from a matrix)",
           examples=(*call_cases("result = q.diag({args})", [P("diagonal", "1", True)], M),
                     *call_cases("result = v.diag({args})", [P("diagonal", "-1", True)], M))),
    method("svd", "some=True, compute_uv=True", hook=_svd,
           notes="(U, S, V) reordered from MindSpore's (S, U, V); singular vectors may differ in sign (both are valid SVDs)",
           examples=(*call_cases("u, s, v = x.svd({args})" + SVD_CHECK, [P("some", "True", True)], SVD_INPUTS,
                                 rtol=1e-4, atol=1e-5),
                     *call_cases("u, s, v = x.T.svd({args})\nresult = (s, u.abs(), v.abs())", [P("some", "False")],
                                 SVD_INPUTS, rtol=1e-4, atol=1e-5, shapes=("positional", "keywords")),
                     Example("x = x * 2\ny = x.svd(compute_uv=False)", marked="compute_uv"))),
    method("corrcoef", "", hook=_corrcoef, notes="composed from cov: MindSpore has no corrcoef",
           examples=(*call_cases("result = x.corrcoef()", [], M, rtol=1e-4, atol=1e-5),
                     Example("result = v.corrcoef()", inputs=M))),
    method("dist", "other, p=2", function="mindspore.ops.dist",
           examples=call_cases("result = x.dist({args})", [P("other", "x.flip(0)"), P("p", "3", True)], M, rtol=1e-4)),
    method("kron", "other", function="mindspore.ops.kron", examples=call_cases("result = q.kron({args})", [P("other", "x")], M)),
    method("pinverse", "rcond=1e-15", hook=_pinverse, notes="ops.pinv with rtol=rcond",
           examples=call_cases("result = x.pinverse({args})", [P("rcond", "1e-5", True)], M, rtol=1e-4, atol=1e-5)),
    method("vdot", "other", hook=_vdot, notes="ops.inner of the conjugated receiver",
           examples=(*call_cases("result = v.vdot({args})", [P("other", "v * 2")], M),
                     Example("result = c.vdot(c * c)", inputs={"c": "tensor([1 + 2j, 3 - 1j], dtype='complex128')"}))),
    same("qr", examples=call_cases("q2, r2 = x.T.qr({args})\nresult = (q2.abs(), r2.abs(), q2 @ r2)", [P("some", "True", True)],
                                   M, rtol=1e-4, atol=1e-5)),
    same("cholesky_inverse", examples=call_cases(SPD + "result = s.cholesky().cholesky_inverse({args})",
                                                 [P("upper", "False", True)], M, rtol=1e-4, atol=1e-5)),
    same("cholesky_solve", examples=call_cases(SPD + "result = x.T.cholesky_solve({args})",
                                               [P("input2", "s.cholesky()"), P("upper", "False", True)], M, rtol=1e-4, atol=1e-4,
                                               shapes=("positional", "keywords", "reordered", "defaults"))),
    _marked("matrix_exp", "MatrixExp has no MindSpore CPU kernel (measured)", "y = x.matrix_exp()"),
    _marked("lu", "MindSpore has no LU factorisation in torch's packed (LU, pivots) form", "lu, piv = x.lu()"),
    _marked("lu_solve", "needs torch's packed LU factorisation, which MindSpore lacks", "y = b.lu_solve(lu, piv)"),
    _marked("lstsq", "torch removed Tensor.lstsq; use torch.linalg.lstsq", "y = b.lstsq(a)"),
    _marked("triangular_solve", "MindSpore's Tensor has no triangular_solve (torch deprecated it for "
            "torch.linalg.solve_triangular)", "y = b.triangular_solve(a)"),
    same("geqrf", examples=call_cases("a, tau = x.T.geqrf()\nresult = (a, tau)", [], M, rtol=1e-4, atol=1e-5)),
    _marked("orgqr", "MindSpore's orgqr gives another Q than torch's for the same geqrf output (measured); use qr",
            "y = a.orgqr(tau)"),
    _marked("ormqr", "Ormqr has no MindSpore CPU kernel (measured)", "y = a.ormqr(tau, c)"),
    method("stft", "n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode='reflect', "
           "normalized=False, onesided=None, return_complex=None, align_to_window=None",
           function="mindspore.ops.stft", hook=_stft, notes="ops.stft (pad_mode in capitals)",
           examples=(*call_cases("result = s.stft({args})", [P("n_fft", "16"), P("hop_length", "4", True), P("win_length", "12", True), P("window", "w", True),
                                                             P("return_complex", "True", kind="keyword")],
                                 {"s": "randn(2, 64)", "w": "rand(12)"}, rtol=1e-4, atol=1e-5),
                     Example("result = s.stft(16, center=False, normalized=True, onesided=False, pad_mode='constant', "
                             "return_complex=True)", inputs={"s": "randn(64)"}, rtol=1e-4, atol=1e-5))),
    method("diag_embed", "offset=0, dim1=-2, dim2=-1", function="mindspore.ops.diag_embed",
           notes="Tensor.diag_embed does not exist in MindSpore: ops.diag_embed",
           examples=call_cases("result = x.diag_embed({args})", [P("offset", "1", True), P("dim1", "0", True), P("dim2", "2", True)], M)),
]
