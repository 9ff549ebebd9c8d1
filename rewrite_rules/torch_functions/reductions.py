"""Reductions and scans: sum/mean/std/var/norm/max/min/median/sort/topk/cumsum...

Tuple-returning torch functions (max/min/median/sort/topk with a dim) become
MindSpore calls that return a plain (values, indices) tuple: unpacking and
indexing work the same; the ``.values``/``.indices`` attributes do not.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P
from rewrite_rules.api import Unconvertible, Unsupported, code_of
from rewrite_rules.helpers import INDEX_NOTE, as_int64, indices_as_int64
from rewrite_rules.tensor.reductions import kthvalue, norm_of
from rewrite_rules.torch_functions.builders import IN, X, arg_text, atom, case, compose, fn, literal, ms, wrapped

X3 = {"x": "randn(2, 3, 4)"}
DIM = P("dim", "1", default=True)
KEEPDIM = P("keepdim", "True", default=True)
DTYPE_KW = P("dtype", "torch.float64", default=True, kind="keyword")


def _reduce(name, target=None, signature="input, dim=None, keepdim=False, *, dtype=None, out=None", args=None,
            params=(IN, DIM, KEEPDIM), inputs=X3, positional=3, **options):
    return fn(f"torch.{name}", target, signature, args=args, params=list(params), inputs=inputs, positional=positional,
              **options)


# -- std / var: torch's correction=1 default against MindSpore's ddof=0 ------------

def _ddof(call, ctx):
    """torch.std(x, dim, unbiased, keepdim) / (x, dim, correction=c) / (x, unbiased)
    -> ops.std(x, axis, ddof=..., keepdims): ddof is always written because
    MindSpore's default (0) is not torch's (1)."""
    known, dim = literal(call, "dim")
    if isinstance(call.get("dim"), cst.List):  # dim=[1, 2, 3] (timm's StdConv2d): MindSpore's axis takes a tuple, no list
        call.set("dim", cst.Tuple(call.get("dim").elements))
    if known and isinstance(dim, bool):  # torch.std(x, False): the legacy (input, unbiased) form
        call.set("unbiased", call.get("dim"))
        call.remove("dim")
    if call.has("correction"):
        ddof = arg_text(call, "correction")
    elif call.has("unbiased"):
        known, unbiased = literal(call, "unbiased")
        ddof = ("1" if unbiased else "0") if known else f"int({atom(call.get('unbiased'))})"
    else:
        ddof = "1"
    call.remove("correction")
    call.remove("unbiased")
    call.add_keyword("ddof", ddof, before="keepdim")


def _std_like(name):
    return _reduce(
        name,
        signature="input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None",
        args={"dim": "axis", "keepdim": "keepdims"},
        params=[IN, DIM, P("correction", "0", default=True, kind="keyword"), P("keepdim", "True", default=True, kind="keyword")],
        hook=_ddof,
        positional=2,
        rtol=1e-4,
        atol=1e-5,
        results=("result",),
        notes="ddof is always written: torch's default correction is 1, MindSpore's ddof default 0.",
        extra=(
            case(f"result = torch.{name}(x)", X3, rtol=1e-4, atol=1e-5),
            case(f"result = torch.{name}(x, 1, False, True)", X3, rtol=1e-4, atol=1e-5),
            case(f"result = torch.{name}(x, False)", X3, rtol=1e-4, atol=1e-5),
            case(f"result = torch.{name}(x, dim=(0, 2), unbiased=True)", X3, rtol=1e-4, atol=1e-5),
            case(f"result = torch.{name}(x, dim=[1, 2], keepdim=True, unbiased=False)", X3, rtol=1e-4, atol=1e-5),
            case(f"result = torch.{name}(x, [0, 2])", X3, rtol=1e-4, atol=1e-5),
        ),
    )


# -- max / min: one name, three torch overloads ---------------------------------

def _max_min(kind: str):
    pairwise = "maximum" if kind == "max" else "minimum"

    def hook(call, ctx):
        ops = code_of(ctx.ref("mindspore.ops"))
        x = arg_text(call, "input")
        if call.has("other"):
            call.result = cst.parse_expression(f"{ops}.{pairwise}({x}, {arg_text(call, 'other')})")
            return
        if not call.has("dim"):
            call.result = cst.parse_expression(f"{ops}.a{kind}({x})")
            return
        dim = call.get("dim")
        keepdim = arg_text(call, "keepdim")
        reduce = f"{ops}.{kind}({x}, {atom(dim)}, keepdims={keepdim})"
        known, value = literal(call, "dim")
        if known and isinstance(value, int):
            call.result = cst.parse_expression(reduce)
        elif isinstance(dim, cst.Name):  # a variable: a dim or the other tensor, decided when it runs
            tensor = code_of(ctx.ref("mindspore.Tensor"))
            call.result = cst.parse_expression(
                f"{ops}.{pairwise}({x}, {dim.value}) if isinstance({dim.value}, {tensor}) else {reduce}"
            )
        else:
            raise Unconvertible(f"torch.{kind}: cannot tell whether the second argument is a dim or a tensor")

    return fn(
        f"torch.{kind}",
        ms(kind),
        "input, dim=None, keepdim=False, *, other=None, out=None",
        params=[IN, DIM, KEEPDIM],
        inputs=X3,
        hook=hook,
        notes=f"torch.{kind}(x) -> ops.a{kind}(x); torch.{kind}(x, dim) -> ops.{kind} (a (values, indices) tuple); "
        f"torch.{kind}(x, other) -> ops.{pairwise}.",
        extra=(
            case(f"result = torch.{kind}(x)", X3),
            case(f"result = torch.{kind}(x, y)", {**X3, "y": "randn(2, 3, 4)"}),
            case(f"result = torch.{kind}(x, other=y)", {**X3, "y": "randn(2, 3, 4)"}),
            case(f"values, indices = torch.{kind}(x, -1)\nresult = values + indices", X3),
        ),
    )


def _median(call, ctx):
    ops = code_of(ctx.ref("mindspore.ops"))
    x = arg_text(call, "input")
    if not call.has("dim"):
        call.result = cst.parse_expression(f"{ops}.median({ops}.flatten({x}, start_dim=0), axis=0)[0]")


def _norm(call, ctx):
    call.result = norm_of(call.get("input"), call.get("p"), call.get("dim"), call.get("keepdim"), call.get("dtype"), ctx)


def _kthvalue(call, ctx):
    call.result = kthvalue(call.get("input"), call.get("k"), call.get("dim"), call.get("keepdim"), ctx)


def _count_nonzero(call, ctx):
    call.add_keyword("dtype", code_of(ctx.ref("mindspore.int64")))


RULES = [
    _reduce("sum", params=[IN, DIM, KEEPDIM, DTYPE_KW], inputs=X3),
    _reduce("nansum", args={"dim": "axis", "keepdim": "keepdims"}, params=[IN, DIM, KEEPDIM, DTYPE_KW],
            inputs={"x": "tensor([[[1.0, nan, 2.0], [3.0, 4.0, nan]]])"}),
    _reduce("mean", args={"input": "x", "dim": "axis", "keepdim": "keep_dims", "dtype": Unsupported("cast the input first")}),
    _reduce("nanmean", args={"dim": "axis", "keepdim": "keepdims"}, params=[IN, DIM, KEEPDIM, DTYPE_KW]),
    _reduce("prod", args={"dim": "axis", "keepdim": "keep_dims"}, params=[IN, DIM, KEEPDIM, DTYPE_KW], rtol=1e-4),
    _reduce("amax", args={"dim": "axis", "keepdim": "keepdims"}, signature="input, dim=(), keepdim=False, *, out=None"),
    _reduce("amin", args={"dim": "axis", "keepdim": "keepdims"}, signature="input, dim=(), keepdim=False, *, out=None"),
    _reduce("argmax", signature="input, dim=None, keepdim=False"),
    _reduce("argmin", signature="input, dim=None, keepdim=False",
            hook=compose("{ops}.argmin({input}, axis={dim}, keepdims={keepdim}).astype({ms}.int64)"),
            notes="cast to int64: MindSpore's argmin returns int32 indices."),
    _reduce("logsumexp", signature="input, dim, keepdim=False, *, out=None", params=[IN, P("dim", "1"), KEEPDIM]),
    _reduce("all", args={"dim": "axis", "keepdim": "keep_dims"}, signature="input, dim=None, keepdim=False, *, out=None",
            inputs={"x": "bool(2, 3, 4)"}, extra=(case("result = torch.all(x > 0)", X3), case("result = torch.all(x)", X3))),
    _reduce("any", args={"dim": "axis", "keepdim": "keep_dims"}, signature="input, dim=None, keepdim=False, *, out=None",
            inputs={"x": "bool(2, 3, 4)"}, extra=(case("result = torch.any(x > 0)", X3), case("result = torch.any(x)", X3))),
    _std_like("std"),
    _std_like("var"),
    _std_like("std_mean"),
    _std_like("var_mean"),
    _max_min("max"),
    _max_min("min"),
    fn("torch.aminmax", signature="input, *, dim=None, keepdim=False, out=None",
       args={"dim": "axis", "keepdim": "keepdims"},
       params=[IN, P("dim", "1", default=True, kind="keyword"), P("keepdim", "True", default=True, kind="keyword")],
       hook=lambda call, ctx: None if call.has("dim") else call.add_keyword("axis", "None", before="dim"),
       inputs=X3, notes="dim=None is written as axis=None: MindSpore's default is axis=0."),
    fn("torch.median", signature="input, dim=None, keepdim=False, *, out=None",
       args={"dim": "axis", "keepdim": "keepdims"}, params=[IN, DIM, KEEPDIM], positional=1, hook=_median,
       inputs={"x": "randn(3, 5)"}, extra=(case("result = torch.median(x)", {"x": "randn(4, 6)"}),)),
    fn("torch.norm", ms("vector_norm"), "input, p='fro', dim=None, keepdim=False, out=None, dtype=None",
       args={"input": "x", "p": "ord", "dim": "axis", "keepdim": "keepdims"},
       params=[IN, P("p", "1", default=True), P("dim", "1", default=True), KEEPDIM], positional=1, hook=_norm,
       inputs=X3, rtol=1e-4, atol=1e-5,
       notes="ops.vector_norm over dim (all elements when None; 'fro' is the 2-norm), ops.matrix_norm for 'nuc'",
       extra=(case("result = torch.norm(x, p=2, dim=(1, 2))", X3, rtol=1e-4), case("result = torch.norm(x, 3)", X3, rtol=1e-4),
              case('result = torch.norm(x, "fro", dim=1)', X3, rtol=1e-4), case('result = torch.norm(x, "fro")', X3, rtol=1e-4),
              case("result = torch.norm(x, p='nuc')", {"x": "randn(3, 4)"}, rtol=1e-4, atol=1e-5),
              case("result = torch.norm(x, p='nuc', dim=(0, 2), keepdim=True)", X3, rtol=1e-4, atol=1e-5),
              case("result = torch.norm(x, dtype=torch.float64)", X3, rtol=1e-4),
              case("p = 'fro'\nresult = torch.norm(x, p)", X3, rtol=1e-4))),
    fn("torch.linalg.vector_norm", ms("vector_norm"), "x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None",
       args={"dim": "axis", "keepdim": "keepdims"},
       params=[P("x", "x"), P("ord", "1", default=True), P("dim", "1", default=True), KEEPDIM], positional=2,
       inputs=X3, rtol=1e-4, atol=1e-5),
    fn("torch.linalg.matrix_norm", ms("matrix_norm"), "input, ord='fro', dim=(-2, -1), keepdim=False, *, dtype=None, out=None",
       args={"input": "A", "dim": "axis", "keepdim": "keepdims"},
       params=[IN, P("ord", "1", default=True), P("dim", "(0, 2)", default=True), KEEPDIM], positional=2,
       inputs=X3, rtol=1e-4, atol=1e-5),
    fn("torch.linalg.norm", ms("norm"), "input, ord=None, dim=None, keepdim=False, *, out=None, dtype=None",
       args={"input": "A"},
       params=[IN, P("ord", "1", default=True), P("dim", "1", default=True), KEEPDIM], positional=4,
       inputs=X3, rtol=1e-4, atol=1e-5),
    fn("torch.cumsum", signature="input, dim, *, dtype=None, out=None", args={"input": "x", "dim": "axis"},
       params=[IN, P("dim", "1"), DTYPE_KW], inputs=X3, positional=2, rtol=1e-5, atol=1e-5),
    fn("torch.cumprod", signature="input, dim, *, dtype=None, out=None",
       params=[IN, P("dim", "1"), DTYPE_KW], inputs=X3, positional=2, rtol=1e-4, atol=1e-5),
    fn("torch.cummax", signature="input, dim, *, out=None", args={"dim": "axis"}, params=[IN, P("dim", "1")], inputs=X3, positional=2),
    fn("torch.cummin", signature="input, dim, *, out=None", args={"dim": "axis"}, params=[IN, P("dim", "1")], inputs=X3, positional=2,
       hook=wrapped(indices_as_int64), notes=INDEX_NOTE),
    fn("torch.logcumsumexp", signature="input, dim, *, out=None", args={"dim": "axis"}, params=[IN, P("dim", "1")],
       inputs=X3, positional=2, rtol=1e-4, atol=1e-5),
    fn("torch.sort", signature="input, dim=-1, descending=False, *, stable=False, out=None",
       args={"input": "input_x", "dim": "axis", "stable": Unsupported("MindSpore's sort has no stable= argument")},
       params=[IN, P("dim", "1", default=True), P("descending", "True", default=True)], positional=3, inputs=X3,
       hook=wrapped(indices_as_int64), notes=INDEX_NOTE,
       extra=(case("values, indices = torch.sort(x)", X3, results=("values", "indices")),)),
    fn("torch.argsort", signature="input, dim=-1, descending=False, *, stable=False",
       args={"dim": "axis", "stable": Unsupported("MindSpore's argsort has no stable= argument")},
       params=[IN, P("dim", "1", default=True), P("descending", "True", default=True)], positional=3, inputs=X3,
       hook=wrapped(as_int64), notes=INDEX_NOTE),
    fn("torch.msort", inputs=X3),
    fn("torch.topk", signature="input, k, dim=None, largest=True, sorted=True, *, out=None",
       params=[IN, P("k", "2"), P("dim", "1", default=True), P("largest", "False", default=True), P("sorted", "True", default=True)],
       inputs=X3, hook=wrapped(indices_as_int64), notes=INDEX_NOTE),
    fn("torch.kthvalue", ms("sort"), "input, k, dim=-1, keepdim=False, *, out=None",
       params=[IN, P("k", "2"), P("dim", "1", default=True), P("keepdim", "True", default=True)], inputs=X3,
       hook=_kthvalue, notes="no CPU kernel: the k-th entry of ops.sort along dim; " + INDEX_NOTE),
    fn("torch.count_nonzero", signature="input, dim=None", args={"input": "x", "dim": "axis"},
       params=[IN, P("dim", "1", default=True)], positional=2, hook=_count_nonzero,
       inputs={"x": "randint(0, 3, (3, 4))"}, notes="dtype=int64 is written: MindSpore counts in int32 by default."),
    fn("torch.diff", signature="input, n=1, dim=-1, prepend=None, append=None", args={"input": "x", "dim": "axis"},
       params=[IN, P("n", "1", default=True), P("dim", "0", default=True), P("prepend", "p", default=True), P("append", "a", default=True)],
       positional=5, inputs={"x": "randn(3, 4)", "p": "randn(1, 4)", "a": "randn(2, 4)"}),
]
