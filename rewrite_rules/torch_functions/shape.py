"""Shape, joining, splitting and indexing functions: torch.split/chunk/reshape/
squeeze/transpose/permute/gather/scatter/where/masked_fill/narrow/roll/flip/
tril/triu/meshgrid..."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P
from rewrite_rules.api import Arg, Drop, Example, Unconvertible, Unsupported, code_of, is_number
from rewrite_rules.nn.float_args import as_float
from rewrite_rules.tensor.binding import atom
from rewrite_rules.tensor.shape import index_copy_of, scatter_elements, scatter_reduce_of, select_of, take_along
from rewrite_rules.torch_functions.builders import IN, X, arg_text, case, compose, fn, literal, ms
from rewrite_rules.torch_functions.integer_inputs import is_bool_tensor, source_argument

X3 = {"x": "randn(2, 3, 4)"}
AB = {"a": "randn(2, 3)", "b": "randn(2, 3)"}
TENSORS = P("tensors", "[a, b]")
DIM0 = P("dim", "1", default=True)
_INT32_INDICES = {"int64": "int32"}


def _joined(name, target=None, args=None, inputs=AB, **options):
    return fn(f"torch.{name}", target, "tensors, *, out=None", args=args, params=[TENSORS], inputs=inputs, **options)


def _meshgrid(call, ctx):
    """torch's default indexing is 'ij' (MindSpore's 'xy'); a list argument is
    spread into MindSpore's varargs."""
    if len(call.varargs) == 1 and isinstance(call.varargs[0].value, (cst.List, cst.Tuple)):
        elements = call.varargs[0].value.elements
        call.varargs[:] = [cst.Arg(e.value) for e in elements]
    if not call.has("indexing") or literal(call, "indexing") == (True, None):
        call.set("indexing", '"ij"')


def _where(call, ctx):
    if not call.has("input") and not call.has("other"):
        ops = code_of(ctx.ref("mindspore.ops"))
        call.result = cst.parse_expression(f"{ops}.unbind({ops}.nonzero({arg_text(call, 'condition')}), 1)")
    elif not (call.has("input") and call.has("other")):
        raise Unconvertible("torch.where needs both input and other (or neither)")
    elif not is_bool_tensor(source_argument(call, "condition"), ctx):
        # torch also takes a uint8 condition (a ByteTensor mask), MindSpore's Select kernel
        # only a bool one: the cast is exact for both (measured)
        call.set("condition", f"{atom(call.get('condition'))}.bool()")


def _squeeze(call, ctx):
    known, dim = literal(call, "dim")
    if known and isinstance(dim, list):
        call.set("dim", repr(tuple(dim)))


def _scatter(call, ctx):
    """A scalar value (``value=``, or a number where src goes: torch's value overload) becomes a
    src tensor of the input's dtype: MindSpore's ScatterValue kernel refuses an int value on CPU
    ("Select CPU operator[ScatterValue] fail! Unsupported data type!"), whatever the tensor's dtype."""
    if call.has("reduce"):
        raise Unconvertible("scatter(reduce=...) is deprecated in torch; use scatter_reduce")
    if call.has("value") and call.has("src"):
        raise Unconvertible("scatter takes src or value, not both")
    source_src = source_argument(call, "src", 3)
    if call.has("value") or (source_src is not None and is_number(ctx, source_src)):
        value = arg_text(call, "value") if call.has("value") else arg_text(call, "src")
        ops = code_of(ctx.ref("mindspore.ops"))
        x, index = arg_text(call, "input"), arg_text(call, "index")
        call.set("src", f"{ops}.full({index}.shape, {value}, dtype={x}.dtype)")
        call.remove("value")


def _atleast(name):
    def hook(call, ctx):
        if len(call.varargs) > 1:
            call.varargs[:] = [cst.Arg(cst.Tuple([cst.Element(a.value) for a in call.varargs]))]

    return fn(
        f"torch.{name}", signature="*tensors", params=[P("t", "x", kind="positional")], inputs={"x": "randn(3)"},
        hook=hook, extra=(case(f"result = torch.{name}(x, y)", {"x": "randn(3)", "y": "randn(2, 2)"}),
                          case(f"result = torch.{name}(s)", {"s": "tensor(2.5)"})),
    )


# indices broadcast against the input on every axis but dim
TAKE_BROADCAST = {"x": "randn(2, 3)", "i": "tensor([[1], [0]])"}


def _scatter_add(call, ctx):
    call.result = scatter_elements(call.get("input"), call.get("dim"), call.get("index"), call.get("src"), "add", ctx)


def _scatter_reduce(call, ctx):
    call.result = scatter_reduce_of(call.get("input"), call.get("dim"), call.get("index"), call.get("src"),
                                    call.get("reduce"), call.get("include_self"), ctx)


def _index_copy(call, ctx):
    call.result = index_copy_of(call.get("input"), call.get("dim"), call.get("index"), call.get("source"), ctx)


def _masked_fill(call, ctx):
    """The Tensor method, which casts the value to the tensor's dtype as torch does
    (ops.masked_fill refuses an int value for a float tensor: "Select CPU operator[MaskedFill] fail")."""
    call.result = cst.parse_expression(
        f"{atom(call.get('input'))}.masked_fill({code_of(call.get('mask'))}, {code_of(call.get('value'))})")


def _masked_scatter(call, ctx):
    call.result = cst.Call(cst.Attribute(call.get("input"), cst.Name("masked_scatter")),
                           [cst.Arg(call.get("mask")), cst.Arg(call.get("source"))])


def _select(call, ctx):
    subscript = select_of(call.get("input"), call.get("dim"), call.get("index"), ctx)
    if subscript is not None:
        call.result = subscript
        return
    compose("{ops}.gather({input}, {ms}.Tensor({index} % {input}.shape[{dim}]), {dim})")(call, ctx)


def _take_along_dim(call, ctx):
    call.result = take_along(call.get("input"), call.get("indices"), call.get("dim"), ctx)


def _ops(ctx) -> str:
    return code_of(ctx.ref("mindspore.ops"))


def _roll(call, ctx):
    """roll as gathers along each dim: index (arange(n) - shift) % n."""
    ops, x = _ops(ctx), arg_text(call, "input")
    known_dims, dims = literal(call, "dims")
    if not known_dims:
        raise Unconvertible("torch.roll with dims through a variable: the composition needs literal dims")
    if dims is None:
        shift = arg_text(call, "shifts")
        flat = f"{ops}.reshape({x}, (-1,))"
        index = f"({ops}.arange({x}.size) - {shift}) % {x}.size"
        call.result = cst.parse_expression(f"{ops}.reshape({ops}.gather({flat}, {index}, 0), {x}.shape)")
        return
    dims = list(dims) if isinstance(dims, (tuple, list)) else [dims]
    known_shifts, shifts = literal(call, "shifts")
    written = call.get("shifts")
    if known_shifts:
        shifts = [repr(v) for v in (shifts if isinstance(shifts, (tuple, list)) else [shifts])]
    elif isinstance(written, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement) for e in written.elements):
        shifts = [atom(e.value) for e in written.elements]  # (-self.shift[0], -self.shift[1])
    elif len(dims) == 1:
        shifts = [arg_text(call, "shifts")]
    else:  # one shift per dim, read from the sequence (torch requires as many as dims)
        shifts = [f"{arg_text(call, 'shifts')}[{i}]" for i in range(len(dims))]
    if len(shifts) != len(dims):
        raise Unconvertible("torch.roll: shifts and dims differ in length")
    result = x
    for shift, dim in zip(shifts, dims):
        index = f"({ops}.arange({x}.shape[{dim}]) - {shift}) % {x}.shape[{dim}]"
        result = f"{ops}.gather({result}, {index}, {dim})"
    call.result = cst.parse_expression(result)


def _nonzero(call, ctx):
    known, as_tuple = literal(call, "as_tuple")
    if not known:
        raise Unconvertible("as_tuple through a variable")
    if as_tuple:  # the NonZeroExt kernel behind as_tuple=True is missing on CPU
        call.result = cst.parse_expression(f"{_ops(ctx)}.unbind({_ops(ctx)}.nonzero({arg_text(call, 'input')}), 1)")


def _bincount(call, ctx):
    if not call.has("weights"):
        from rewrite_rules.torch_functions.builders import render_default

        int64 = code_of(ctx.ref("mindspore.int64"))
        call.result = cst.parse_expression(f"{render_default(call, ctx)}.astype({int64})")


RULES = [
    _joined("hstack"),
    _joined("vstack", args={"tensors": "inputs"}),
    _joined("row_stack", ms("vstack"), args={"tensors": "inputs"}),
    _joined("dstack"),
    _joined("column_stack"),
    fn("torch.split", signature="tensor, split_size_or_sections, dim=0",
       args={"dim": "axis"}, params=[P("tensor", "x"), P("split_size_or_sections", "2"), P("dim", "1", default=True)],
       positional=2, inputs={"x": "randn(4, 5)"}, extra=(case("result = torch.split(x, [1, 3])", {"x": "randn(4, 5)"}),)),
    fn("torch.tensor_split", signature="input, indices_or_sections, dim=0",
       args={"dim": "axis"}, params=[P("input", "x", kind="positional"), P("indices_or_sections", "3", kind="positional"), P("dim", "1", default=True)],
       positional=2, inputs={"x": "randn(4, 5)"}, extra=(case("result = torch.tensor_split(x, [1, 3], 1)", {"x": "randn(4, 5)"}),)),
    fn("torch.chunk", signature="input, chunks, dim=0", args={"dim": "axis"},
       params=[IN, P("chunks", "2"), P("dim", "1", default=True)], positional=2, inputs={"x": "randn(4, 5)"}),
    fn("torch.unbind", signature="input, dim=0", params=[IN, DIM0], inputs=X3),
    fn("torch.reshape", signature="input, shape", params=[IN, P("shape", "(4, -1)")], inputs=X3),
    fn("torch.unflatten", ms("reshape"), "input, dim, sizes", params=[IN, P("dim", "-1"), P("sizes", "(2, 2)")],
       inputs=X3, hook=compose("{ops}.reshape({input}, {input}.shape[:{dim}] + tuple({sizes}) + {input}.shape[{dim}:][1:])"),
       notes="composed from reshape: MindSpore has no unflatten function."),
    fn("torch.squeeze", signature="input, dim=None", args={"dim": "axis"}, params=[IN, P("dim", "1", default=True)],
       hook=_squeeze, inputs={"x": "randn(2, 1, 3, 1)"}, positional=1,
       extra=(case("result = torch.squeeze(x, (1, 3))", {"x": "randn(2, 1, 3, 1)"}),)),
    fn("torch.unsqueeze", signature="input, dim", params=[IN, P("dim", "1")], inputs=X3),
    fn("torch.transpose", ms("swapaxes"), "input, dim0, dim1", args={"dim0": "axis0", "dim1": "axis1"},
       params=[IN, P("dim0", "0"), P("dim1", "2")], positional=3, inputs=X3),
    fn("torch.swapaxes", signature="input, axis0, axis1", params=[IN, P("axis0", "0"), P("axis1", "2")], inputs=X3),
    fn("torch.swapdims", signature="input, dim0, dim1", params=[IN, P("dim0", "0"), P("dim1", "2")], inputs=X3),
    fn("torch.permute", signature="input, dims", args={"dims": "axis"}, params=[IN, P("dims", "(2, 0, 1)")], inputs=X3,
       positional=2),
    fn("torch.movedim", signature="input, source, destination", args={"input": "x"}, positional=3,
       params=[IN, P("source", "0"), P("destination", "2")], inputs=X3),
    fn("torch.moveaxis", signature="input, source, destination", args={"input": "x"}, positional=3,
       params=[IN, P("source", "0"), P("destination", "2")], inputs=X3),
    fn("torch.t", signature="input", inputs={"x": "randn(3, 4)"}),
    fn("torch.gather", ms("gather_elements"), "input, dim, index, *, sparse_grad=False, out=None",
       args={"sparse_grad": Drop("gradients are dense in MindSpore")},
       params=[IN, P("dim", "1"), P("index", "i")], inputs={"x": "randn(3, 4)", "i": "randint(0, 4, (3, 2))"}),
    fn("torch.scatter", signature="input, dim, index, src=None, *, value=None, reduce=None", args={"dim": "axis"},
       params=[IN, P("dim", "1"), P("index", "i"), P("src", "s")], positional=4, hook=_scatter,
       inputs={"x": "randn(3, 4)", "i": "tensor([[0, 1], [2, 3], [3, 0]])", "s": "randn(3, 2)"},
       extra=(case("result = torch.scatter(x, 1, i, value=2.5)", {"x": "randn(3, 4)", "i": "tensor([[0, 1], [2, 3], [3, 0]])"}),
              # one-hot rows as research code builds them: an int value, positionally too
              case("result = torch.scatter(torch.zeros(3, 4), 1, i, 1)", {"i": "tensor([[0], [2], [3]])"}),
              case("result = torch.scatter(torch.zeros(3, 4, dtype=torch.long), 1, i, value=1)", {"i": "tensor([[0], [2], [3]])"}),
              case("result = torch.scatter(x > 0, 1, i, True)", {"x": "randn(3, 4)", "i": "tensor([[0], [2], [3]])"}))),
    fn("torch.scatter_add", ms("tensor_scatter_elements"), "input, dim, index, src", hook=_scatter_add,
       params=[IN, P("dim", "1"), P("index", "i"), P("src", "s")],
       notes="ops.tensor_scatter_elements(..., 'add') on the index-shaped part of src",
       inputs={"x": "randn(3, 4)", "i": "tensor([[0, 1], [2, 2], [3, 0]])", "s": "randn(3, 2)"},
       extra=(case("result = torch.scatter_add(x, 1, i, s)", {"x": "randn(3, 4)", "i": "tensor([[0, 1], [2, 2]])",
                                                              "s": "randn(3, 5)"}),)),
    fn("torch.scatter_reduce", ms("tensor_scatter_elements"), "input, dim, index, src, reduce, *, include_self=True",
       hook=_scatter_reduce, params=[IN, P("dim", "1"), P("index", "i"), P("src", "s"), P("reduce", "'sum'")],
       marked={"variables": "must be literals"},
       notes="'sum' with include_self=True as ops.tensor_scatter_elements(..., 'add'); the others are marked",
       inputs={"x": "randn(3, 4)", "i": "tensor([[0, 1], [2, 2], [3, 0]])", "s": "randn(3, 2)"},
       extra=(Example("y = torch.scatter_reduce(x, 1, i, s, 'mean')", marked="mean"),)),
    fn("torch.index_copy", "mindspore.Tensor.index_add", "input, dim, index, source, *, out=None", hook=_index_copy,
       params=[IN, P("dim", "0"), P("index", "i"), P("source", "s")],
       notes="no CPU kernel: index_fill with 0, then index_add of the source",
       inputs={"x": "randn(3, 4)", "i": "tensor([2, 0])", "s": "randn(2, 4)"}),
    fn("torch.masked_scatter", "mindspore.Tensor.masked_scatter", "input, mask, source", hook=_masked_scatter,
       params=[IN, P("mask", "m"), P("source", "s")], inputs={"x": "randn(3, 4)", "m": "bool(3, 4)", "s": "randn(3, 4)"},
       notes="the Tensor method (MindSpore has no ops.masked_scatter)"),
    fn("torch.index_select", signature="input, dim, index, *, out=None", args={"dim": "axis"},
       params=[IN, P("dim", "1"), P("index", "i")], positional=3, inputs={"x": "randn(3, 4)", "i": "tensor([0, 3, 1])"}),
    fn("torch.masked_fill", "mindspore.Tensor.masked_fill", "input, mask, value", params=[IN, P("mask", "m"), P("value", "-1.5")],
       inputs={"x": "randn(3, 4)", "m": "bool(3, 4)"}, hook=_masked_fill,
       notes="the Tensor method: it casts the value to the tensor's dtype, as torch does (ops.masked_fill fails on "
             "CPU for an int value and a float tensor)",
       extra=(case("result = torch.masked_fill(x, x > 0, 0)", X), case("result = torch.masked_fill(x * 2, x > 0, -1)", X),
              case("result = torch.masked_fill(i, i > 2, 1.5)", {"i": "randint(0, 5, (3, 4))"}),
              case("result = torch.masked_fill(x, x > 0, float('-inf'))", X))),
    fn("torch.masked_select", signature="input, mask, *, out=None", params=[IN, P("mask", "m")],
       inputs={"x": "randn(3, 4)", "m": "bool(3, 4)"}),
    fn("torch.narrow", signature="input, dim, start, length", args={"dim": "axis"}, positional=4,
       params=[IN, P("dim", "1"), P("start", "1"), P("length", "2")], inputs=X3),
    fn("torch.roll", ms("gather"), "input, shifts, dims=None", params=[IN, P("shifts", "1"), P("dims", "1", default=True)],
       hook=_roll, inputs={"x": "randn(3, 4)"}, marked={"variables": "dims through a variable"},
       notes="composed from gather: MindSpore's Roll kernel is missing on CPU; dims must be literal.",
       extra=(case("result = torch.roll(x, (1, -1), (0, 1))", {"x": "randn(3, 4)"}),
              case("s = 2\nresult = torch.roll(x, s, 1)", {"x": "randn(3, 4)"}),
              # shifts through variables over several dims (timm's Swin: shifts=(-self.shift[0], -self.shift[1]))
              case("s = (1, 2)\nresult = torch.roll(x, shifts=(-s[0], -s[1]), dims=(1, 2))", X3),
              case("s = (1, -2)\nresult = torch.roll(x, shifts=s, dims=(1, 2))", X3))),
    fn("torch.flip", signature="input, dims", params=[IN, P("dims", "(0, 2)")], inputs=X3),
    fn("torch.fliplr", signature="input", inputs=X3),
    fn("torch.flipud", signature="input", inputs=X3),
    fn("torch.rot90", signature="input, k=1, dims=(0, 1)", args={"k": Arg(explicit=True), "dims": Arg(explicit=True)},
       params=[IN, P("k", "3", default=True), P("dims", "(1, 2)", default=True)], inputs=X3,
       notes="k and dims are always written: MindSpore has no defaults for them."),
    fn("torch.tril", signature="input, diagonal=0, *, out=None", params=[IN, P("diagonal", "1", default=True)],
       inputs={"x": "randn(4, 5)"}),
    fn("torch.triu", signature="input, diagonal=0, *, out=None", params=[IN, P("diagonal", "-1", default=True)],
       inputs={"x": "randn(4, 5)"}),
    fn("torch.meshgrid", signature="*tensors, indexing=None", params=[P("t1", "a", kind="positional"), P("t2", "b", kind="positional"),
       P("indexing", '"xy"', default=True, kind="keyword")], hook=_meshgrid, inputs={"a": "randn(3)", "b": "randn(4)"},
       notes="indexing='ij' is written when omitted: torch's default is 'ij', MindSpore's 'xy'.",
       extra=(case("result = torch.meshgrid([a, b])", {"a": "randn(3)", "b": "randn(4)"}),)),
    fn("torch.broadcast_to", signature="input, size", args={"size": "shape"}, positional=1,
       params=[IN, P("size", "(2, 3, 4)")], inputs={"x": "randn(3, 1)"}),
    fn("torch.tile", signature="input, dims", params=[IN, P("dims", "(2, 1)")], inputs={"x": "randn(3, 4)"}),
    fn("torch.repeat_interleave", signature="input, repeats=None, dim=None, *, output_size=None",
       args={"dim": "axis", "output_size": Drop("only a hint for torch")},
       params=[IN, P("repeats", "2"), P("dim", "1", default=True)], positional=2, inputs={"x": "randn(3, 4)"}),
    fn("torch.take", ms("gather"), "input, index", params=[IN, P("index", "i")],
       hook=compose("{ops}.gather({ops}.reshape({input}, (-1,)), {index}, 0)"),
       notes="composed from gather: MindSpore's Take kernel is missing on CPU.",
       inputs={"x": "randn(3, 4)", "i": "tensor([[0, 5], [11, 2]])"}),
    fn("torch.take_along_dim", "mindspore.numpy.take_along_axis", "input, indices, dim=None, *, out=None",
       params=[IN, P("indices", "i"), P("dim", "1", default=True)], inputs={"x": "randn(3, 4)", "i": "randint(0, 4, (3, 2))"},
       hook=_take_along_dim,
       notes="mindspore.numpy.take_along_axis: broadcasts like torch, and flattens when dim is None.",
       extra=(case("result = torch.take_along_dim(x, i, dim=0)", TAKE_BROADCAST),
              case("result = torch.take_along_dim(x, i, 1)", TAKE_BROADCAST),
              case("result = torch.take_along_dim(x, x.argmax())", TAKE_BROADCAST))),
    fn("torch.diag", signature="input, diagonal=0, *, out=None", params=[IN, P("diagonal", "1", default=True)],
       hook=compose("({ops}.diagflat({input}, {diagonal}) if {input}.ndim == 1 else {ops}.diagonal({input}, {diagonal}))"),
       notes="diagflat for vectors, diagonal for matrices: MindSpore's diag does not extract diagonals.",
       inputs={"x": "randn(4)"}, extra=(case("result = torch.diag(x)", {"x": "randn(3, 3)"}),
                                        case("result = torch.diag(x, -1)", {"x": "randn(3, 3)"}))),
    fn("torch.diagonal", signature="input, offset=0, dim1=0, dim2=1",
       params=[IN, P("offset", "1", default=True), P("dim1", "1", default=True), P("dim2", "2", default=True)], inputs=X3),
    fn("torch.diag_embed", signature="input, offset=0, dim1=-2, dim2=-1",
       params=[IN, P("offset", "1", default=True), P("dim1", "0", default=True), P("dim2", "2", default=True)],
       inputs={"x": "randn(2, 3)"}),
    fn("torch.diagflat", signature="input, offset=0", params=[IN, P("offset", "-1", default=True)], inputs={"x": "randn(2, 2)"}),
    _atleast("atleast_1d"),
    _atleast("atleast_2d"),
    _atleast("atleast_3d"),
    fn("torch.block_diag", signature="*tensors", params=[P("a", "a", kind="positional"), P("b", "b", kind="positional")],
       inputs={"a": "randn(2, 2)", "b": "randn(1, 3)"}),
    fn("torch.cartesian_prod", signature="*tensors", params=[P("a", "a", kind="positional"), P("b", "b", kind="positional")],
       inputs={"a": "tensor([1, 2, 3])", "b": "tensor([4, 5])"}),
    fn("torch.combinations", signature="input, r=2, with_replacement=False",
       params=[IN, P("r", "3", default=True), P("with_replacement", "True", default=True)], inputs={"x": "tensor([1, 2, 3, 4])"}),
    fn("torch.trace", signature="input", inputs={"x": "randn(4, 4)"}),
    fn("torch.numel", signature="input", inputs=X3),
    fn("torch.clone", ms("deepcopy"), "input, *, memory_format=None", hook=compose("{input}.copy()"),
       args={"memory_format": Drop("MindSpore has one memory format")}, inputs=X3,
       notes="Tensor.copy(): MindSpore's Clone kernel is missing on CPU."),
    fn("torch.select", ms("gather"), "input, dim, index", params=[IN, P("dim", "1"), P("index", "2")], inputs=X3,
       hook=_select, notes="x[:, index] for a literal dim, else composed from gather with a scalar index.",
       extra=(case("result = torch.select(x, -1, -2)", X3), case("torch.select(x, 1, 2).fill_(0.0)\nresult = x", X3))),
    fn("torch.where", signature="condition, input=None, other=None, *, out=None", hook=_where,
       params=[P("condition", "c"), IN, P("other", "y")], inputs={"c": "bool(3, 4)", "x": "randn(3, 4)", "y": "randn(3, 4)"},
       extra=(case("result = torch.where(x > 0)", {"x": "randn(3, 4)"}),
              case("result = torch.where(x > 0, x, 0.0)", {"x": "randn(3, 4)"}))),
    fn("torch.nonzero", signature="input, *, out=None, as_tuple=False", hook=_nonzero,
       marked={"variables": "as_tuple through a variable"},
       params=[IN, P("as_tuple", "True", default=True, kind="keyword")], inputs={"x": "randint(0, 2, (3, 4))"}),
    fn("torch.searchsorted", signature="sorted_sequence, input, *, out_int32=False, right=False, side=None, out=None, sorter=None",
       args={"input": "values"}, positional=2,
       params=[P("sorted_sequence", "s"), P("input", "v"), P("right", "True", default=True, kind="keyword")],
       inputs={"s": "tensor([[1.0, 3.0, 5.0, 7.0], [2.0, 4.0, 6.0, 8.0]])", "v": "tensor([[3.0, 6.0], [1.0, 9.0]])"}),
    fn("torch.bucketize", ms("searchsorted"), "input, boundaries, *, out_int32=False, right=False, out=None",
       hook=compose("{ops}.searchsorted({boundaries}, {input}, out_int32={out_int32}, right={right})"),
       notes="as searchsorted(boundaries, input): MindSpore's bucketize returns int32 and its CPU kernel fails "
       "after a searchsorted call in the same process (measured).",
       params=[IN, P("boundaries", "b"), P("right", "True", default=True, kind="keyword")],
       inputs={"x": "tensor([[1.0, 6.0], [3.0, 9.0]])", "b": "tensor([1.0, 3.0, 5.0, 7.0])"}),
    fn("torch.bincount", signature="input, weights=None, minlength=0", hook=_bincount,
       notes="cast to int64 without weights: MindSpore counts in float32.",
       params=[IN, P("weights", "w", default=True), P("minlength", "8", default=True)],
       inputs={"x": "tensor([0, 1, 1, 3, 2, 1])", "w": "rand(6)"}),
    fn("torch.histc", signature="input, bins=100, min=0, max=0, *, out=None",
       params=[IN, P("bins", "4", default=True), P("min", "-1.0", default=True), P("max", "1.0", default=True)],
       inputs={"x": "randn(20)"}),
    fn("torch.cdist", signature="x1, x2, p=2.0, compute_mode='use_mm_for_euclid_dist_if_necessary'",
       # MindSpore refuses an int p ("Cdist(p=int)")
       args={"compute_mode": Drop("only chooses torch's algorithm"), "p": Arg(value=as_float)},
       params=[P("x1", "a"), P("x2", "b"), P("p", "1.0", default=True)], inputs={"a": "randn(3, 4)", "b": "randn(5, 4)"},
       rtol=1e-4, atol=1e-5,
       extra=(case("result = torch.cdist(a, b, p=2)", {"a": "randn(3, 4)", "b": "randn(5, 4)"}, rtol=1e-4, atol=1e-5),
              case("p = 1\nresult = torch.cdist(a, b, p)", {"a": "randn(3, 4)", "b": "randn(5, 4)"}, rtol=1e-4, atol=1e-5))),
]
