"""``torch._assert(condition, message)`` as a statement is Python's ``assert``
(torch spells it as a call so that symbolic tracing can see it)."""

from __future__ import annotations

import libcst as cst

ASSERT_APIS = frozenset({"torch._assert", "torch._assert_async"})


def is_torch_assert(call: cst.Call, analysis) -> bool:
    return analysis.qualified(call.func) in ASSERT_APIS and 1 <= len(call.args) <= 2 and not any(
        a.star for a in call.args)


def as_assert(ctx, original: cst.Call, updated: cst.Call) -> cst.Assert:
    ctx.consume(original.func)
    ctx.converted(original, "torch._assert", "torch._assert(...) -> assert")
    message = updated.args[1].value if len(updated.args) > 1 else None
    return cst.Assert(test=updated.args[0].value, msg=message)
