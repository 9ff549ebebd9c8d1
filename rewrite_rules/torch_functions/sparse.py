"""Sparse COO matrices and their products with dense ones (the adjacency of
graph networks): torch.sparse_coo_tensor / torch.sparse.FloatTensor ->
``mindspore.COOTensor``, torch.spmm / torch.sparse.mm ->
``ops.SparseTensorDenseMatmul``, ``to_dense()`` / ``to_sparse()``.

Measured on MindSpore 2.10 CPU: a COOTensor times a dense matrix runs through
the SparseTensorDenseMatmul primitive, with gradients for the dense matrix and
the values, duplicate indices summed as torch sums them (equal to torch within
float32 rounding), in PyNative and graph mode. MindSpore's other sparse
product, ``CSRTensor.mm``, has no gradient (CSRMM's bprop is not defined) and
its ``to_dense`` drops duplicate indices, so the conversion keeps COO.

torch stores COO indices as (ndim, nnz), MindSpore as (nnz, ndim): the
indices are transposed. A COOTensor's shape must be a tuple of Python ints.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P
from rewrite_rules.helpers import FACTORY_ARGS
from rewrite_rules.api import ApiRule, Drop, Example, MethodRule, PropertyRule, Unconvertible, Unsupported, \
    assigned_value, code_of
from rewrite_rules.torch_functions.builders import atom, case, fn
from rewrite_rules.torch_functions.integer_inputs import source_argument

_COO = "mindspore.COOTensor"
_DUPLICATES = "tensor([[0, 1, 1, 2, 3, 2], [1, 0, 2, 2, 3, 2]])"  # (2, 2) twice: summed
EDGES = {"i": _DUPLICATES, "v": "uniform(0.5, 1.5, (6,))", "x": "randn(4, 3)"}
_SPARSE_ARGS = {
    **FACTORY_ARGS,
    "check_invariants": Drop("MindSpore does not check a COOTensor's indices"),
    "is_coalesced": Drop("MindSpore does not track whether a COOTensor is coalesced"),
}


def _shape(size: cst.BaseExpression) -> str:
    """The dense shape as the tuple a COOTensor needs."""
    if isinstance(size, cst.Tuple):
        return code_of(size)
    if isinstance(size, cst.List):
        return code_of(cst.Tuple(size.elements))
    if isinstance(size, cst.Call) and isinstance(size.func, cst.Name) and size.func.value == "tuple":  # torch.Size(s)
        if len(size.args) == 1 and isinstance(size.args[0].value, (cst.List, cst.Tuple)):
            return _shape(size.args[0].value)
        return code_of(size)
    return f"tuple({code_of(size)})"


def coo_of(indices: cst.BaseExpression, values: cst.BaseExpression, size: cst.BaseExpression | None, ctx,
           dtype: cst.BaseExpression | None = None) -> cst.BaseExpression:
    coo = code_of(ctx.ref(_COO))
    indices_text = atom(indices)
    values_text = code_of(values) if dtype is None else f"{atom(values)}.astype({code_of(dtype)})"
    shape = _shape(size) if size is not None else f"tuple(({indices_text}.max(axis=1) + 1).tolist())"
    return cst.parse_expression(f"{coo}({indices_text}.T, {values_text}, {shape})")


def _sparse_coo_tensor(call, ctx):
    call.result = coo_of(call.get("indices"), call.get("values"), call.get("size"), ctx, call.get("dtype"))


def _legacy_sparse(call, ctx):
    """torch.sparse.FloatTensor(indices, values[, size]): the values keep their dtype
    (torch refuses values of another dtype than the class's)."""
    values = [a.value for a in call.varargs]
    if any(a.star for a in call.varargs) or len(values) not in (2, 3) or isinstance(values[0], (cst.Integer, cst.Tuple)):
        raise Unconvertible("only the (indices, values[, size]) form converts: MindSpore has no empty COOTensor")
    call.result = coo_of(values[0], values[1], values[2] if len(values) == 3 else None, ctx)


def _sparse_mm(first: str, second: str):
    def hook(call, ctx):
        product = code_of(ctx.ref("mindspore.ops.SparseTensorDenseMatmul"))
        call.result = cst.parse_expression(f"{product}()(*{atom(call.get(first))}.to_tuple(), {code_of(call.get(second))})")

    return hook


_SPARSE_MAKERS = frozenset({"torch.sparse_coo_tensor", "torch.sparse.FloatTensor", "torch.sparse.DoubleTensor",
                            "torch.sparse.LongTensor", "torch.cuda.sparse.FloatTensor"})


def is_sparse(expr: cst.BaseExpression | None, ctx) -> bool:
    """``expr`` (torch source) is a sparse COO tensor the file makes: a sparse constructor's
    result or ``to_sparse()``, or a name last assigned one (pyGAT's ``a = torch.sparse_coo_tensor(...)``
    before ``torch.matmul(a, b)``)."""
    if isinstance(expr, cst.Name):
        expr = assigned_value(ctx, expr)
    if not isinstance(expr, cst.Call):
        return False
    if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in ("to_sparse", "to_sparse_coo") \
            and ctx.analysis.qualified(expr.func) is None:
        return True
    return ctx.analysis.qualified(expr.func) in _SPARSE_MAKERS


def _spmm(call, ctx) -> None:
    """torch.spmm takes a dense first matrix too (GCNII passes a dense adjacency to its layers):
    where the file does not show a sparse one, the product is chosen at run time."""
    _sparse_mm("input", "mat2")(call, ctx)
    matrix = call.get("input")
    if is_sparse(source_argument(call, "input"), ctx) or not isinstance(matrix, (cst.Name, cst.Attribute)):
        return
    mm = code_of(ctx.ref("mindspore.ops.mm"))
    call.result = cst.parse_expression(
        f"{code_of(call.result)} if isinstance({code_of(matrix)}, {code_of(ctx.ref(_COO))}) "
        f"else {mm}({code_of(matrix)}, {code_of(call.get('mat2'))})")


def sparse_product(call, ctx) -> None:
    """torch.matmul(a, b) of a sparse ``a`` the file shows: the sparse product."""
    if is_sparse(source_argument(call, "input"), ctx):
        _sparse_mm("input", "other")(call, ctx)


def _transposed(expr) -> cst.BaseExpression | None:
    """The matrix ``x`` of ``x.t()`` or ``x.T``; None for anything else."""
    if isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Attribute) \
            and expr.func.attr.value == "t":
        return expr.func.value
    if isinstance(expr, cst.Attribute) and expr.attr.value == "T":
        return expr.value
    return None


def sparse_method_product(argument: str):
    """``a.matmul(b)`` / ``a.mm(b)`` of a sparse ``a`` the file shows, or of its transpose
    (pyGAT's backward: ``a.t().matmul(grad)`` with ``a`` from ``ctx.saved_tensors``): the sparse
    product, adjoint_st=True for the transpose (a COOTensor has no t())."""

    def hook(bound, call, ctx):
        source = call.source.func.value if call.source is not None and isinstance(call.source.func, cst.Attribute) \
            else None
        matrix, receiver, flag = source, call.receiver, ""
        if _transposed(source) is not None and _transposed(receiver) is not None:
            matrix, receiver, flag = _transposed(source), _transposed(receiver), "adjoint_st=True"
        if source is not None and is_sparse(matrix, ctx):
            product = code_of(ctx.ref("mindspore.ops.SparseTensorDenseMatmul"))
            bound.result = cst.parse_expression(
                f"{product}({flag})(*{atom(receiver)}.to_tuple(), {code_of(bound.get(argument))})")

    return hook


def _to_sparse(call, ctx):
    if call.call.args:
        raise Unconvertible("to_sparse with sparse_dim or layout: MindSpore converts whole matrices to COO only")
    return cst.Call(cst.Attribute(call.receiver, cst.Name("to_coo")), [])


def _read(template: str):
    """A method of torch's sparse tensors read from the COOTensor's properties ({x}: the receiver)."""

    def hook(call, ctx):
        return cst.parse_expression(template.format(x=atom(call.receiver)))

    return hook


def _is_sparse(receiver, ctx):
    return cst.parse_expression(f"isinstance({code_of(receiver)}, {code_of(ctx.ref(_COO))})")


# a graph network as published: a dense feature product, then the sparse adjacency (GCN, Kipf & Welling)
_GCN = """\
class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x, adj):
        return torch.spmm(adj, self.linear(x))


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass):
        super().__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        return F.log_softmax(self.gc2(x, adj), dim=1)


adj = torch.sparse.FloatTensor(i, v, torch.Size([4, 4]))
model = GCN(3, 5, 2)
result = model(x, adj)
"""
_ADJ = "torch.sparse_coo_tensor(i, v, (4, 4))"
_SPARSE_DENSE = f"adj = {_ADJ}\n"

_COALESCE = ("MindSpore 2.10's COOTensor.coalesce returns wrong indices on CPU (measured: 9 or 17 entries "
             "for 6 with duplicates, varying between calls); sum the duplicates by hand (e.g. densify with to_dense())")


RULES = [
    fn("torch.sparse_coo_tensor", _COO,
       "indices, values, size=None, *, dtype=None, device=None, pin_memory=False, requires_grad=False, "
       "check_invariants=None, is_coalesced=None",
       args=_SPARSE_ARGS, params=[P("indices", "i"), P("values", "v"), P("size", "(4, 4)", default=True)],
       inputs=EDGES, template="result = torch.sparse_coo_tensor({args}).to_dense()", hook=_sparse_coo_tensor,
       notes="mindspore.COOTensor(indices.T, values, shape): MindSpore's indices are (nnz, ndim); a size not "
             "given is the largest index + 1, as torch infers it",
       extra=(case("result = torch.sparse_coo_tensor(i, v, [5, 4], dtype=torch.float64).to_dense()", EDGES),
              case("n = 4\nresult = torch.sparse_coo_tensor(i, v, torch.Size([n, n])).to_dense()", EDGES),
              Example("adj = torch.sparse_coo_tensor(i, v, (n, n))", "adj = mindspore.COOTensor(i.T, v, (n, n))"))),
    ApiRule("torch.sparse.FloatTensor", _COO, signature="*args, device=None", args={"device": FACTORY_ARGS["device"]},
            hook=_legacy_sparse, aliases=("torch.sparse.DoubleTensor", "torch.sparse.LongTensor", "torch.cuda.sparse.FloatTensor"),
            notes="the legacy (indices, values, size) constructor: mindspore.COOTensor(indices.T, values, shape)",
            examples=(case("result = torch.sparse.FloatTensor(i, v, torch.Size([4, 4])).to_dense()", EDGES),
                      case("shape = (4, 5)\nresult = torch.sparse.FloatTensor(i, v, shape).to_dense()", EDGES),
                      case("result = torch.sparse.FloatTensor(i, v).to_dense()", EDGES),
                      Example(_GCN, inputs=EDGES, rtol=1e-5, atol=1e-6, notes="two-layer GCN"),
                      Example("adj = torch.sparse.FloatTensor(4, 4)", marked="(indices, values[, size])"))),
    fn("torch.spmm", "mindspore.ops.SparseTensorDenseMatmul", "input, mat2", params=[P("input", _ADJ), P("mat2", "x")],
       inputs=EDGES, hook=_spmm,
       notes="SparseTensorDenseMatmul of the COOTensor's (indices, values, shape) and the dense matrix; where the "
             "file does not show the first matrix is sparse, ops.mm if it is dense at run time (torch.spmm takes both)",
       extra=(Example("y = torch.spmm(adj, x)", "y = (\n    ops.SparseTensorDenseMatmul()(*adj.to_tuple(), x)\n"
                      "    if isinstance(adj, mindspore.COOTensor)\n    else ops.mm(adj, x)\n)"),
              case("adj = torch.sparse_coo_tensor(i, v, (4, 4)).to_dense()\nresult = torch.spmm(adj, x)", EDGES),
              case(f"adj = {_ADJ}\nresult = torch.spmm(adj, x.double())",
                   {**EDGES, "v": "uniform(0.5, 1.5, (6,), dtype='float64')"}))),
    fn("torch.sparse.mm", "mindspore.ops.SparseTensorDenseMatmul", "sparse, dense, reduce=None",
       args={"reduce": Unsupported("MindSpore's sparse product only sums")},
       params=[P("sparse", _ADJ), P("dense", "x")], inputs=EDGES, hook=_sparse_mm("sparse", "dense"),
       notes="SparseTensorDenseMatmul of the COOTensor's (indices, values, shape) and the dense matrix",
       extra=(Example("y = torch.sparse.mm(adj, x, reduce='max')", marked="only sums"),)),
    MethodRule("to_dense", rename="to_dense", arity=(0, 0),
               notes="a COOTensor's to_dense() has the same name",
               examples=(case(_SPARSE_DENSE + "result = adj.to_dense()", EDGES),)),
    MethodRule("to_sparse", hook=_to_sparse, arity=(0, 1),
               notes="to_coo(): a COO matrix, as torch's to_sparse() makes",
               examples=(case("d = torch.sparse_coo_tensor(i, v, (4, 4)).to_dense()\nadj = d.to_sparse()\n"
                              "result = (torch.spmm(adj, x), adj.to_dense())", EDGES),
                         Example("s = d.to_sparse()", "s = d.to_coo()"),
                         Example("s = d.to_sparse(1)", marked="sparse_dim"))),
    MethodRule("to_sparse_coo", hook=_to_sparse, arity=(0, 0),
               notes="to_coo() (its indices are int32, torch's int64)",
               examples=(case("d = torch.sparse_coo_tensor(i, v, (4, 4)).to_dense()\nadj = d.to_sparse_coo()\n"
                              "result = (adj._values(), adj.to_dense())", EDGES),
                         Example("s = d.to_sparse_coo()", "s = d.to_coo()"),)),
    MethodRule("coalesce", notes=_COALESCE,
               examples=(Example("c = adj.coalesce()", marked="wrong indices on CPU"),)),
    *(MethodRule(name, hook=_read("{x}.indices.T"), arity=(0, 0),
                 notes="the COOTensor's indices, transposed to torch's (ndim, nnz)",
                 # torch's indices() needs a coalesced tensor (sorted, no duplicates); _indices() reads them as given
                 examples=(case(f"adj = torch.sparse_coo_tensor(i, v, (4, 4), is_coalesced=True)\nresult = adj.{name}()",
                                {**EDGES, "i": "tensor([[0, 1, 2, 3], [1, 0, 2, 3]])", "v": "uniform(0.5, 1.5, (4,))"}),
                           Example(f"i = adj.{name}()", "i = adj.indices.T"))) for name in ("_indices", "indices")),
    MethodRule("_values", hook=_read("{x}.values"), arity=(0, 0), notes="the COOTensor's values",
               examples=(case(_SPARSE_DENSE + "result = adj._values()", EDGES), Example("v = adj._values()", "v = adj.values"))),
    MethodRule("_nnz", hook=_read("{x}.values.shape[0]"), arity=(0, 0), notes="the number of the COOTensor's values",
               examples=(case(_SPARSE_DENSE + "result = adj._nnz()", EDGES), Example("n = adj._nnz()", "n = adj.values.shape[0]"))),
    PropertyRule("is_sparse", hook=_is_sparse, notes="isinstance(x, mindspore.COOTensor)",
                 examples=(case(_SPARSE_DENSE + "result = (adj.is_sparse, x.is_sparse)", EDGES),
                           Example("s = adj.is_sparse", "s = isinstance(adj, mindspore.COOTensor)"))),
]
