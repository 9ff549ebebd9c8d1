"""Shape, layout and indexing Tensor methods.

Shared names that behave the same pass unchanged; the rest: ``repeat`` has no
CPU kernel (``tile`` has torch's repeat semantics), ``roll`` has no kernel
(``mindspore.numpy.roll`` composes it), ``flip`` needs a tuple, ``narrow``
and ``unbind`` take no torch keywords, ``unfold``/``unflatten`` are composed,
and ``index_add``/``index_fill`` need int32 indices and must not write into
the receiver (MindSpore's methods do).
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P, call_cases, marking
from rewrite_rules.api import Arg, Example, InPlace, MethodRule, Unconvertible, Unsupported
from rewrite_rules.nn.float_args import int_literal_as_float
from rewrite_rules.tensor.binding import atom, code_of, expr, is_call_of, literal, method, owner, same
from rewrite_rules.torch_functions.misc import unique_of

X = {"x": "randn(3, 4)"}
XY = {"x": "randn(3, 4)", "y": "randn(3, 4)"}
X3 = {"x": "randn(2, 3, 4)"}
IDX = {"x": "randn(3, 4)", "y": "randn(3, 4)", "i": "randint(0, 4, (3, 4))"}


def _normalized_dim(dim: cst.BaseExpression, receiver: str) -> str:
    """A non-negative dim: the literal itself, else ``dim % x.ndim``."""
    try:
        value = literal(dim)
        if isinstance(value, int) and value >= 0:
            return str(value)
    except ValueError:
        pass
    return f"{atom(dim)} % {receiver}.ndim"


def _expand(bound, call, ctx):
    """x.expand(2, -1, 4), x.expand(*sizes), x.expand(y.shape) -> ops.broadcast_to(x, sizes): graph mode
    compiles broadcast_to (-1 keeps the dimension, as in torch), not Tensor.expand."""
    sizes = list(bound.varargs)
    if len(sizes) == 1 and not sizes[0].star and not isinstance(sizes[0].value, (cst.Integer, cst.UnaryOperation)):
        size = sizes[0].value  # a tuple, a list, a shape
    else:
        size = cst.Tuple([cst.StarredElement(a.value) if a.star else cst.Element(a.value) for a in sizes])
    bound.result = cst.Call(ctx.ref("mindspore.ops.broadcast_to"), [cst.Arg(call.receiver), cst.Arg(size)])


def _repeat(bound, call, ctx):
    """x.repeat([1, n, 1, 1][:ndim]) -> x.tile(tuple(...)): MindSpore's tile takes ints or a tuple,
    not a list (monai's VNet passes a sliced list)."""
    sizes = bound.varargs
    if len(sizes) == 1 and not sizes[0].star and _is_list(sizes[0].value):
        value = sizes[0].value
        if isinstance(value, cst.List) and value.elements:
            value = cst.Tuple([e.with_changes(comma=cst.MaybeSentinel.DEFAULT) for e in value.elements])
        else:
            value = cst.Call(cst.Name("tuple"), [cst.Arg(value)])
        sizes[0] = sizes[0].with_changes(value=value)


def _is_list(expr: cst.BaseExpression) -> bool:
    """A list display, a list comprehension, or a slice of one."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    return isinstance(expr, (cst.List, cst.ListComp))


def _split(call, ctx):
    """x.split(2, dim=1) -> x.split(2, 1): with dim= MindSpore's Tensor.split takes a SplitTensor primitive
    that graph mode has no CPU kernel for ("Kernel select failed: PrimFunc_SplitTensor", measured on 2.10).
    Other keywords are not torch's (a dataset's ``split(sizes, randomize=True)``): the call is left as is."""
    args = list(call.call.args)
    dim = next((a for a in args if a.keyword is not None and a.keyword.value == "dim"), None)
    positional = [a for a in args if a.keyword is None and not a.star]
    if dim is None or len(positional) != 1 or len(args) != 2:
        return call.call
    return call.call.with_changes(args=[positional[0], dim.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)])


def _flip(bound, call, ctx):
    """torch accepts flip(0), flip(0, 1) and flip((0, 1)); MindSpore a tuple."""
    dims = [a.value for a in bound.varargs]
    if "dims" in bound.values:
        dims.append(bound.values["dims"])
    if len(dims) == 1:
        only = dims[0]
        if isinstance(only, (cst.Tuple, cst.List)):
            tup = only
        elif isinstance(only, (cst.Integer, cst.UnaryOperation)):
            tup = cst.Tuple([cst.Element(only)])
        else:
            tup = expr(f"({code_of(only)},) if isinstance({code_of(only)}, int) else {code_of(only)}")
    else:
        tup = cst.Tuple([cst.Element(d) for d in dims])
    bound.result = cst.Call(cst.Attribute(call.receiver, cst.Name("flip")), [cst.Arg(tup)])


def _unfold(bound, call, ctx):
    """Sliding windows of ``size`` every ``step`` along ``dimension``, as a new
    last axis (MindSpore's Tensor.unfold is im2col): stack the narrowed
    windows on a new last axis and swap it with the window axis."""
    x = atom(call.receiver)
    dim, size, step = bound.get("dimension"), bound.get("size"), bound.get("step")
    d = _normalized_dim(dim, x)
    ops = code_of(ctx.ref("mindspore.ops"))
    windows = f"[{x}.narrow({d}, _start, {atom(size)}) for _start in range(0, {x}.shape[{d}] - {atom(size)} + 1, {atom(step)})]"
    bound.result = expr(f"{ops}.stack({windows}, -1).swapaxes({d}, -1)")


def _unflatten(bound, call, ctx):
    x = atom(call.receiver)
    d = _normalized_dim(bound.get("dim"), x)
    sizes = bound.get("sizes")
    bound.result = expr(f"{x}.reshape({x}.shape[:{d}] + tuple({code_of(sizes)}) + {x}.shape[{d} + 1 :])")


def index_shaped(src: cst.BaseExpression, index: cst.BaseExpression) -> cst.BaseExpression:
    """torch's scatter reads only the leading index-shaped block of a larger
    src; MindSpore's wants src of the index's shape."""
    return expr(f"{atom(src)}[tuple(slice(0, n) for n in {atom(index)}.shape)]")


def scatter_elements(x, dim, index, src, reduction: str, ctx) -> cst.BaseExpression:
    args = [cst.Arg(x), cst.Arg(index), cst.Arg(index_shaped(src, index)), cst.Arg(dim),
            cst.Arg(cst.SimpleString(f"'{reduction}'"))]
    return cst.Call(ctx.ref("mindspore.ops.tensor_scatter_elements"), args)


def _scatter_add(bound, call, ctx):
    bound.result = scatter_elements(call.receiver, bound.get("dim"), bound.get("index"), bound.get("src"), "add", ctx)


_REDUCTIONS = {"sum": "add"}


def scatter_reduce_of(x, dim, index, src, reduce, include_self, ctx) -> cst.BaseExpression:
    try:
        reduce, include_self = literal(reduce), literal(include_self, True)
    except ValueError:
        raise Unconvertible("reduce and include_self must be literals") from None
    if reduce not in _REDUCTIONS or include_self is not True:
        raise Unconvertible(f"scatter_reduce(reduce={reduce!r}, include_self={include_self}): MindSpore's "
                            "tensor_scatter_elements only adds into the input")
    return scatter_elements(x, dim, index, src, _REDUCTIONS[reduce], ctx)


def _scatter_reduce(bound, call, ctx):
    bound.result = scatter_reduce_of(call.receiver, bound.get("dim"), bound.get("index"), bound.get("src"),
                                     bound.get("reduce"), bound.get("include_self"), ctx)


def index_copy_of(x, dim, index, source, ctx) -> cst.BaseExpression:
    """No CPU kernel: clear the indexed slices, then add the source there."""
    x, index = atom(x), f"{owner(index)}.int()"
    return expr(f"{x}.index_fill({code_of(dim)}, {index}, 0).index_add({code_of(dim)}, {index}, {code_of(source)})")


def _index_copy(bound, call, ctx):
    bound.result = index_copy_of(call.receiver, bound.get("dim"), bound.get("index"), bound.get("source"), ctx)


def _put(bound, call, ctx):
    """Flat indices (negative ones count from the end) into the flattened tensor."""
    x, index, source = atom(call.receiver), atom(bound.get("index")), atom(bound.get("source"))
    try:
        reduction = "'add'" if literal(bound.get("accumulate"), False) else "'none'"
    except ValueError:
        reduction = f"'add' if {atom(bound.get('accumulate'))} else 'none'"
    scatter = code_of(ctx.ref("mindspore.ops.tensor_scatter_elements"))
    bound.result = expr(f"{scatter}({x}.reshape(-1), {index}.reshape(-1) % {x}.numel(), {source}.reshape(-1), 0, "
                        f"{reduction}).reshape({x}.shape)")


def select_of(x, dim, index, ctx) -> cst.BaseExpression | None:
    """x.select(1, 2) -> x[:, 2]: a subscript, so that an in-place method on
    it becomes an item assignment (MindSpore cannot assign into a view)."""
    try:
        d = literal(dim)
    except ValueError:
        return None
    if not isinstance(d, int) or isinstance(d, bool):
        return None
    parts = [":"] * d + [code_of(index)] if d >= 0 else ["..."] + [code_of(index)] + [":"] * (-d - 1)
    return expr(f"{atom(x)}[{', '.join(parts)}]")


def _select(bound, call, ctx):
    bound.result = select_of(call.receiver, bound.get("dim"), bound.get("index"), ctx)


def _fill_diagonal(bound, call, ctx):
    """No CPU kernel: the main diagonal of a matrix, masked."""
    try:
        wrap = literal(bound.get("wrap"), False)
    except ValueError:
        wrap = None
    if wrap is not False:
        raise Unconvertible("fill_diagonal_(wrap=True) or wrap through a variable has no MindSpore equivalent")
    x = atom(call.receiver)
    eye = code_of(ctx.ref("mindspore.ops.eye"))
    bound.result = InPlace(expr(f"{x}.masked_fill({eye}({x}.shape[0], {x}.shape[1]).bool(), {code_of(bound.get('fill_value'))})"))


def _unique(bound, call, ctx):
    bound.result = unique_of(call.receiver, bound, ctx)


def _int32_index(bound, call, ctx):
    """MindSpore wants int32 indices here."""
    if not is_call_of(bound.get("index"), "int"):
        bound.set("index", expr(f"{owner(bound.get('index'))}.int()"))


def _int32_index_on_a_copy(bound, call, ctx):
    """int32 indices, and MindSpore's method writes into the receiver: work on
    a copy (unless the receiver is one already, or index_fill's new tensor, as
    in index_copy's composition)."""
    _int32_index(bound, call, ctx)
    if not is_call_of(call.receiver, "copy") and not is_call_of(call.receiver, "index_fill"):
        call.receiver = cst.Call(cst.Attribute(call.receiver, cst.Name("copy")), [])


def _one_slot(slot: str, *aliases: str):
    """torch overloads that name one positional argument differently
    (scatter's src/value, tensor_split's sections/indices)."""

    def hook(bound, call, ctx):
        for alias in aliases:
            if bound.has(alias):
                if bound.has(slot):
                    raise Unconvertible(f"both {slot} and {alias} given")
                bound.set(slot, bound.values.pop(alias))

    return hook


def _scatter_value(bound, call, ctx):
    """An int value as a float: MindSpore's ScatterValue kernel refuses an int value on CPU
    (a float one fills an int tensor as torch does; measured)."""
    _one_slot("src", "value")(bound, call, ctx)
    if bound.has("src"):
        bound.set("src", int_literal_as_float(bound.get("src")))


def _index_put(bound, call, ctx):
    """MindSpore's index_put wants values of rank >= 1 (torch broadcasts a
    scalar tensor)."""
    if not is_call_of(bound.get("values"), "atleast_1d"):
        bound.set("values", cst.Call(ctx.ref("mindspore.ops.atleast_1d"), [cst.Arg(bound.get("values"))]))


def _rot90_dims(bound, call, ctx):
    if not bound.has("dims"):
        bound.set("dims", "(0, 1)")


SLICE_INDEX = "randint(0, 4, (3, 4))"

def take_along(x, indices, dim, ctx) -> cst.BaseExpression:
    """torch.take_along_dim as mindspore.numpy.take_along_axis, which also
    broadcasts; with dim None torch flattens the indices too."""
    take = code_of(ctx.ref("mindspore.numpy.take_along_axis"))
    x, indices = code_of(x), atom(indices)
    if dim is None or (isinstance(dim, cst.Name) and dim.value == "None"):
        return expr(f"{take}({x}, {indices}.reshape(-1), None)")
    if not isinstance(dim, (cst.Integer, cst.UnaryOperation)):
        return expr(f"{take}({x}, {indices} if {atom(dim)} is not None else {indices}.reshape(-1), {code_of(dim)})")
    return expr(f"{take}({x}, {indices}, {code_of(dim)})")


def _take_along_dim(bound, call, ctx):
    bound.result = take_along(call.receiver, bound.get("indices"), bound.get("dim"), ctx)


RULES = [
    same("view_as", examples=call_cases("result = x.view_as({args})", [P("other", "y.reshape(4, 3)")], XY)),
    same("reshape_as", examples=call_cases("result = x.reshape_as({args})", [P("other", "y.reshape(4, 3)")], XY)),
    same("t", notes="x.T and x.mT (attributes) are the same in MindSpore too",
         examples=(*call_cases("result = x.t()", [], X), *call_cases("result = (x.T, x.mT)", [], X, notes="attributes"))),
    same("swapaxes", examples=call_cases("result = x.swapaxes({args})", [P("axis0", "0"), P("axis1", "2")], X3)),
    same("swapdims", examples=call_cases("result = x.swapdims({args})", [P("dim0", "0"), P("dim1", "2")], X3)),
    same("moveaxis", examples=call_cases("result = x.moveaxis({args})", [P("source", "0"), P("destination", "2")], X3)),
    same("movedim", examples=call_cases("result = x.movedim({args})", [P("source", "0"), P("destination", "2")], X3)),
    same("flatten", examples=call_cases("result = x.flatten({args})", [P("start_dim", "1", True), P("end_dim", "-1", True)], X3)),
    same("ravel", examples=call_cases("result = x.ravel()", [], X3)),
    # Tensor.expand does not compile in graph mode (sizes: "The parameters number of the function is 2, but the
    # number of provided arguments is 4"; a tuple: "GetShapeVector() doesn't implement", measured on 2.10)
    method("expand", "*sizes", hook=_expand, examples=(
        *call_cases("result = x[:, :1].expand({args})", [P("a", "3", kind="positional"), P("b", "4", kind="positional")], X),
        *call_cases("result = x.expand({args})", [P("size", "(2, -1, 4)", kind="positional")], X))),
    same("expand_as", examples=call_cases("result = x[:, :1].expand_as({args})", [P("other", "y")], XY)),
    method("repeat", "*sizes", "tile", hook=_repeat,
           notes="Tensor.repeat has no CPU kernel; tile has torch's repeat semantics (a list of sizes as a tuple)",
           examples=(*call_cases("result = x.repeat({args})", [P("a", "2", kind="positional"), P("b", "1", kind="positional")], X),
                     *call_cases("result = x.repeat({args})", [P("sizes", "(2, 1, 2)", kind="positional")], X),
                     *call_cases("result = x.repeat({args})", [P("sizes", "[2, 1, 2, 1][:3]", kind="positional")], X,
                                 shapes=("positional",), notes="a sliced list (monai's VNet)"),
                     Example("result = x.repeat([1, 2])", "result = x.tile((1, 2))", inputs=X))),
    same("tile", examples=call_cases("result = x.tile({args})", [P("dims", "(2, 1)", kind="positional")], X)),
    same("repeat_interleave", examples=call_cases("result = x.repeat_interleave({args})", [P("repeats", "2"), P("dim", "1", True)], X)),
    # by position: with torch's keyword (dim=) MindSpore's Tensor.chunk takes a Chunk primitive that graph
    # mode has no CPU kernel for ("Unsupported op [Chunk] on CPU", measured on 2.10)
    method("chunk", "chunks, dim=0", as_positional=True,
           examples=call_cases("result = x.chunk({args})", [P("chunks", "2"), P("dim", "1", True)], X)),
    MethodRule("split", hook=_split, notes="dim by position: with dim= MindSpore's Tensor.split takes a "
               "SplitTensor primitive that graph mode has no CPU kernel for", examples=(
        *call_cases("result = x.split({args})", [P("split_size", "2"), P("dim", "1", True)], X),
        *call_cases("result = x.split({args})", [P("split_size", "[1, 3]"), P("dim", "1")], X, shapes=("positional", "variables")))),
    method("tensor_split", "sections=None, dim=0, *, indices=None, tensor_indices_or_sections=None", hook=_one_slot(
               "sections", "indices", "tensor_indices_or_sections"), as_positional=True,
           examples=(*call_cases("result = x.tensor_split({args})", [P("sections", "2"), P("dim", "1", True)], X),
                     *call_cases("result = x.tensor_split({args})", [P("indices", "(1, 3)"), P("dim", "1", True)], X,
                                 shapes=("keywords",)))),
    method("unbind", "dim=0", as_positional=True, examples=call_cases("result = x.unbind({args})", [P("dim", "1", True)], X)),
    method("narrow", "dim, start, length", as_positional=True,
           examples=call_cases("result = x.narrow({args})", [P("dim", "1"), P("start", "1"), P("length", "2")], X)),
    method("select", "dim, index", as_positional=True, hook=_select,
           notes="x[:, index] for a literal dim (an in-place method on it then assigns the item)",
           examples=(*call_cases("result = x.select({args})", [P("dim", "1"), P("index", "2")], X),
                     *call_cases("result = x.select({args})", [P("dim", "-2"), P("index", "1")], X3, shapes=("positional",)),
                     Example("x.select(1, 2).fill_(0.0)\nresult = x", inputs=X),
                     Example("x.select(0, 1).mul_(2)\nresult = x", inputs=X),
                     Example("x[1].select(0, 2).zero_()\nresult = x", inputs=X),
                     Example("y = x.select(1, 2)", "y = x[:, 2]"))),
    method("flip", "*args, dims=None", hook=_flip, notes="MindSpore's flip takes one tuple of dims",
           examples=(*call_cases("result = x.flip({args})", [P("dims", "(0, 2)")], X3),
                     *call_cases("result = x.flip({args})", [P("dims", "1", kind="positional")], X3),
                     *call_cases("result = x.flip({args})", [P("a", "0", kind="positional"), P("b", "1", kind="positional")], X3))),
    same("fliplr", examples=call_cases("result = x.fliplr()", [], X)),
    same("flipud", examples=call_cases("result = x.flipud()", [], X)),
    method("take_along_dim", "indices, dim=None", hook=_take_along_dim,
           notes="Tensor.take_along_dim does not exist in MindSpore: mindspore.numpy.take_along_axis broadcasts like torch",
           examples=(*call_cases("result = x.take_along_dim({args})", [P("indices", "i"), P("dim", "1", True)],
                                 {"x": "randn(3, 4)", "i": "randint(0, 4, (3, 2))"}),
                     *call_cases("result = x.take_along_dim({args})", [P("indices", "i"), P("dim", "0")],
                                 {"x": "randn(2, 3)", "i": "tensor([[1], [0]])"}, shapes=("positional",)))),
    method("roll", "shifts, dims=None", function="mindspore.numpy.roll", args={"shifts": "shift", "dims": "axis"},
           notes="the Roll kernel is missing on CPU; mindspore.numpy.roll composes it",
           examples=(*call_cases("result = x.roll({args})", [P("shifts", "1"), P("dims", "1", True)], X),
                     *call_cases("result = x.roll({args})", [P("shifts", "(1, 2)"), P("dims", "(0, 1)")], X))),
    method("rot90", "k=1, dims=(0, 1)", args={"k": Arg(explicit=True)}, hook=_rot90_dims,
           notes="MindSpore's rot90 has no defaults",
           examples=call_cases("result = x.rot90({args})", [P("k", "3", True), P("dims", "[1, 2]", True)], X3)),
    same("tril", examples=call_cases("result = x.tril({args})", [P("diagonal", "1", True)], X)),
    same("triu", examples=call_cases("result = x.triu({args})", [P("diagonal", "-1", True)], X)),
    method("diagonal", "offset=0, dim1=0, dim2=1", args={"dim1": "axis1", "dim2": "axis2"},
           examples=call_cases("result = x.diagonal({args})", [P("offset", "1", True), P("dim1", "1", True), P("dim2", "2", True)], X3)),
    same("gather", examples=call_cases("result = x.gather({args})", [P("dim", "1"), P("index", "i")], IDX)),
    same("take", examples=call_cases("result = x.take({args})", [P("index", "i")], IDX)),
    same("index_select", examples=call_cases("result = x.index_select({args})", [P("dim", "1"), P("index", "i[0, :2]")], IDX)),
    same("masked_fill", examples=call_cases(
        "result = x.masked_fill({args})", [P("mask", "y > 0"), P("value", "0.5")], XY, results=("result", "x"))),
    same("masked_select", examples=call_cases("result = x.masked_select({args})", [P("mask", "y > 0")], XY)),
    same("masked_scatter", examples=call_cases(
        "result = x.masked_scatter({args})", [P("mask", "y > 0"), P("source", "y * 10")], XY, results=("result", "x"))),
    same("where", examples=call_cases("result = x.where({args})", [P("condition", "y > 0"), P("other", "y")], XY)),
    same("nonzero", examples=call_cases("result = (x > 0).nonzero()", [], X)),
    same("argwhere", examples=call_cases("result = (x > 0).argwhere()", [], X)),
    method("scatter", "dim, index, src=None, value=None, *, reduce=None",
           args={"reduce": Unsupported("reduce= differs in MindSpore's scatter; use scatter_add / tensor_scatter_elements")},
           hook=_scatter_value, as_positional=True,
           notes="MindSpore needs src of the same shape as index (torch reads the leading part of a larger src)",
           examples=(*call_cases("result = x.scatter({args})", [P("dim", "1"), P("index", "y.argsort(1)[:, :2]"), P("src", "y[:, :2]")], IDX,
                                 results=("result", "x")),
                     *call_cases("result = x.scatter({args})", [P("dim", "1"), P("index", "y.argsort(1)[:, :2]"), P("value", "0.5")], IDX,
                                 shapes=("keywords", "reordered")),
                     # one-hot rows with an int value (ScatterValue has no CPU kernel for an int value)
                     Example("result = torch.zeros(3, 4).scatter(1, i[:, :1], 1)", inputs=IDX),
                     Example("result = i.scatter(1, i[:, :1], 7)", inputs=IDX))),
    method("scatter_add", "dim, index, src", hook=_scatter_add,
           notes="ScatterAddExt has no CPU kernel: ops.tensor_scatter_elements(..., 'add') on the index-shaped part of src",
           examples=(*call_cases("result = x.scatter_add({args})", [P("dim", "1"), P("index", "i"), P("src", "y")], IDX,
                                 results=("result", "x")),
                     *call_cases("result = x.scatter_add({args})", [P("dim", "1"), P("index", "i[:, :2]"), P("src", "y")], IDX,
                                 shapes=("positional",)))),
    method("scatter_reduce", "dim, index, src, reduce, *, include_self=True", hook=_scatter_reduce,
           notes="'sum' with include_self=True as ops.tensor_scatter_elements(..., 'add'); the others are marked",
           examples=(*marking(call_cases("result = x.scatter_reduce({args})",
                                         [P("dim", "1"), P("index", "i[:, :2]"), P("src", "y"), P("reduce", "'sum'")], IDX),
                              {"variables": "must be literals"}),
                     Example("x = x * 2\ny = x.scatter_reduce(0, i, src, 'prod')", marked="prod"),
                     Example("x = x * 2\ny = x.scatter_reduce(0, i, src, 'amax')", marked="amax"),
                     Example("x = x * 2\ny = x.scatter_reduce(0, i, src, 'sum', include_self=False)", marked="include_self"))),
    method("index_copy", "dim, index, source", hook=_index_copy,
           notes="no CPU kernel: index_fill with 0, then index_add of the source",
           examples=call_cases("result = x.index_copy({args})", [P("dim", "0"), P("index", "torch.tensor([2, 0])"),
                                                                P("source", "y[:2]")], IDX)),
    method("put", "index, source, accumulate=False", hook=_put,
           notes="flat indices into the flattened tensor, as ops.tensor_scatter_elements",
           examples=call_cases("result = x.put({args})", [P("index", "torch.tensor([1, -2, 5])"),
                                                          P("source", "torch.tensor([9.0, 8.0, 7.0])"),
                                                          P("accumulate", "True", True)], X)),
    method("fill_diagonal_", "fill_value, wrap=False", hook=_fill_diagonal,
           notes="no CPU kernel: masked_fill of the main diagonal",
           examples=(*marking(call_cases("x.fill_diagonal_({args})\nresult = x", [P("fill_value", "5.0"), P("wrap", "False", True)], X),
                              {"variables": "wrap=True"}),
                     Example("x = x * 2\nx.fill_diagonal_(1.5, wrap=True)", marked="wrap=True"))),
    method("unique", "sorted=True, return_inverse=False, return_counts=False, dim=None", hook=_unique,
           notes="Unique2 has no CPU kernel: the sorted unique values of ops.unique_consecutive after a sort; "
                 "inverse indices by searchsorted",
           examples=(*marking(call_cases("result = i.unique({args})", [P("sorted", "True", True), P("return_inverse", "True", True),
                                                                      P("return_counts", "True", True)],
                                         {"i": "tensor([3, 1, 2, 3, 1, 5])"}), {"variables": "through a variable"}),
                     *call_cases("result = i.unique({args})", [P("return_counts", "True", kind="keyword")],
                                 {"i": "tensor([[3, 1], [2, 3]])"}, shapes=("keywords",)))),
    same("unique_consecutive", examples=call_cases("result = i.unique_consecutive({args})",
                                                   [P("return_inverse", "True", True), P("return_counts", "True", True)],
                                                   {"i": "tensor([3, 3, 1, 2, 2, 3])"}, shapes=("keywords", "defaults"))),
    method("index_add", "dim, index, source, *, alpha=1", hook=_int32_index_on_a_copy, as_positional=True,
           notes="int32 indices; MindSpore's index_add writes into the receiver, so it runs on a copy",
           examples=call_cases("result = x.index_add({args})", [P("dim", "0"), P("index", "i[0, :2] % 3"), P("source", "y[:2]")],
                               IDX, results=("result", "x"))),
    method("index_fill", "dim, index, value", hook=_int32_index, as_positional=True,
           notes="int32 indices (MindSpore's index_fill, unlike its index_add, leaves the receiver as it is)",
           examples=call_cases("result = x.index_fill({args})", [P("dim", "1"), P("index", "i[0, :2]"), P("value", "-1.0")],
                               IDX, results=("result", "x"))),
    method("unfold", "dimension, size, step", hook=_unfold,
           notes="MindSpore's Tensor.unfold is im2col: composed from narrow and stack",
           examples=(*call_cases("result = x.unfold({args})", [P("dimension", "1"), P("size", "2"), P("step", "1")], X),
                     *call_cases("result = x.unfold({args})", [P("dimension", "-1"), P("size", "2"), P("step", "2")], X3,
                                 shapes=("positional", "variables")))),
    method("unflatten", "dim, sizes", hook=_unflatten, notes="composed with reshape",
           examples=(*call_cases("result = x.unflatten({args})", [P("dim", "1"), P("sizes", "(2, 2)")], X),
                     *call_cases("result = x.unflatten({args})", [P("dim", "-1"), P("sizes", "(2, -1)")], X3,
                                 shapes=("positional", "variables")))),
    method("index_put", "indices, values, accumulate=False", hook=_index_put, as_positional=True,
           notes="values are passed through ops.atleast_1d: MindSpore's index_put rejects 0-d values",
           examples=(*call_cases("result = x.index_put({args})",
                                 [P("indices", "(i[0, :2] % 3, i[1, :2])"), P("values", "y[0, :2]"), P("accumulate", "True", True)],
                                 IDX, results=("result", "x")),
                     *call_cases("result = x.index_put({args})", [P("indices", "(i[0, :1] % 3,)"), P("values", "y[0, 0]")],
                                 IDX, shapes=("positional",), results=("result", "x")))),
    method("broadcast_to", "size", as_positional=True,
           examples=call_cases("result = x[0].broadcast_to({args})", [P("size", "(2, 4)")], X)),
    same("diagflat", examples=call_cases("result = x[0].diagflat({args})", [P("offset", "1", True)], X)),
    *(same(name, examples=call_cases(f"result = x.{name}({{args}})", [P("sections", sections, kind="positional")],
                                     {"x": shape}))
      for name, sections, shape in (("hsplit", "2", "randn(3, 4)"), ("vsplit", "[1, 2]", "randn(3, 4)"),
                                    ("dsplit", "2", "randn(2, 3, 4)"))),
    method("select_scatter", "src, dim, index", as_positional=True,
           examples=call_cases("result = x.select_scatter({args})", [P("src", "y[0]"), P("dim", "0"), P("index", "1")], XY)),
    same("slice_scatter", examples=call_cases("result = x.slice_scatter({args})",
                                              [P("src", "y[:, :2]"), P("dim", "1", True), P("start", "0", True),
                                               P("end", "2", True)], XY, shapes=("positional", "variables"))),
    same("diagonal_scatter", examples=call_cases("result = x[:, :3].diagonal_scatter({args})",
                                                 [P("src", "y[0, :2]"), P("offset", "1")], XY)),
    method("narrow_copy", "dimension, start, length", target="narrow", as_positional=True, notes="narrow (a copy or a view: the same values)",
           examples=call_cases("result = x.narrow_copy({args})", [P("dimension", "1", kind="positional"),
                                                                  P("start", "1", kind="positional"),
                                                                  P("length", "2", kind="positional")], X)),
    method("unsafe_chunk", "chunks, dim=0", target="chunk", as_positional=True, notes="chunk (torch's unsafe variant skips a check only)",
           examples=call_cases("result = x.unsafe_chunk({args})", [P("chunks", "2"), P("dim", "1", True)], X)),
    method("unsafe_split", "split_size, dim=0", target="split", as_positional=True, notes="split (torch's unsafe variant skips a check only)",
           examples=call_cases("result = x.unsafe_split({args})", [P("split_size", "2"), P("dim", "1", True)], X)),
    method("unsafe_split_with_sizes", "split_sizes, dim=0", target="split", as_positional=True,
           examples=call_cases("result = x.unsafe_split_with_sizes({args})", [P("split_sizes", "[1, 3]"), P("dim", "1")], X)),
    method("split_with_sizes", "split_sizes, dim=0", target="split", as_positional=True,
           examples=call_cases("result = x.split_with_sizes({args})", [P("split_sizes", "[1, 3]"), P("dim", "1")], X)),
    same("sum_to_size", examples=call_cases("result = x.sum_to_size({args})", [P("a", "1", kind="positional"), P("b", "4", kind="positional")], X)),
]
