"""Tensor methods that need rewriting. Methods MindSpore's Tensor shares with
torch (view, reshape, permute, contiguous, item, numpy, ...) are listed with
``rename`` equal to their own name: they pass unchanged and are counted."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P, call_cases
from rewrite_rules.api import Drop, Example, MethodRule, Unconvertible
from rewrite_rules.tensor.binding import as_argument, method

X = {"x": "randn(3, 4)"}

# torch.Tensor attributes that MindSpore's Tensor has with the same meaning,
# read without a rule (one would report every .shape in a file as a converted
# use); the cases of torch.Tensor.dim and torch.Tensor.t run them.
READ_AS_IN_TORCH = frozenset({"shape", "dtype", "ndim", "data", "T"})
# Names shared with MindSpore that are left alone for another reason:
# ``index`` is also list.index / str.index. (``device`` has a rule in
# rewrite_rules.runtime.devices: it is read in torch's names.)
LEFT_ALONE = frozenset({"index"})
X3 = {"x": "randn(2, 3, 4)"}


def _size(call, ctx):
    shape = cst.Attribute(call.receiver, cst.Name("shape"))
    if not call.args:
        return shape
    dim = call.positional[0] if call.positional else call.keyword("dim")
    if dim is None or len(call.args) != 1:
        raise Unconvertible("unexpected arguments to size()")
    return cst.Subscript(shape, [cst.SubscriptElement(cst.Index(dim))])


def _detach(call, ctx):
    return cst.Call(ctx.ref("mindspore.ops.stop_gradient"), [cst.Arg(as_argument(call.receiver))])


def _transpose(call, ctx):
    if len(call.positional) == 2 and len(call.args) == 2:
        return call.rename("swapaxes")
    dims = [call.keyword("dim0"), call.keyword("dim1")]
    if all(d is not None for d in dims):
        return call.rename("swapaxes", [cst.Arg(dims[0]), cst.Arg(dims[1])])
    if len(call.args) == 1 and call.args[0].star == "*":  # x.transpose(*self.shape): torch's takes two dims
        return call.rename("swapaxes")
    raise Unconvertible("transpose() needs two dims")


def _same(name: str, examples=()) -> MethodRule:
    return MethodRule(name, rename=name, examples=tuple(examples))


def _two_ints():
    return [P("a", "4", kind="positional"), P("b", "-1", kind="positional")]


RULES = [
    _same("view", (Example("y = x.view(2, -1)", "y = x.view(2, -1)"),
                   *call_cases("result = x.view({args})", _two_ints(), X),
                   *call_cases("result = x.view({args})", [P("shape", "(2, 6)", kind="positional")], X))),
    _same("reshape", (*call_cases("result = x.reshape({args})", _two_ints(), X),
                      *call_cases("result = x.reshape({args})", [P("shape", "(-1,)", kind="positional")], X))),
    _same("permute", (*call_cases("result = x.permute({args})", [P("a", "2", kind="positional"), P("b", "0", kind="positional"),
                                                                 P("c", "1", kind="positional")], X3),
                      *call_cases("result = x.permute({args})", [P("dims", "(2, 0, 1)")], X3))),
    # torch.channels_last & co. would reach MindSpore's contiguous(), which takes no memory_format
    method("contiguous", "memory_format=torch.contiguous_format",
           args={"memory_format": Drop("MindSpore tensors have one memory layout")},
           examples=call_cases("result = x.t().contiguous({args})",
                               [P("memory_format", "torch.contiguous_format", True, "keyword")], X)),
    _same("unsqueeze", call_cases("result = x.unsqueeze({args})", [P("dim", "1")], X)),
    method("squeeze", "dim=None", as_positional=True, notes="MindSpore's squeeze takes no dim= keyword",
           examples=(*call_cases("result = x.squeeze()", [], {"x": "randn(3, 1, 4)"}),
                     *call_cases("result = x.squeeze({args})", [P("dim", "1")], {"x": "randn(3, 1, 4)"}))),
    _same("item", call_cases("result = x.sum().item()", [], X)),
    _same("numpy", call_cases("result = x.numpy()", [], X)),
    MethodRule(
        "size",
        hook=_size,
        arity=(0, 1),
        notes="Tensor.size is an int attribute (element count) in MindSpore.",
        examples=(Example("n = x.size(1)", "n = x.shape[1]"), Example("s = x.size()", "s = x.shape"),
                  *call_cases("result = x.size({args})", [P("dim", "1")], X), *call_cases("result = x.size()", [], X),
                  # a layer's Parameter is a tensor, not a layer: its size() is the method
                  Example("class Scaled(nn.Module):\n"
                          "    def __init__(self):\n"
                          "        super().__init__()\n"
                          "        self.weight = nn.Parameter(torch.ones(2, 3))\n"
                          "\n"
                          "    def forward(self, x):\n"
                          "        return x * self.weight.size(1)\n"
                          "\n"
                          "result = Scaled()(x)", inputs=X)),
    ),
    MethodRule(
        "transpose",
        hook=_transpose,
        arity=(0, 2),
        notes="MindSpore's Tensor.transpose permutes all axes; swapaxes swaps two like torch.",
        examples=(Example("y = x.transpose(1, 2)", "y = x.swapaxes(1, 2)"),
                  Example("dims = (0, 2)\nresult = x.transpose(*dims)", inputs=X3),  # sooftware's conformer
                  *call_cases("result = x.transpose({args})", [P("dim0", "0"), P("dim1", "2")], X3)),
    ),
    MethodRule(
        "detach",
        hook=_detach,
        arity=(0, 0),
        examples=(Example("y = x.detach()", "y = ops.stop_gradient(x)"), *call_cases("result = x.detach()", [], X)),
    ),
]
