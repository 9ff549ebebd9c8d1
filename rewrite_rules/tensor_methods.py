"""Tensor methods that need rewriting. Methods MindSpore's Tensor shares with
torch (view, reshape, permute, contiguous, item, numpy, ...) are listed with
``rename`` equal to their own name: they pass unchanged and are counted."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.spec import Example, MethodRule, Unconvertible


def _size(call, ctx):
    shape = cst.Attribute(call.receiver, cst.Name("shape"))
    if not call.args:
        return shape
    dim = call.positional[0] if call.positional else call.keyword("dim")
    if dim is None or len(call.args) != 1:
        raise Unconvertible("unexpected arguments to size()")
    return cst.Subscript(shape, [cst.SubscriptElement(cst.Index(dim))])


def _detach(call, ctx):
    return cst.Call(ctx.ref("mindspore.ops.stop_gradient"), [cst.Arg(call.receiver)])


def _transpose(call, ctx):
    if len(call.positional) == 2 and len(call.args) == 2:
        return call.rename("swapaxes")
    dims = [call.keyword("dim0"), call.keyword("dim1")]
    if all(d is not None for d in dims):
        return call.rename("swapaxes", [cst.Arg(dims[0]), cst.Arg(dims[1])])
    raise Unconvertible("transpose() needs two dims")


def _same(name: str, examples=()) -> MethodRule:
    return MethodRule(name, rename=name, examples=examples)


RULES = [
    _same("view", (Example("y = x.view(2, -1)", "y = x.view(2, -1)"),)),
    _same("reshape"),
    _same("permute"),
    _same("contiguous"),
    _same("unsqueeze"),
    _same("squeeze"),
    _same("item"),
    _same("numpy"),
    MethodRule(
        "size",
        hook=_size,
        arity=(0, 1),
        notes="Tensor.size is an int attribute (element count) in MindSpore.",
        examples=(Example("n = x.size(1)", "n = x.shape[1]"), Example("s = x.size()", "s = x.shape")),
    ),
    MethodRule(
        "transpose",
        hook=_transpose,
        arity=(0, 2),
        notes="MindSpore's Tensor.transpose permutes all axes; swapaxes swaps two like torch.",
        examples=(Example("y = x.transpose(1, 2)", "y = x.swapaxes(1, 2)"),),
    ),
    MethodRule(
        "detach",
        hook=_detach,
        arity=(0, 0),
        examples=(Example("y = x.detach()", "y = ops.stop_gradient(x)"),),
    ),
]
