"""Feature checks on torch modules: ``hasattr(F, "scaled_dot_product_attention")``,
``"silu" in dir(F)``, ``getattr(torch, "compiler", None)``.

Code written for several torch versions asks whether an API exists before
using it. After conversion the question is whether the converted code has it:
``hasattr`` becomes True when a rule converts ``module.name`` and False when
none does, so the code takes the branch it can run; ``getattr`` becomes the
MindSpore form of ``module.name`` when it can stand as a value, else the
default the code gave for a missing API."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from rewrite_rules.registry import converts
from rewrite_rules.spec import Unconvertible


@dataclass
class FeatureCheck:
    function: str  # "hasattr" or "getattr"
    module: cst.BaseExpression  # the torch module reference asked
    api: str  # the torch API asked about


def feature_check(rewriter, call: cst.Call) -> FeatureCheck | None:
    """``hasattr(torch_module, "name")`` or ``getattr(torch_module, "name", default)``."""
    function = call.func.value if isinstance(call.func, cst.Name) else None
    if function not in ("hasattr", "getattr") or function in rewriter.analysis.bound_names:
        return None
    if len(call.args) != (2 if function == "hasattr" else 3) or any(a.star or a.keyword for a in call.args):
        return None
    module, name = call.args[0].value, call.args[1].value
    qualified = rewriter.analysis.qualified(module)
    if qualified is None or not isinstance(name, cst.SimpleString):
        return None
    return FeatureCheck(function, module, f"{qualified}.{name.evaluated_value}")


def membership_check(rewriter, comparison: cst.Comparison) -> FeatureCheck | None:
    """``"name" in dir(torch_module)``: the same question as hasattr."""
    if len(comparison.comparisons) != 1 or not isinstance(comparison.left, cst.SimpleString):
        return None
    target = comparison.comparisons[0]
    call = target.comparator
    if not isinstance(target.operator, cst.In) or not isinstance(call, cst.Call):
        return None
    if not (isinstance(call.func, cst.Name) and call.func.value == "dir") or "dir" in rewriter.analysis.bound_names:
        return None
    if len(call.args) != 1 or call.args[0].star or call.args[0].keyword:
        return None
    qualified = rewriter.analysis.qualified(call.args[0].value)
    if qualified is None:
        return None
    return FeatureCheck("hasattr", call.args[0].value, f"{qualified}.{comparison.left.evaluated_value}")


def answer(rewriter, original: cst.Call, updated: cst.Call, check: FeatureCheck) -> cst.BaseExpression:
    rules = rewriter.rules
    rule, attribute = rules.calls.get(check.api), rules.attributes.get(check.api)
    exists = any(r is not None and converts(r) for r in (rule, attribute))
    rewriter.ctx.consume(check.module)
    rewriter.changed()
    if check.function == "hasattr":
        rewriter.ctx.converted(original, "hasattr", f"hasattr(..., {check.api!r}) -> {exists}: "
                               + ("ms-migrate converts it" if exists else "the converted code has no equivalent"))
        return cst.Name("True" if exists else "False")
    value = _as_value(rewriter, check.api, rule, attribute) if exists else None
    if value is None:
        rewriter.ctx.converted(original, "getattr", f"getattr(..., {check.api!r}) -> its default: "
                               "the converted code has no equivalent")
        return updated.args[2].value
    rewriter.ctx.converted(original, "getattr", f"getattr(..., {check.api!r}) -> its MindSpore form")
    return value


def _as_value(rewriter, api: str, rule, attribute) -> cst.BaseExpression | None:
    if attribute is not None and attribute.target is not None:
        return rewriter.ctx.ref(attribute.target)
    if rule is None:
        return None
    if rule.target is not None and rule.is_plain_rename:
        return rewriter.ctx.ref(rule.target)
    try:
        return rewriter.adapters.reference(api, rule)
    except Unconvertible:
        return None
