"""``with torch.no_grad():`` and friends are unwrapped, and the matching
decorators dropped: MindSpore records gradients only inside functions passed to
``mindspore.grad``/``value_and_grad``, so the context has nothing to switch off.

``with torch.autocast(...):`` is unwrapped the same way: MindSpore sets mixed
precision on the network instead (``amp.py``; the training step does it where
the network trains)."""

from __future__ import annotations

import libcst as cst

from transpiler.convert.structural.provenance import AUTOCASTS

GRAD_CONTEXTS = frozenset(
    {
        "torch.no_grad",
        "torch.inference_mode",
        "torch.enable_grad",
        "torch.set_grad_enabled",
        "torch.autograd.no_grad",
        "torch.autograd.grad_mode.no_grad",
        "torch.autograd.grad_mode.inference_mode",
    }
)


def is_grad_context(expr: cst.BaseExpression, analysis) -> bool:
    return analysis.qualified(grad_context_reference(expr)) in GRAD_CONTEXTS | AUTOCASTS


def grad_context_reference(expr: cst.BaseExpression) -> cst.BaseExpression:
    """The torch name inside ``torch.no_grad()`` / ``torch.no_grad``."""
    return expr.func if isinstance(expr, cst.Call) else expr


def unwrap_grad_context(rewriter, original: cst.With, updated: cst.With):
    keep = [u for u, o in zip(updated.items, original.items) if id(o.item) not in rewriter.handled]
    if len(keep) == len(updated.items):
        return updated
    for item in original.items:
        if id(item.item) in rewriter.handled:
            reference = grad_context_reference(item.item)
            rewriter.ctx.consume(reference)
            if rewriter.analysis.qualified(reference) in AUTOCASTS:
                rewriter.ctx.converted(original, "torch.autocast", "autocast context unwrapped: MindSpore sets mixed "
                                       "precision on the network (mindspore.amp.auto_mixed_precision where it trains)")
            else:
                rewriter.ctx.converted(original, "torch.no_grad", "grad-mode context unwrapped")
    rewriter.changed()
    if keep:
        keep[-1] = keep[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return updated.with_changes(items=keep)
    body = updated.body
    carried = list(updated.leading_lines)
    if isinstance(body, cst.IndentedBlock):
        statements = list(body.body)
        if body.header.comment is not None:
            carried.append(cst.EmptyLine(comment=body.header.comment))
    else:
        statements = [cst.SimpleStatementLine(body=body.body, trailing_whitespace=body.trailing_whitespace)]
    if carried:
        statements[0] = statements[0].with_changes(leading_lines=[*carried, *statements[0].leading_lines])
    return cst.FlattenSentinel(statements)
