"""``self.register_buffer("name", t)`` -> a non-trainable Parameter attribute,
which MindSpore saves in checkpoints like torch saves buffers.

torch also registers ``None`` (an empty slot the attribute reads as None;
timm's Swin fills its attention mask only when the windows are shifted),
which ``mindspore.Parameter`` refuses. A value not evidently a tensor (see
``_is_tensor``) may be None at run time: it becomes a Parameter only when it
is not None.

A non-persistent buffer (``persistent=False``) is not part of torch's state
dict: it becomes a plain tensor attribute, which MindSpore neither saves nor
expects in a checkpoint, and which the code may replace by a tensor of
another shape (convit recomputes its ``rel_indices`` for the input size), as
torch code replaces such a buffer."""

from __future__ import annotations

import builtins

import libcst as cst

from rewrite_rules.tensor.methods_data import SHARED_TENSOR_METHODS, TORCH_ONLY_TENSOR_METHODS
from transpiler.convert.engine import literal_value
from transpiler.convert.structural.fresh_names import fresh_name
from transpiler.convert.structural.provenance import provenance_of

_TENSOR_METHODS = SHARED_TENSOR_METHODS | TORCH_ONLY_TENSOR_METHODS


def convert_buffer_registration(rewriter, original: cst.Expr, updated: cst.Expr):
    call = updated.value
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
        return updated
    if call.func.attr.value != "register_buffer":
        return updated
    name_expr, tensor, persistent = _name_tensor_persistent(call)
    if name_expr is None or tensor is None:
        return updated
    try:
        name = literal_value(name_expr)
    except (ValueError, SyntaxError):
        name = None
    receiver = call.func.value
    if isinstance(tensor, cst.Name) and tensor.value == "None":
        value: cst.BaseExpression = tensor
        message = "buffer -> non-trainable Parameter"
    elif persistent is not None and _literal(persistent) is False:
        value = tensor
        message = "non-persistent buffer -> tensor attribute (not saved, as torch leaves it out of the state dict)"
    else:
        source = _name_tensor_persistent(original.value)[1] if isinstance(original.value, cst.Call) else None
        parameter = _parameter(rewriter, name_expr, tensor, name,
                               may_be_none=source is None or not _is_tensor(rewriter.ctx, source))
        if persistent is None or _literal(persistent) is True:
            value = parameter
            message = "buffer -> non-trainable Parameter"
        else:  # decided at run time
            value = cst.IfExp(test=persistent, body=parameter, orelse=tensor)
            message = "buffer -> non-trainable Parameter if persistent, else a tensor attribute"
    rewriter.changed()
    rewriter.ctx.converted(original, "torch.nn.Module.register_buffer", message)
    if isinstance(name, str) and name.isidentifier():
        target = cst.Attribute(value=receiver, attr=cst.Name(name))
        return cst.Assign(targets=[cst.AssignTarget(target)], value=value)
    return updated.with_changes(
        value=cst.Call(func=cst.Name("setattr"), args=[cst.Arg(receiver), cst.Arg(name_expr), cst.Arg(value)])
    )


def _literal(expr: cst.BaseExpression):
    try:
        return literal_value(expr)
    except ValueError:
        return None


def _name_tensor_persistent(call: cst.Call):
    positional = [a for a in call.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    name_expr = positional[0].value if positional else keywords.get("name")
    tensor = positional[1].value if len(positional) > 1 else keywords.get("tensor")
    persistent = positional[2].value if len(positional) > 2 else keywords.get("persistent")
    return name_expr, tensor, persistent


def _parameter(rewriter, name_expr, tensor, name, may_be_none: bool) -> cst.BaseExpression:
    """``mindspore.Parameter(tensor, name=..., requires_grad=False)``; for a value
    that may be None, ``None if tensor is None else mindspore.Parameter(...)``
    (a value read twice is a name or attribute; anything else is bound once,
    with ``:=``, to a name the file does not use)."""
    read, bound = tensor, tensor
    if may_be_none and not _is_plain_read(tensor):
        taken = set(rewriter.analysis.bound_names) | set(rewriter.analysis.imports) | set(dir(builtins))
        temporary = cst.Name(fresh_name(name if isinstance(name, str) and name.isidentifier() else "buffer", taken))
        read, bound = temporary, cst.NamedExpr(temporary, tensor, lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    parameter = cst.Call(
        func=rewriter.ctx.ref("mindspore.Parameter"),
        args=[
            cst.Arg(read),
            cst.Arg(name_expr, keyword=cst.Name("name")),
            cst.Arg(cst.Name("False"), keyword=cst.Name("requires_grad")),
        ],
    )
    if not may_be_none:
        return parameter
    is_none = cst.Comparison(bound, [cst.ComparisonTarget(cst.Is(), cst.Name("None"))])
    return cst.IfExp(test=is_none, body=cst.Name("None"), orelse=parameter)


def _is_plain_read(node: cst.BaseExpression) -> bool:
    """``mask``, ``self.mask``, ``masks[i]``: reading it again gives the same value."""
    if isinstance(node, cst.Name):
        return True
    if isinstance(node, cst.Attribute):
        return _is_plain_read(node.value)
    if isinstance(node, cst.Subscript):
        return _is_plain_read(node.value) and all(
            isinstance(element.slice, cst.Index) and isinstance(element.slice.value, (cst.Name, cst.Integer))
            for element in node.slice)
    return False


def _is_tensor(ctx, node: cst.BaseExpression) -> bool:
    """Never None: a torch call, arithmetic, a Tensor method called on a value
    (torch fails there on None too), an index into one of these, or a call of
    the file's own function or method annotated to return ``torch.Tensor``."""
    if isinstance(node, (cst.BinaryOperation, cst.UnaryOperation)):
        return True
    if isinstance(node, cst.Subscript):
        return _is_tensor(ctx, node.value)
    if not isinstance(node, cst.Call):
        return False
    qualified = ctx.analysis.qualified(node.func)
    if qualified is not None:
        return qualified.startswith("torch.")
    provenance = provenance_of(ctx)
    function = provenance.function_called(node) if provenance is not None else None
    if function is not None:
        return function.returns is not None and ctx.analysis.qualified(function.returns.annotation) == "torch.Tensor"
    func = node.func
    return isinstance(func, cst.Attribute) and func.attr.value in _TENSOR_METHODS
