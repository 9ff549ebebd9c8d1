"""Dtype casts, tensor facts (numel, dim ...) and the new_* factories as
Tensor methods."""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from rewrite_rules.cases import P, call_cases
from rewrite_rules.helpers import DEVICE, PIN_MEMORY, REQUIRES_GRAD
from rewrite_rules.api import Drop, Example, Unconvertible
from rewrite_rules.tensor.binding import keyword, method, same

X = {"x": "randn(3, 4)"}
FACTORY = {"device": DEVICE, "requires_grad": REQUIRES_GRAD, "pin_memory": PIN_MEMORY, "layout": Drop("dense")}
FACTORY_SIGNATURE = "*, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False"


def _astype(dtype: str):
    def hook(bound, call, ctx):
        bound.result = cst.Call(cst.Attribute(call.receiver, cst.Name("astype")), [cst.Arg(ctx.ref(f"mindspore.{dtype}"))])

    return hook


def _type(bound, call, ctx):
    """x.type(dtype) casts (``.to(dtype)``, which a Cell has too); x.type() returns torch's type
    string ('torch.FloatTensor'), and type names as strings are torch's."""
    dtype = bound.get("dtype")
    if dtype is None:
        raise Unconvertible("x.type() returns torch's tensor type name; use x.dtype")
    if isinstance(dtype, (cst.SimpleString, cst.ConcatenatedString)):
        raise Unconvertible("tensor type names as strings ('torch.FloatTensor') have no MindSpore meaning; cast with a dtype")
    # a dtype named by a variable goes by keyword: x.to(name) could be a device move
    # just as well, and converting the output again must read it as the cast it is
    arg = cst.Arg(dtype) if isinstance(dtype, cst.Attribute) else keyword("dtype", dtype)
    bound.result = cst.Call(cst.Attribute(call.receiver, cst.Name("to")), [arg])


def _size_tuple(bound) -> cst.BaseExpression:
    """torch factories take new_zeros(2, 3) or new_zeros((2, 3))."""
    sizes = [a.value for a in bound.varargs]
    if "size" in bound.values:
        sizes.append(bound.values["size"])
    if len(sizes) == 1:
        return sizes[0]
    if not sizes:
        raise Unconvertible("no size given")
    return cst.Tuple([cst.Element(s) for s in sizes])


def _new_factory(name: str):
    def hook(bound, call, ctx):
        args = [cst.Arg(_size_tuple(bound))]
        if bound.has("dtype"):
            args.append(keyword("dtype", bound.get("dtype")))
        bound.result = cst.Call(cst.Attribute(call.receiver, cst.Name(name)), args)

    return hook


def _new_full(bound, call, ctx):
    """new_full is Ascend-only in MindSpore: ops.full with the receiver's dtype."""
    dtype = bound.get("dtype") or cst.Attribute(call.receiver, cst.Name("dtype"))
    bound.result = cst.Call(
        ctx.ref("mindspore.ops.full"),
        [cst.Arg(bound.get("size")), cst.Arg(bound.get("fill_value")), keyword("dtype", dtype)],
    )


def _new_tensor(bound, call, ctx):
    dtype = bound.get("dtype") or cst.Attribute(call.receiver, cst.Name("dtype"))
    bound.result = cst.Call(ctx.ref("mindspore.tensor"), [cst.Arg(bound.get("data")), keyword("dtype", dtype)])


def _is_size(expr: cst.BaseExpression | None) -> bool:
    """A size as torch code writes one: y.size() / y.shape / torch.Size(...)."""
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        return expr.func.attr.value == "size" and not expr.args or expr.func.attr.value == "Size"
    return isinstance(expr, cst.Attribute) and expr.attr.value == "shape"


def _new(bound, call, ctx):
    """Tensor.new (torch's legacy constructor, of the receiver's dtype): new(2, 3),
    new(*sizes), new(n) and new(y.size()) make an uninitialised tensor of that size
    (new_empty); new([1, 2]) makes one of that data; new() an empty one. One argument
    that is neither is a size or data, known only at run time: marked."""
    sizes = list(bound.varargs)
    written = call.source_arg(0)
    if not sizes:
        size: cst.BaseExpression = cst.Tuple([cst.Element(cst.Integer("0"))])
    elif len(sizes) > 1 or sizes[0].star:
        size = _size_tuple(bound)
    elif isinstance(written, (cst.List, cst.Tuple)) and not any(isinstance(e, cst.StarredElement) for e in written.elements):
        bound.result = cst.Call(ctx.ref("mindspore.tensor"), [cst.Arg(sizes[0].value),
                                                              keyword("dtype", cst.Attribute(call.receiver, cst.Name("dtype")))])
        return
    elif isinstance(written, cst.Integer):
        size = cst.Tuple([cst.Element(sizes[0].value)])
    elif _is_size(written):
        size = sizes[0].value
    else:
        raise Unconvertible("x.new(value) makes a tensor of that size (an int or a torch.Size) or of that data (a list "
                            "or a tensor), known only at run time: write x.new_empty(size) or x.new_tensor(data)")
    if sizes and sizes[0].star and len(sizes) == 1:
        size = cst.Call(cst.Name("tuple"), [cst.Arg(sizes[0].value)])
    bound.result = cst.Call(cst.Attribute(call.receiver, cst.Name("new_empty")), [cst.Arg(size)])


def _clone(bound, call, ctx):
    bound.result = cst.Call(cst.Attribute(call.receiver, cst.Name("copy")), [])


def _element_size(bound, call, ctx):
    bound.result = cst.Attribute(call.receiver, cst.Name("itemsize"))


_CASTS = ["long", "int", "short", "bool"]
# Casts a Module has too (its parameters): .to(dtype) works on a MindSpore
# Tensor and on a Cell; half()/float()/double() exist only on the Tensor.
_FLOAT_CASTS = {"float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16"}
LINEAR = "layer = nn.Linear(3, 4)\n"


def _to(dtype: str):
    def hook(bound, call, ctx):
        bound.result = cst.Call(cst.Attribute(call.receiver, cst.Name("to")), [cst.Arg(ctx.ref(f"mindspore.{dtype}"))])

    return hook


def _tensor_cases(name: str, dtype: str):
    if dtype == "bfloat16":
        # bfloat16 rounds to nearest, ties to even, in both: bitwise equal (measured, ties included)
        return (*call_cases("result = x.bfloat16()", [], {"x": "randn(40, 50)"}, rtol=0.0, atol=0.0),
                *call_cases("result = x.bfloat16().float()", [], {"x": "tensor([1.00390625, 1.01171875, -1.00390625, 3.0e38])"},
                            rtol=0.0, atol=0.0, notes="ties"))
    return call_cases(f"result = x.{name}()", [], X)


def _float_cast(name: str, dtype: str):
    tolerance = {"rtol": 1e-2, "atol": 1e-2} if dtype == "float16" else {}
    rule = method(name, "memory_format=None" if name != "bfloat16" else "", hook=_to(dtype),
                  args={"memory_format": Drop("layout")} if name != "bfloat16" else None,
                  notes=f".to(mindspore.{dtype}): works on tensors and Cells (a Cell has no .{name}())",
                  examples=(*_tensor_cases(name, dtype),
                            Example(LINEAR + f"layer.{name}()\nresult = (layer.weight.dtype, layer.bias.dtype)", inputs={}),
                            # no bfloat16 matmul kernel on CPU
                            *(() if dtype == "bfloat16" else (Example(LINEAR + f"layer = layer.{name}()\nresult = layer(x.{name}())",
                                                                      inputs={"x": "randn(2, 3)"}, **tolerance),))))
    return replace(rule, receiver="any")


RULES = [
    *(same(name, arity=(0, 0), examples=call_cases(f"result = x.{name}()", [], X)) for name in _CASTS),
    *(_float_cast(name, dtype) for name, dtype in _FLOAT_CASTS.items()),
    same("byte", arity=(0, 0), examples=call_cases("result = (x.abs() * 10).byte()", [], X)),
    method("char", "memory_format=None", hook=_astype("int8"), args={"memory_format": Drop("layout")},
           notes="Tensor.char does not exist in MindSpore: astype(mindspore.int8)",
           examples=call_cases("result = (x * 10).char()", [], X)),
    method("type", "dtype=None, non_blocking=False", hook=_type, args={"non_blocking": Drop("no asynchronous copies")},
           notes="x.type(dtype) -> x.to(dtype) (a Cell has it too); x.type() (the type name) is marked",
           examples=(*call_cases("result = x.type({args})", [P("dtype", "torch.float64")], X),
                     Example(LINEAR + "layer.type(torch.float64)\nresult = layer(x.double())", inputs={"x": "randn(2, 3)"}),
                     *call_cases("result = x.type({args})", [P("dtype", "torch.int32")], X, shapes=("positional",)),
                     Example("x = x * 2\nname = x.type()", marked="type name"),
                     Example("x = x * 2\ny = x.type('torch.DoubleTensor')", marked="type names as strings"))),
    same("type_as", examples=(*call_cases("result = x.type_as({args})", [P("other", "(x > 0).long()")], X),
                              *call_cases("result = (x > 0).type_as({args})", [P("other", "x")], X, shapes=("positional",)))),
    method("new_zeros", "*args, size=None, " + FACTORY_SIGNATURE[3:], args=FACTORY, hook=_new_factory("new_zeros"),
           notes="new_zeros(2, 3) takes one size tuple in MindSpore",
           examples=(*call_cases("result = x.new_zeros({args})", [P("size", "(2, 3)"), P("dtype", "torch.int32", True, "keyword")], X),
                     *call_cases("result = x.new_zeros({args})", [P("a", "2", kind="positional"), P("b", "3", kind="positional")], X))),
    method("new_ones", "*args, size=None, " + FACTORY_SIGNATURE[3:], args=FACTORY, hook=_new_factory("new_ones"),
           notes="new_ones(2, 3) takes one size tuple in MindSpore",
           examples=(*call_cases("result = x.new_ones({args})", [P("size", "[2, 3]"), P("dtype", "torch.float64", True, "keyword")], X),
                     *call_cases("result = x.new_ones({args})", [P("a", "2", kind="positional"), P("b", "3", kind="positional")], X))),
    method("new_empty", "*args, size=None, " + FACTORY_SIGNATURE[3:], args=FACTORY, hook=_new_factory("new_empty"),
           notes="the values are uninitialised in both: only shape and dtype are compared",
           examples=(*call_cases("result = x.new_empty({args}).shape", [P("size", "(2, 3)")], X),
                     *call_cases("result = x.new_empty({args}).dtype", [P("a", "2", kind="positional"), P("b", "3", kind="positional")], X))),
    method("new_full", "size, fill_value, " + FACTORY_SIGNATURE, args=FACTORY, hook=_new_full,
           notes="new_full is Ascend-only in MindSpore: ops.full(size, value, dtype=x.dtype)",
           examples=call_cases("result = x.new_full({args})", [P("size", "(2, 3)"), P("fill_value", "1.5"),
                                                              P("dtype", "torch.float64", True, "keyword")], X)),
    method("new", "*args, device=None", args={"device": DEVICE}, hook=_new,
           notes="new(*sizes) / new(n) / new(y.size()) -> new_empty (uninitialised in both: shape and dtype are "
                 "compared); new(list) -> mindspore.tensor(data, dtype=x.dtype); new() -> new_empty((0,)); one "
                 "argument that may be a size or data is marked",
           examples=(*call_cases("result = x.new({args}).shape", [P("a", "2", kind="positional"), P("b", "3", kind="positional")], X),
                     Example("result = x.new(x.size()).dtype", inputs=X, notes="size"),
                     Example("result = x.double().new(5).shape", inputs=X, notes="int"),
                     Example("sizes = [3, 1]\nresult = x.new(*sizes).shape", inputs=X, notes="starred"),
                     Example("result = x.new(x.shape).zero_()", inputs=X, notes="shape_filled"),
                     Example("result = x.new([[1, 2], [3, 4]])", inputs=X, notes="data"),
                     Example("result = x.long().new((5, 6))", inputs=X, notes="tuple_data"),
                     Example("result = x.new().shape", inputs=X, notes="empty"),
                     Example("def f(x, n):\n    return x.new(n)", marked="known only at run time"))),
    method("new_tensor", "data, " + FACTORY_SIGNATURE, args=FACTORY, hook=_new_tensor,
           notes="Tensor.new_tensor does not exist in MindSpore: mindspore.tensor(data, dtype=x.dtype)",
           examples=call_cases("result = x.new_tensor({args})", [P("data", "[[1, 2], [3, 4]]"), P("dtype", "torch.int64", True, "keyword")], X)),
    method("clone", "*, memory_format=None", hook=_clone, args={"memory_format": Drop("layout")},
           notes="the Clone kernel is missing on CPU: copy()",
           examples=call_cases("result = x.clone({args})", [], X)),
    method("element_size", "", hook=_element_size, notes="-> the itemsize attribute",
           examples=call_cases("result = x.element_size()", [], X)),
    same("is_floating_point", examples=call_cases("result = (x.is_floating_point(), x.long().is_floating_point())", [], X)),
    same("is_complex", examples=call_cases("result = x.is_complex()", [], X)),
    same("is_signed", examples=call_cases("result = x.is_signed()", [], X)),
    same("numel", examples=call_cases("result = x.numel()", [], X)),
    same("nelement", examples=call_cases("result = x.nelement()", [], X)),
    same("dim", arity=(0, 0), notes="the attributes x.ndim, x.shape, x.dtype and x.data are the same in MindSpore too",
         examples=(*call_cases("result = x.dim()", [], X),
                   *call_cases("result = (x.ndim, x.shape, x.dtype, x.data * 2)", [], X, notes="attributes"))),
    same("ndimension", examples=call_cases("result = x.ndimension()", [], X)),
    same("is_contiguous", examples=call_cases("result = x.is_contiguous()", [], X)),
    same("tolist", examples=call_cases("result = x.tolist()", [], X)),
]
