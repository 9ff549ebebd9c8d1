"""Feature checks on torch modules: ``hasattr(F, "scaled_dot_product_attention")``.

Code written for several torch versions asks whether an API exists before
using it. After conversion the question is whether the converted code has it:
the check becomes True when a rule converts ``module.name`` and False when
none does, so the code takes the branch it can run."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.registry import converts


def feature_check(rewriter, call: cst.Call) -> tuple[cst.BaseExpression, str] | None:
    """(the torch module reference, the API asked about) for ``hasattr(torch_module, "literal")``."""
    if not (isinstance(call.func, cst.Name) and call.func.value == "hasattr"):
        return None
    if "hasattr" in rewriter.analysis.bound_names or len(call.args) != 2 or any(a.star or a.keyword for a in call.args):
        return None
    module, name = call.args[0].value, call.args[1].value
    qualified = rewriter.analysis.qualified(module)
    if qualified is None or not isinstance(name, cst.SimpleString):
        return None
    return module, f"{qualified}.{name.evaluated_value}"


def answer(rewriter, original: cst.Call, api: str) -> cst.Name:
    rules = rewriter.rules
    candidates = [rules.calls.get(api), rules.attributes.get(api)]
    exists = any(rule is not None and converts(rule) for rule in candidates)
    rewriter.ctx.consume(original.args[0].value)
    rewriter.changed()
    rewriter.ctx.converted(original, "hasattr", f"hasattr(..., {api!r}) -> {exists}: "
                           + ("ms-migrate converts it" if exists else "the converted code has no equivalent"))
    return cst.Name("True" if exists else "False")
