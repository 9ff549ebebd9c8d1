"""``self.register_buffer("name", t)`` -> a non-trainable Parameter attribute,
which MindSpore saves in checkpoints like torch saves buffers.

A non-persistent buffer (``persistent=False``) is not part of torch's state
dict: it becomes a plain tensor attribute, which MindSpore neither saves nor
expects in a checkpoint, and which the code may replace by a tensor of
another shape (convit recomputes its ``rel_indices`` for the input size), as
torch code replaces such a buffer."""

from __future__ import annotations

import libcst as cst

from transpiler.engine import literal_value


def convert_buffer_registration(rewriter, original: cst.Expr, updated: cst.Expr):
    call = updated.value
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)):
        return updated
    if call.func.attr.value != "register_buffer":
        return updated
    positional = [a for a in call.args if a.keyword is None and not a.star]
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    name_expr = positional[0].value if positional else keywords.get("name")
    tensor = positional[1].value if len(positional) > 1 else keywords.get("tensor")
    persistent = positional[2].value if len(positional) > 2 else keywords.get("persistent")
    if name_expr is None or tensor is None:
        return updated
    try:
        name = literal_value(name_expr)
    except (ValueError, SyntaxError):
        name = None
    receiver = call.func.value

    def parameter():
        return cst.Call(
            func=rewriter.ctx.ref("mindspore.Parameter"),
            args=[
                cst.Arg(tensor),
                cst.Arg(name_expr, keyword=cst.Name("name")),
                cst.Arg(cst.Name("False"), keyword=cst.Name("requires_grad")),
            ],
        )

    if isinstance(tensor, cst.Name) and tensor.value == "None":
        value: cst.BaseExpression = tensor
        message = "buffer -> non-trainable Parameter"
    elif persistent is None or _literal(persistent) is True:
        value = parameter()
        message = "buffer -> non-trainable Parameter"
    elif _literal(persistent) is False:
        value = tensor
        message = "non-persistent buffer -> tensor attribute (not saved, as torch leaves it out of the state dict)"
    else:  # decided at run time
        value = cst.IfExp(test=persistent, body=parameter(), orelse=tensor)
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
