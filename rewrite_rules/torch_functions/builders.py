"""Compact builders for ``torch.*`` function rules and their execution cases.

Every builder returns an ``ApiRule`` whose examples are the five call shapes
(``rewrite_rules.cases.call_cases``) plus any extra cases given. Inputs are
spec strings of the execution harness (``transpiler/proof/harness/inputs.py``).
This module declares no rules itself.
"""

from __future__ import annotations

from rewrite_rules.cases import P, call_cases, marking
from rewrite_rules.helpers import OUT
from rewrite_rules.api import ApiRule, Example, code_of, literal_value

# Input sets used across the torch_* modules.
X = {"x": "randn(3, 4)"}
XY = {"x": "randn(3, 4)", "y": "randn(3, 4)"}
UNIT = {"x": "uniform(0.05, 0.95, (3, 4))"}  # acos, atanh, erfinv, logit
POSITIVE = {"x": "uniform(0.5, 3.0, (3, 4))"}  # log, sqrt, lgamma
ABOVE_ONE = {"x": "uniform(1.1, 3.0, (3, 4))"}  # acosh
INTS = {"x": "randint(-5, 6, (3, 4))", "y": "randint(1, 6, (3, 4))"}
BOOLS = {"x": "bool(3, 4)", "y": "bool(3, 4)"}

IN = P("input", "x")
OTHER = P("other", "y")


def case(snippet: str, inputs: dict | None = None, **options) -> Example:
    """One extra execution case (non-default values, dtypes, edge cases)."""
    return Example(snippet, inputs=dict(inputs or {}), **options)


def ms(name: str) -> str:
    return "mindspore.ops." + name


def fn(
    torch: str,
    target: str | None = None,
    signature: str = "input, *, out=None",
    *,
    args: dict | None = None,
    params: list[P] | tuple[P, ...] = (IN,),
    inputs: dict = X,
    template: str | None = None,
    results: tuple[str, ...] = ("result",),
    positional: int | None = None,
    hook=None,
    notes: str = "",
    rtol: float = 1e-5,
    atol: float = 1e-6,
    dtype_map: dict | None = None,
    compare: str = "values",
    extra: tuple[Example, ...] = (),
    aliases: tuple[str, ...] = (),
    pack_varargs: bool = False,
    marked: dict[str, str] | None = None,
) -> ApiRule:
    """A ``torch.*`` function rule. ``target`` defaults to the ``mindspore.ops``
    function of the same name; ``out=`` is always an Unsupported argument.
    ``marked`` maps call shapes the rule cannot convert (e.g. "variables" when
    a composition needs literal arguments) to the reason in their marker."""
    short = torch.rsplit(".", 1)[1]
    template = template or f"result = {torch}({{args}})"
    examples = call_cases(
        template,
        list(params),
        inputs,
        results=results,
        rtol=rtol,
        atol=atol,
        dtype_map=dtype_map,
        compare=compare,
    )
    examples = marking(examples, marked or {})
    mapping = dict(args or {})
    if "out" in [p.strip().split("=")[0] for p in signature.split(",")]:
        mapping.setdefault("out", OUT)
    return ApiRule(
        torch,
        target if target is not None else ms(short),
        signature=signature,
        args=mapping,
        positional=positional,
        hook=hook,
        notes=notes,
        aliases=aliases,
        pack_varargs=pack_varargs,
        examples=(*examples, *extra),
    )


# -- hooks that build the MindSpore expression from the bound arguments ------

import string  # noqa: E402

import libcst as cst  # noqa: E402

_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float, cst.SimpleString, cst.List, cst.Tuple)


def atom(expr: cst.BaseExpression) -> str:
    """Source text of ``expr``, parenthesised unless it is an atom."""
    text = code_of(expr)
    return text if isinstance(expr, _ATOMS) else f"({text})"


def arg_text(call, name: str) -> str | None:
    """The argument as source text (the torch default when omitted; None if
    it has no default and was not given)."""
    value = call.get(name)
    if value is not None:
        return atom(value)
    param = next((p for p in call.rule.params if p.name == name), None)
    if param is None or param.default is None:
        return None
    return atom(cst.parse_expression(param.default))


def literal(call, name: str, default=None):
    """(known, value) of an argument: known is False for non-literals."""
    try:
        return True, call.literal(name, default)
    except (ValueError, SyntaxError, TypeError):
        return False, None


def compose(template: str):
    """A hook replacing the call by ``template`` formatted with the arguments
    (``{input}``, ``{other}``...; ``{ops}`` and ``{ms}`` name the MindSpore
    modules). Used for torch functions MindSpore lacks on CPU and for
    compositions of supported ops."""
    fields = [f for _, f, _, _ in string.Formatter().parse(template) if f]
    attribute_read = {f for f in fields if "{" + f + "}." in template}  # {input}.ndim

    def hook(call, ctx):
        values = {}
        for name in fields:
            if name == "ops":
                values[name] = code_of(ctx.ref("mindspore.ops"))
            elif name == "ms":
                values[name] = code_of(ctx.ref("mindspore"))
            else:
                values[name] = arg_text(call, name)
                if name in attribute_read and values[name] is not None and values[name].isdigit():
                    values[name] = f"({values[name]})"  # `0.ndim` reads as the float `0.`
        call.result = cst.parse_expression(template.format(**values))

    return hook


def scaled(name: str, factor: str, unit=1):
    """A hook multiplying argument ``name`` by argument ``factor`` (torch's
    ``alpha=``/``value=``) when the factor is not the literal ``unit``."""

    def hook(call, ctx):
        if not call.has(factor):
            return
        known, value = literal(call, factor)
        if not (known and value == unit):
            call.set(name, f"{arg_text(call, name)} * {atom(call.get(factor))}")
        call.remove(factor)

    return hook


__all__ = ["P", "atom", "arg_text", "literal", "compose", "scaled", "case", "fn", "ms", "literal_value"]


def render_default(call, ctx) -> str:
    """Source text of the call as the engine would render it (for hooks that
    wrap the rendered call, e.g. in a cast)."""
    from rewrite_rules.api import render

    func = call.func if call.func is not None else ctx.ref(call.target)
    return code_of(render(call, func))


def wrapped(wrap, hook=None):
    """A hook that converts the call as usual (after ``hook``, if any) and
    passes the result through ``wrap(expr, ctx)``, e.g. a cast to torch's dtype."""
    from rewrite_rules.api import render

    def run(call, ctx):
        if hook is not None:
            hook(call, ctx)
        if call.result is None:
            call.result = render(call, call.func if call.func is not None else ctx.ref(call.target))
        call.result = wrap(call.result, ctx)

    return run
