"""Reductions, scans, sorting and selection as Tensor methods.

Torch spells the axis ``dim``/``keepdim``; MindSpore's methods mostly accept
that too, but some only take ``axis``/``keepdims`` (amax, nanmean, diff ...).
``std``/``var`` differ in their default correction (MindSpore: biased).
Index outputs of topk/sort/argsort/argmin/kthvalue/cummin/count_nonzero/
multinomial are int32 in MindSpore on CPU (bincount's float32): they are cast
to torch's int64, written as the ``ops`` function so that converting the
output again leaves it alone.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P, call_cases
from rewrite_rules.helpers import INDEX_NOTE, as_int64, indices_as_int64
from rewrite_rules.helpers import GENERATOR
from rewrite_rules.api import Example, MethodRule, Unconvertible, Unsupported, render
from rewrite_rules.tensor.binding import atom, code_of, expr, is_call_of, keyword, literal, method, same

X = {"x": "randn(3, 4)"}
X3 = {"x": "randn(2, 3, 4)"}
DIM_KEEP = [P("dim", "1"), P("keepdim", "True", True)]
AXIS = {"dim": "axis", "keepdim": "keepdims"}


def _dim_cases(name, params=DIM_KEEP, results=("result",), inputs=X, **kw):
    target = ", ".join(results)
    return (
        *call_cases(f"{target} = x.{name}()", [], inputs, results=results, **kw),
        *call_cases(f"{target} = x.{name}({{args}})", params, inputs, results=results, **kw),
    )


def _correction(bound, call, ctx):
    """std/var: torch's correction (or unbiased) becomes ddof; MindSpore's
    default is the biased estimate, torch's the unbiased one."""
    dim = bound.get("dim")
    if dim is not None and _is_bool_literal(dim) and not bound.has("unbiased"):
        bound.set("unbiased", dim)  # x.std(True): the legacy (unbiased) overload
        bound.remove("dim")
        dim = None
    correction = bound.get("correction")
    unbiased = bound.get("unbiased")
    if correction is not None and unbiased is not None:
        raise Unconvertible("both unbiased and correction given")
    if correction is not None:
        ddof = correction
    elif unbiased is not None:
        try:
            ddof = cst.Integer("1" if literal(unbiased) else "0")
        except ValueError:
            ddof = expr(f"1 if {atom(unbiased)} else 0")
    else:
        ddof = cst.Integer("1")
    args = []
    if dim is not None:
        args.append(keyword("axis", dim))
    args.append(keyword("ddof", ddof))
    if bound.get("keepdim") is not None:
        args.append(keyword("keepdims", bound.get("keepdim")))
    bound.result = cst.Call(cst.Attribute(call.receiver, cst.Name(bound.rule.target)), args)


def _is_bool_literal(node) -> bool:
    return isinstance(node, cst.Name) and node.value in ("True", "False")


def norm_of(x, p, dim, keepdim, dtype, ctx) -> cst.BaseExpression:
    """torch.norm / Tensor.norm: a vector norm over ``dim`` (all elements when
    None) for numeric p and 'fro' (the 2-norm), the nuclear matrix norm for
    'nuc'. MindSpore's Tensor.norm takes 'fro' only for matrices."""
    try:
        order = literal(p, "fro")
        known = True
    except ValueError:
        order, known = None, False
    args = [cst.Arg(x)]
    options = [("axis", dim), ("keepdims", keepdim), ("dtype", dtype)]
    if known and order == "nuc":
        axis = dim or expr("(-2, -1)")
        args.append(cst.Arg(cst.SimpleString("'nuc'")))
        options[0] = ("axis", axis)
        function = "matrix_norm"
    else:
        function = "vector_norm"
        if known and order not in ("fro", None):
            args.append(cst.Arg(p))
        elif not known:
            args.append(cst.Arg(expr(f"2 if {atom(p)} == 'fro' else {atom(p)}")))
    args += [keyword(name, value) for name, value in options if value is not None]
    return cst.Call(ctx.ref(f"mindspore.ops.{function}"), args)


def _norm(bound, call, ctx):
    bound.result = norm_of(call.receiver, bound.get("p"), bound.get("dim"), bound.get("keepdim"), bound.get("dtype"), ctx)


def _over_all(first: str):
    """median()/nanmedian() without dim reduce all elements to one value;
    MindSpore's methods always take an axis and return (values, indices)."""

    def hook(bound, call, ctx):
        if bound.get("dim") is None:
            if bound.has("keepdim"):
                raise Unconvertible(f"{bound.rule.torch}(keepdim=...) without dim")
            flat = cst.Call(cst.Attribute(call.receiver, cst.Name("flatten")), [])
            bound.result = expr(f"{code_of(flat)}.{first}(0)[0]")

    return hook


def _kthvalue(bound, call, ctx):
    """No CPU kernel: the k-th entry along dim of sort(), as (values, indices)."""
    bound.result = kthvalue(call.receiver, bound.get("k"), bound.get("dim"), bound.get("keepdim"), ctx)


def kthvalue(x, k, dim, keepdim, ctx) -> cst.BaseExpression:
    """(values, int64 indices) of the k-th smallest entries along dim, from ops.sort."""
    dim = dim or expr("-1")
    narrow = f"_kth.narrow({code_of(dim)}, {atom(k)} - 1, 1)"
    select = f"_kth.select({code_of(dim)}, {atom(k)} - 1)"
    try:
        pick = narrow if literal(keepdim, False) else select
    except ValueError:
        pick = f"({narrow} if {atom(keepdim)} else {select})"
    sort, int64 = code_of(ctx.ref("mindspore.ops.sort")), code_of(ctx.ref("mindspore.int64"))
    return expr(f"tuple({pick}.astype({int64}) if i else {pick} for i, _kth in enumerate({sort}({code_of(x)}, {code_of(dim)})))")


_STABLE = {"stable": Unsupported("MindSpore's sort has no stable= argument")}


def _bincount_dtype(bound, call, ctx):
    """Without weights torch counts in int64, MindSpore in float32."""
    if not bound.has("weights"):
        counts = render(bound, ctx.ref("mindspore.ops.bincount"))
        bound.result = as_int64(counts.with_changes(args=[cst.Arg(call.receiver), *counts.args]), ctx)


def _histogram(bound, call, ctx):
    """(hist, bin_edges) from ops.histc over the data's range (or range=)."""
    if bound.has("weight") or bound.has("density"):
        raise Unconvertible("histogram with weight= or density= has no MindSpore equivalent")
    bins = bound.get("bins")
    if not isinstance(bins, cst.Integer):
        raise Unconvertible("histogram with bin edges (or bins through a variable) has no MindSpore equivalent")
    x, ops = atom(call.receiver), code_of(ctx.ref("mindspore.ops"))
    low_high = bound.get("range")
    bounds = code_of(low_high) if low_high is not None else f"({x}.min().item(), {x}.max().item())"
    bound.result = expr(f"(lambda low, high: ({ops}.histc({x}, {bins.value}, low, high), "
                        f"{ops}.linspace(low, high, {int(bins.value) + 1})))(*{bounds})")


def _marked(name: str, reason: str, example: str) -> MethodRule:
    return MethodRule(name, notes=reason, examples=(Example(f"x = x * 2\n{example}", marked=reason[:30]),))


def _multinomial(bound, call, ctx):
    if not bound.has("replacement"):
        bound.set("replacement", "False")  # MindSpore's default is True


def _aminmax(bound, call, ctx):
    x = atom(call.receiver)
    dim, keepdim = bound.get("dim"), bound.get("keepdim")
    if dim is None:
        if keepdim is not None:
            raise Unconvertible("aminmax(keepdim=...) without dim")
        bound.result = expr(f"({x}.min(), {x}.max())")
        return
    keep = f", {code_of(keepdim)}" if keepdim is not None else ""  # by position: graph mode has no keepdims keyword
    bound.result = expr(f"({x}.amin({code_of(dim)}{keep}), {x}.amax({code_of(dim)}{keep}))")


RULES = [
    same("sum", examples=_dim_cases("sum")),
    same("mean", examples=_dim_cases("mean")),
    same("prod", examples=_dim_cases("prod")),
    method("nansum", "dim=None, keepdim=False, *, dtype=None", args=AXIS, examples=_dim_cases("nansum")),
    method("nanmean", "dim=None, keepdim=False, *, dtype=None", args=AXIS, examples=_dim_cases("nanmean")),
    same("logsumexp", examples=call_cases("result = x.logsumexp({args})", DIM_KEEP, X)),
    same("max", notes="x.max(dim) returns (values, indices) in both; .values/.indices attributes do not exist in MindSpore",
         examples=(*call_cases("result = x.max()", [], X),
                   *call_cases("values, indices = x.max({args})", DIM_KEEP, X, results=("values", "indices")))),
    same("min", notes="x.min(dim) returns (values, indices) in both; .values/.indices attributes do not exist in MindSpore",
         examples=(*call_cases("result = x.min()", [], X),
                   *call_cases("values, indices = x.min({args})", DIM_KEEP, X, results=("values", "indices")))),
    method("amax", "dim=(), keepdim=False", args=AXIS, as_positional=True, examples=_dim_cases("amax")),
    method("amin", "dim=(), keepdim=False", args=AXIS, as_positional=True, examples=_dim_cases("amin")),
    same("argmax", examples=_dim_cases("argmax")),
    method("argmin", "dim=None, keepdim=False", function="mindspore.ops.argmin", args=AXIS, wrap=as_int64,
           notes=INDEX_NOTE, examples=_dim_cases("argmin")),
    *(
        method(
            name,
            "dim=None, unbiased=None, keepdim=False, *, correction=None",
            hook=_correction,
            notes="MindSpore's default is the biased estimate: the correction is always written as ddof",
            examples=(
                *_dim_cases(name),
                *call_cases(f"result = x.{name}({{args}})", [P("dim", "1"), P("unbiased", "False"), P("keepdim", "True", True)], X),
                *call_cases(f"result = x.{name}({{args}})", [P("dim", "1"), P("correction", "0", kind="keyword")], X),
                *call_cases(f"result = x.{name}({{args}})", [P("unbiased", "False")], X, shapes=("positional", "keywords")),
                Example(f"s = a.{name}(axis=0, ddof=1)", f"s = a.{name}(axis=0, ddof=1)"),
            ),
        )
        for name in ("std", "var")
    ),
    method("norm", "p='fro', dim=None, keepdim=False, dtype=None", hook=_norm,
           notes="ops.vector_norm over dim (all elements when None; 'fro' is the 2-norm), ops.matrix_norm for 'nuc'",
           examples=(*call_cases("result = x.norm({args})", [P("p", "1"), P("dim", "1"), P("keepdim", "True", True)], X),
                     *call_cases("result = x.norm({args})", [P("p", "float('inf')")], X),
                     *call_cases("result = x.norm()", [], X),
                     *call_cases("result = x.norm({args})", [P("p", "'fro'"), P("dim", "1", True)], X3,
                                 rtol=1e-4, atol=1e-5, shapes=("keywords", "defaults")),
                     *call_cases("result = x.norm({args})", [P("p", "'nuc'")], X, rtol=1e-4, atol=1e-5,
                                 shapes=("positional", "keywords")),
                     *call_cases("result = x.norm({args})", [P("dim", "(1, 2)", kind="keyword"),
                                                             P("dtype", "torch.float64", True, "keyword")], X3,
                                 rtol=1e-4, atol=1e-5, shapes=("keywords", "defaults", "variables")))),
    # by position: with torch's keyword (dim=) graph mode takes a CumsumExt primitive it has no CPU kernel for
    method("cumsum", "dim, *, dtype=None", as_positional=True,
           examples=call_cases("result = x.cumsum({args})", [P("dim", "1")], X)),
    same("cumprod", examples=call_cases("result = x.cumprod({args})", [P("dim", "1")], X)),
    method("cummax", "dim", args={"dim": "axis"},
           examples=call_cases("values, indices = x.cummax({args})", [P("dim", "1")], X, results=("values", "indices"))),
    method("cummin", "dim", function="mindspore.ops.cummin", args={"dim": "axis"}, wrap=indices_as_int64, notes=INDEX_NOTE,
           examples=(*call_cases("values, indices = x.cummin({args})", [P("dim", "1")], X, results=("values", "indices")),
                     *call_cases("result = x.cummin({args})", [P("dim", "0")], X, shapes=("positional",)))),
    method("logcumsumexp", "dim", args={"dim": "axis"}, examples=call_cases("result = x.logcumsumexp({args})", [P("dim", "1")], X)),
    same("all", examples=(
        *call_cases("result = (x > -1).all()", [], X),
        *call_cases("result = (x > -1).all({args})", DIM_KEEP, X))),
    same("any", examples=(
        *call_cases("result = (x > 1).any()", [], X),
        *call_cases("result = (x > 1).any({args})", DIM_KEEP, X))),
    # by position: with torch's keyword (dim=) graph mode takes a MedianDim primitive it has no CPU kernel for
    method("median", "dim=None, keepdim=False", hook=_over_all("median"), as_positional=True,
           notes="median() over all elements returns one value in torch; MindSpore needs an axis",
           examples=(*call_cases("result = x.median()", [], X),
                     *call_cases("values, indices = x.median({args})", DIM_KEEP, X, results=("values", "indices")))),
    method("nanmedian", "dim=None, keepdim=False", args=AXIS, hook=_over_all("nanmedian"),
           notes="nanmedian() over all elements returns one value in torch; MindSpore needs an axis",
           examples=(*call_cases("x[0, 1] = float('nan')\nresult = x.nanmedian()", [], X),
                     *call_cases("values, indices = x.nanmedian({args})", DIM_KEEP, X, results=("values", "indices")))),
    method("count_nonzero", "dim=None", function="mindspore.ops.count_nonzero", args={"dim": "axis"}, wrap=as_int64,
           notes=INDEX_NOTE, examples=_dim_cases("count_nonzero", [P("dim", "1")], inputs={"x": "randint(0, 3, (3, 4))"})),
    method("topk", "k, dim=None, largest=True, sorted=True", function="mindspore.ops.topk", wrap=indices_as_int64,
           notes=INDEX_NOTE, examples=(*call_cases(
               "values, indices = x.topk({args})",
               [P("k", "2"), P("dim", "0", True), P("largest", "False", True), P("sorted", "True", True)],
               X, results=("values", "indices")),
               *call_cases("result = x.topk({args})", [P("k", "3")], X, shapes=("positional",)))),
    method("sort", "dim=-1, descending=False, *, stable=False", function="mindspore.ops.sort", args={"dim": "axis", **_STABLE},
           wrap=indices_as_int64, notes=INDEX_NOTE + "; stable=True is marked", examples=(*call_cases(
               "values, indices = x.sort({args})", [P("dim", "0", True), P("descending", "True", True)],
               X, results=("values", "indices")),
               *call_cases("result = x.sort({args})", [P("dim", "1")], X, shapes=("positional",)),
               Example("x = x * 2\ny = x.sort(stable=True)", marked="stable"))),
    method("argsort", "dim=-1, descending=False, *, stable=False", function="mindspore.ops.argsort",
           args={"dim": "axis", **_STABLE}, wrap=as_int64, notes=INDEX_NOTE, examples=call_cases(
               "result = x.argsort({args})", [P("dim", "0", True), P("descending", "True", True)], X)),
    method("multinomial", "num_samples, replacement=False, *, generator=None", function="mindspore.ops.multinomial",
           args={"generator": GENERATOR}, hook=_multinomial, wrap=as_int64,
           notes="replacement is always written (MindSpore defaults to True); " + INDEX_NOTE,
           # compared by value with replacement (draws replayed); without replacement by shape and dtype: the
           # harness's replay of MindSpore's multinomial does not reproduce torch's draws there yet (reported)
           examples=(*call_cases("result = x.multinomial({args})", [P("num_samples", "2"), P("replacement", "True")],
                                 {"x": "uniform(0.1, 1.0, (3, 4))"}, rtol=0.0, atol=0.0),
                     *call_cases("result = x.multinomial({args})", [P("num_samples", "2")], {"x": "uniform(0.1, 1.0, (3, 4))"},
                                 compare="shape", notes="without_replacement"),
                     *call_cases("result = x.multinomial({args})", [P("num_samples", "1"), P("replacement", "True")],
                                 {"x": "tensor([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])"}, shapes=("positional",), rtol=0.0, atol=0.0))),
    method("bincount", "weights=None, minlength=0", function="mindspore.ops.bincount", hook=_bincount_dtype,
           notes="cast to int64 without weights (MindSpore counts in float32)",
           examples=(*call_cases("result = x.bincount({args})", [P("weights", "w", True), P("minlength", "8", True)],
                                 {"x": "tensor([0, 1, 1, 3, 2, 1])", "w": "rand(6)"}),)),
    same("msort", examples=call_cases("result = x.msort()", [], X)),
    method("kthvalue", "k, dim=-1, keepdim=False", hook=_kthvalue,
           notes="no CPU kernel: the k-th entry of sort() along dim; " + INDEX_NOTE,
           examples=(*call_cases("values, indices = x.kthvalue({args})",
                                 [P("k", "2"), P("dim", "0", True), P("keepdim", "True", True)], X, results=("values", "indices")),
                     *call_cases("result = x.kthvalue({args})", [P("k", "3")], X, shapes=("positional",)))),
    method("aminmax", "*, dim=None, keepdim=False", hook=_aminmax, notes="composed from amin and amax",
           examples=(*call_cases("low, high = x.aminmax()", [], X, results=("low", "high")),
                     *call_cases("low, high = x.aminmax({args})", [P("dim", "1", kind="keyword"), P("keepdim", "True", True, "keyword")],
                                 X, results=("low", "high")))),
    method("diff", "n=1, dim=-1, prepend=None, append=None", args={"dim": "axis"},
           examples=call_cases("result = x.diff({args})", [P("n", "1", True), P("dim", "0", True)], X)),
    same("trace", examples=call_cases("result = x.trace()", [], X)),
    same("histc", examples=call_cases("result = x.histc({args})", [P("bins", "4", True), P("min", "-1.0", True),
                                                                    P("max", "1.0", True)], {"x": "randn(40)"})),
    method("histogram", "bins, *, range=None, weight=None, density=False", hook=_histogram,
           notes="ops.histc and linspace edges; weight=, density= and edge tensors are marked",
           examples=(*call_cases("hist, edges = x.histogram({args})", [P("bins", "5"), P("range", "(-2.0, 2.0)", True, "keyword")],
                                 {"x": "randn(40)"}, results=("hist", "edges"), rtol=1e-5, atol=1e-5,
                                 shapes=("positional", "keywords", "defaults")),
                     Example("x = x * 2\nh = x.histogram(4, density=True)", marked="density"))),
    *(_marked(name, "Quantile has no MindSpore CPU kernel (measured)", f"y = x.{name}(0.3)") for name in ("quantile", "nanquantile")),
    _marked("mode", "MindSpore has no mode (most frequent value and its index)", "values, indices = x.mode(1)"),
]
