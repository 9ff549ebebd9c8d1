"""Feature checks on torch modules: ``hasattr(F, "scaled_dot_product_attention")``,
``"silu" in dir(F)``, ``getattr(torch, "compiler", None)``.

Code written for several torch versions asks whether an API exists before
using it. After conversion the question is whether the converted code has it:
``hasattr`` becomes True when a rule converts ``module.name`` and False when
none does, so the code takes the branch it can run; ``getattr`` becomes the
MindSpore form of ``module.name`` when it can stand as a value, else the
default the code gave for a missing API.

Version checks ask which torch release runs: the converted code follows torch
2.x (``TORCH_VERSION``, rewrite_rules/runtime/cuda.py, the value
``torch.__version__`` becomes). A comparison of ``torch.__version__`` (or of
``version.parse(torch.__version__)``, ``LooseVersion(...)``) with a literal
version becomes its answer, compared as torch compares versions (``"2.13.0" <
"2.2"`` is True as text, False as versions); a method of it (``.split(".")``)
applies to that version string."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from rewrite_rules.registry import converts
from rewrite_rules.runtime.cuda import TORCH_VERSION
from rewrite_rules.spec import Unconvertible
from transpiler.convert.names import chain_parts

VERSIONS = frozenset({"torch.__version__", "torch.version.__version__"})
# functions that make a comparable version of a version string
_VERSION_TYPES = frozenset({
    "packaging.version.parse", "packaging.version.Version", "pkg_resources.parse_version",
    "distutils.version.LooseVersion", "distutils.version.StrictVersion", "looseversion.LooseVersion",
})
_COMPARISONS = {cst.LessThan: "__lt__", cst.LessThanEqual: "__le__", cst.GreaterThan: "__gt__",
                cst.GreaterThanEqual: "__ge__", cst.Equal: "__eq__", cst.NotEqual: "__ne__"}


@dataclass
class FeatureCheck:
    function: str  # "hasattr", "getattr", "version" (a comparison) or "version method"
    module: cst.BaseExpression  # the torch module reference asked (torch.__version__ for a version check)
    api: str  # the torch API asked about
    answer: bool | None = None  # a version comparison's
    negated: bool = False  # ``getattr(module, "name") is None``: whether it is missing


def feature_check(rewriter, call: cst.Call) -> FeatureCheck | None:
    """``hasattr(torch_module, "name")`` or ``getattr(torch_module, "name", default)``;
    or a method of the torch version, ``torch.__version__.split(".")``."""
    method = rewriter.analysis.qualified(call.func) if isinstance(call.func, cst.Attribute) else None
    if method is not None and method.rsplit(".", 1)[0] in VERSIONS:
        return FeatureCheck("version method", call.func, method.rsplit(".", 1)[0])
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
    """``"name" in dir(torch_module)``: the same question as hasattr; or a
    comparison of the torch version with literal versions."""
    version = version_check(rewriter, comparison)
    if version is not None:
        return version
    present = _presence_check(rewriter, comparison)
    if present is not None:
        return present
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


def _presence_check(rewriter, comparison: cst.Comparison) -> FeatureCheck | None:
    """``getattr(torch_module, "name") is not None`` (timm's ``has_native_amp``): the
    same question as hasattr (``is None``: its negation)."""
    if len(comparison.comparisons) != 1:
        return None
    target = comparison.comparisons[0]
    call = comparison.left
    if not isinstance(target.operator, (cst.Is, cst.IsNot)) or not _is_none(target.comparator):
        return None
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name) or call.func.value != "getattr":
        return None
    if "getattr" in rewriter.analysis.bound_names or len(call.args) != 2 or any(a.star or a.keyword for a in call.args):
        return None  # with a default, getattr's own answer (the value or the default) is compared
    module, name = call.args[0].value, call.args[1].value
    qualified = rewriter.analysis.qualified(module)
    if qualified is None or not isinstance(name, cst.SimpleString):
        return None
    return FeatureCheck("hasattr", module, f"{qualified}.{name.evaluated_value}", negated=isinstance(target.operator, cst.Is))


def _is_none(expr) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def version_check(rewriter, comparison: cst.Comparison) -> FeatureCheck | None:
    """``torch.__version__ >= "1.10"``, ``(1, 10) <= torch.__version__ < "3"``,
    ``version.parse(torch.__version__) < version.parse("2.1")``: the answer
    under torch ``TORCH_VERSION``. None for any other comparison."""
    operands = [comparison.left, *(target.comparator for target in comparison.comparisons)]
    values, reference = [], None
    for operand in operands:
        found = _torch_version(rewriter, operand)
        if found is not None:
            values.append(found[0])
            reference = found[1]
        else:
            values.append(_literal_version(rewriter, operand))
    if reference is None or any(value is None for value in values):
        return None
    if len({wrapped for wrapped, _ in values}) != 1:
        return None  # a parsed version compared with a string: not a comparison the code can make
    try:
        from packaging.version import InvalidVersion, Version
    except ImportError:  # black depends on packaging: always there
        return None
    answer = True
    for (_, left), target, (_, right) in zip(values, comparison.comparisons, values[1:]):
        method = _COMPARISONS.get(type(target.operator))
        if method is None:
            return None
        try:
            answer = answer and getattr(Version(left), method)(Version(right))
        except InvalidVersion:
            return None
    return FeatureCheck("version", reference, rewriter.analysis.qualified(reference), bool(answer))


def _torch_version(rewriter, expr) -> tuple[tuple[bool, str], cst.BaseExpression] | None:
    """((wrapped, TORCH_VERSION), the torch.__version__ reference) for ``torch.__version__``
    or ``version.parse(torch.__version__)``."""
    analysis = rewriter.analysis
    if analysis.qualified(expr) in VERSIONS:
        return (False, TORCH_VERSION), expr
    argument = _version_type_argument(rewriter, expr)
    if argument is not None and analysis.qualified(argument) in VERSIONS:
        return (True, TORCH_VERSION), argument
    return None


def _literal_version(rewriter, expr) -> tuple[bool, str] | None:
    """(wrapped, text) of ``"1.10"``, ``(1, 10)`` or ``version.parse("1.10")``."""
    argument = _version_type_argument(rewriter, expr)
    if argument is not None:
        return (True, argument.evaluated_value) if isinstance(argument, cst.SimpleString) else None
    if isinstance(expr, cst.SimpleString):
        return False, expr.evaluated_value
    if isinstance(expr, cst.Tuple) and expr.elements and all(
            isinstance(e.value, cst.Integer) and not isinstance(e, cst.StarredElement) for e in expr.elements):
        return False, ".".join(e.value.value for e in expr.elements)  # torch compares a tuple as its dotted text
    return None


def _version_type_argument(rewriter, expr) -> cst.BaseExpression | None:
    """X in ``version.parse(X)`` (or another of ``_VERSION_TYPES``)."""
    if not isinstance(expr, cst.Call) or len(expr.args) != 1 or expr.args[0].star or expr.args[0].keyword:
        return None
    parts = chain_parts(expr.func)
    analysis = rewriter.analysis
    if parts is None or parts[0] in analysis.bound_names:
        return None
    binding = analysis.imports.get(parts[0])
    if binding is None or ".".join([binding.qualified, *parts[1:]]) not in _VERSION_TYPES:
        return None
    return expr.args[0].value


def answer(rewriter, original: cst.Call, updated: cst.Call, check: FeatureCheck) -> cst.BaseExpression:
    if check.function.startswith("version"):
        return _version_answer(rewriter, original, updated, check)
    rules = rewriter.rules
    rule, attribute = rules.calls.get(check.api), rules.attributes.get(check.api)
    exists = any(r is not None and converts(r) for r in (rule, attribute))
    rewriter.ctx.consume(check.module)
    rewriter.changed()
    if check.function == "hasattr":
        asked = f"getattr(..., {check.api!r}) is {'' if check.negated else 'not '}None" \
            if isinstance(original, cst.Comparison) else f"hasattr(..., {check.api!r})"
        rewriter.ctx.converted(original, "hasattr", f"{asked} -> {exists != check.negated}: "
                               + ("ms-migrate converts it" if exists else "the converted code has no equivalent"))
        return cst.Name("True" if exists != check.negated else "False")
    value = _as_value(rewriter, check.api, rule, attribute) if exists else None
    if value is None:
        rewriter.ctx.converted(original, "getattr", f"getattr(..., {check.api!r}) -> its default: "
                               "the converted code has no equivalent")
        return updated.args[2].value
    rewriter.ctx.converted(original, "getattr", f"getattr(..., {check.api!r}) -> its MindSpore form")
    return value


def _version_answer(rewriter, original, updated, check: FeatureCheck) -> cst.BaseExpression:
    rewriter.ctx.consume(check.module)
    rewriter.changed()
    if check.function == "version":
        rewriter.ctx.converted(original, check.api, f"{check.api} compared with a literal version -> {check.answer}: "
                               f"the converted code follows torch {TORCH_VERSION}")
        return cst.Name("True" if check.answer else "False")
    version = cst.SimpleString(f'"{TORCH_VERSION}"')
    rewriter.ctx.converted(original, check.api, f"{check.api} -> \"{TORCH_VERSION}\": the torch release the "
                                                "converted code follows")
    return updated.with_changes(func=cst.Attribute(version, original.func.attr))


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
