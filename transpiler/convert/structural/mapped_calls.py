"""A torch API passed to ``map`` (``map(torch.LongTensor, zip(*batch))``, BERT's
collate code in nlp-tutorial): the API is called later with one argument, each
element of the iterable. Where its rule cannot stand as a value (it needs to see
the arguments), the call is written out in a lambda and converted there:
``map(lambda item: mindspore.Tensor(item, dtype=mindspore.int64), zip(*batch))``.
The elements of ``zip(...)``/``enumerate(...)`` are tuples: data, never the sizes a
legacy constructor also takes, so only the data form is written."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.spec import Unconvertible
from transpiler.convert.change_text import short
from transpiler.convert.engine import convert_call

_TUPLE_ITERABLES = frozenset({"zip", "enumerate"})
_ITEM = "item"


def mapped_api(rewriter, node: cst.Call) -> str | None:
    """The torch API ``node`` maps over one iterable, when its rule needs the arguments."""
    if not (isinstance(node.func, cst.Name) and node.func.value == "map" and len(node.args) == 2
            and not any(arg.star or arg.keyword for arg in node.args)):
        return None
    qualified = rewriter.analysis.qualified(node.args[0].value)
    rule = rewriter.rules.calls.get(qualified) if qualified is not None else None
    if rule is None or rule.hook is None:
        return None  # a rename stands as a value where it is
    return qualified


def note(rewriter, node: cst.Call) -> None:
    """Before the arguments are visited: the mapped API is this call's to convert."""
    if mapped_api(rewriter, node) is not None:
        rewriter.handled.add(id(node.args[0].value))


def convert(rewriter, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
    qualified = mapped_api(rewriter, original)
    if qualified is None:
        return updated
    rule = rewriter.rules.calls[qualified]
    api = original.args[0].value
    call = cst.Call(api, [cst.Arg(cst.Name(_ITEM))])
    ctx = rewriter.ctx
    before = set(ctx.imports_needed)
    try:
        body = convert_call(rule, call, ctx, source=call)
    except Unconvertible as exc:
        rewriter.mark(original, qualified, f"mapped over an iterable: {exc.reason}")
        return updated
    iterable = original.args[1].value
    if isinstance(body, cst.IfExp) and isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) \
            and iterable.func.value in _TUPLE_ITERABLES:
        body = body.orelse  # (zeros(size) if isinstance(item, int) else Tensor(item)): tuples are data
        used = _names(body)  # the imports of the branch left out are not needed
        ctx.imports_needed = before | {(m, local) for m, local in ctx.imports_needed - before
                                       if local.split(".")[0] in used}
    mapped = cst.Lambda(cst.Parameters([cst.Param(cst.Name(_ITEM))]), body)
    result = updated.with_changes(args=[updated.args[0].with_changes(value=mapped), *updated.args[1:]])
    rewriter.ctx.consume(api)
    rewriter.changed()
    rewriter.ctx.converted(api, qualified, f"{short(original)} -> {short(result)}")
    return result


class _Names(cst.CSTVisitor):
    def __init__(self):
        super().__init__()
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)


def _names(node: cst.CSTNode) -> set[str]:
    collector = _Names()
    node.visit(collector)
    return collector.names
