"""``with torch.no_grad():`` and friends are unwrapped, and the matching
decorators dropped: MindSpore records gradients only inside functions passed to
``mindspore.grad``/``value_and_grad``, so the context has nothing to switch off.

``with torch.autocast(...):`` is unwrapped the same way: MindSpore sets mixed
precision on the network instead (``amp.py``; the training step does it where
the network trains).

A module-level alias of one of these contexts is entered like torch's own (names.py:
RAFT's ``autocast = torch.cuda.amp.autocast``, whose ``except`` branch defines a
stand-in for torch < 1.6). Once every use is unwrapped the alias holds nothing the
converted file runs, and it goes, with the ``try`` around it when that holds only
the alias and its stand-in (``drop_unneeded_alias``); kept, it would be converted
into an adapter returning ``contextlib.nullcontext()`` that nothing calls. The
comments inside a ``try`` that goes describe the code that went with it (the report
names the removal); those above it stay."""

from __future__ import annotations

import libcst as cst

from transpiler.convert.torch_contexts import AUTOCASTS, UNWRAPPED_CONTEXTS


def is_grad_context(expr: cst.BaseExpression, analysis) -> bool:
    return analysis.qualified(grad_context_reference(expr)) in UNWRAPPED_CONTEXTS


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


def drop_unneeded_alias(rewriter, original: cst.CSTNode, result):
    """The module-level alias of a torch context that no use needs any more (every use
    unwrapped), or the ``try`` holding only it and its stand-in: a placeholder that keeps
    the comment lines above it (see the module docstring)."""
    alias = rewriter.analysis.unwrapped_aliases.get(id(original))
    if alias is None:
        return result
    kind = "an autocast context" if alias.qualified in AUTOCASTS else "a grad-mode context"
    guarded = " with the try/except around it (its stand-in for older torch versions)" \
        if isinstance(original, cst.Try) else ""
    rewriter.ctx.converted(original, alias.qualified, f"{alias.local} = {alias.qualified} removed{guarded}: every "
                                                      f"use of {alias.local} enters {kind}, unwrapped")
    # the blank lines above it go where the statement after it has its own (no third blank line
    # between RAFT's imports and its first class)
    body = rewriter.module.body
    index = next((i for i, statement in enumerate(body) if statement is original), len(body))
    spaced = index + 1 < len(body) and any(line.comment is None for line in body[index + 1].leading_lines)
    above = [line for line in original.leading_lines if line.comment is not None or not spaced]
    return rewriter.placeholders.make(cst.SimpleStatementLine([cst.Pass()], leading_lines=above))
