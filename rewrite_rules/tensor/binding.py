"""Tensor method rules that bind their arguments to the torch signature.

A torch method call is bound like a function call (``x.sum(1, keepdim=True)``
against ``"dim=None, keepdim=False, *, dtype=None"``), the argument mapping of
``ApiRule`` applies (renames, explicit defaults, Unsupported, value hooks),
and the call is rendered as a MindSpore method on the same receiver, or as a
function taking the receiver first (``ops.relu(x)``).

This module defines no rules itself; the ``tensor_*`` family modules use it.
"""

from __future__ import annotations

from typing import Callable

import libcst as cst

from rewrite_rules.api import ApiRule, InPlace, MethodCall, MethodRule, Unconvertible, apply_mapping, bind, code_of, keyword_arg, literal_value, render

RULES: list = []

# Keywords torch's Tensor methods never take; a call using them is a numpy
# array (or MindSpore) method and is left alone.
# Keywords torch never uses on these methods: numpy or MindSpore spellings
# (so converting converted code again leaves it alone).
_NUMPY_KEYWORDS = frozenset({"axis", "keepdims", "ddof", "axis1", "axis2", "ord", "keep_dims"})


def _receiver_first(call: cst.Call, receiver: cst.BaseExpression) -> cst.Call:
    return call.with_changes(args=[cst.Arg(as_argument(receiver)), *call.args])


def as_argument(receiver: cst.BaseExpression) -> cst.BaseExpression:
    """A method's receiver passed as a function's argument: ``(q - h).detach()``
    -> ``ops.stop_gradient(q - h)``, without the parentheses the method needed."""
    if receiver.lpar and not isinstance(receiver, (cst.Tuple, cst.GeneratorExp)):
        return receiver.with_changes(lpar=[], rpar=[])
    return receiver


def method(
    name: str,
    signature: str,
    target: str | None = None,
    *,
    function: str | None = None,
    args=None,
    positional: int | None = None,
    hook: Callable | None = None,
    arity: tuple[int, int] | None = None,
    as_positional: bool = False,
    wrap: Callable | None = None,
    notes: str = "",
    examples=(),
) -> MethodRule:
    """A rule for ``Tensor.<name>`` with torch ``signature`` (without self).

    target: the MindSpore method name (default: the same name).
    function: instead of a method, call this qualified MindSpore function with
        the receiver as the first argument (e.g. ``mindspore.ops.relu``).
    hook: ``(bound, method_call, ctx)``; may change the bound call, set
        ``bound.result`` to replace the whole call, or raise Unconvertible.
    as_positional: write every positional torch parameter positionally (gaps
        filled with the torch default), for MindSpore methods whose keyword
        names are not torch's and not stable across overloads.
    wrap: ``(expr, ctx) -> expr`` applied to the converted call (e.g. a cast
        of the result to torch's dtype).
    """
    api = ApiRule(
        f"torch.Tensor.{name}",
        function or target or name,
        signature=signature,
        args=args or {},
        positional=positional,
    )
    if arity is None:
        n_positional = sum(1 for p in api.params if p.kind == "positional")
        varargs = any(p.kind == "varargs" for p in api.params)
        arity = (0, 99 if varargs else n_positional)

    def method_hook(call: MethodCall, ctx):
        if any(a.keyword is not None and a.keyword.value in _NUMPY_KEYWORDS for a in call.call.args):
            return call.call  # numpy-style (or already MindSpore) spelling: not a torch call
        result = converted(call, ctx)
        return wrap(result, ctx) if wrap is not None else result

    def converted(call: MethodCall, ctx):
        bound = bind(api, call.call, ctx, call.source)
        apply_mapping(bound)
        if hook is not None:
            hook(bound, call, ctx)
        if bound.result is not None:
            return bound.result
        if as_positional:
            _all_positional(bound)
        if function is not None:
            rendered = render(bound, ctx.ref(bound.target or function))
            return _receiver_first(rendered, call.receiver)
        attr = cst.Attribute(call.receiver, cst.Name(bound.target or target or name))
        return render(bound, attr)

    return MethodRule(name, hook=method_hook, arity=arity, notes=notes, examples=tuple(examples), signature=signature)


def _all_positional(bound) -> None:
    params = [p for p in bound.rule.params if p.kind == "positional"]
    present = [i for i, p in enumerate(params) if p.name in bound.values]
    if not present:
        return
    order = []
    for param in params[: present[-1] + 1]:
        if param.name not in bound.values:
            if param.default is None:
                raise Unconvertible(f"missing argument {param.name}")
            bound.set(param.name, param.default)
        bound.arg_nodes[param.name] = cst.Arg(bound.values[param.name])
        order.append(param.name)
    bound.positional = order
    bound.rule = _keep_all(bound.rule)


def _keep_all(api: ApiRule) -> ApiRule:
    from dataclasses import replace

    return replace(api, positional=sum(1 for p in api.params if p.kind == "positional"))


def same(name: str, *, arity=(0, 99), notes: str = "", examples=()) -> MethodRule:
    """MindSpore's Tensor has the method with the same arguments and meaning
    (checked by the rule's execution cases): the call passes unchanged."""
    return MethodRule(name, rename=name, arity=arity, notes=notes, examples=tuple(examples))


def in_place(
    name: str, out_of_place: str | None = None, *, cast: bool = False, rebinds: bool = False, arity=(0, 99),
    notes: str = "", examples=()
) -> MethodRule:
    """``x.<name>(...)`` (in place) -> ``x = x.<out_of_place>(...)``: the
    out-of-place form is converted by its own rule, then assigned back.
    cast: the out-of-place result has another dtype (comparisons give bool);
    torch keeps the receiver's, so cast back.
    rebinds: the result has another shape, so the name is rebound (see InPlace)."""
    base = out_of_place or name[:-1]

    def hook(call: MethodCall, ctx):
        from rewrite_rules.registry import load_rules

        n_positional = len(call.positional)
        rule = load_rules().method_rule(base, n_positional)
        plain = call.call.with_changes(func=call.call.func.with_changes(attr=cst.Name(base)))
        source = call.source.with_changes(func=call.source.func.with_changes(attr=cst.Name(base))) if call.source else None
        if rule is None:
            raise Unconvertible(f"no rule for the out-of-place form .{base}()")
        if rule.hook is not None:
            value = rule.hook(MethodCall(rule, call.receiver, plain, ctx, source), ctx)
        else:
            value = plain.with_changes(func=plain.func.with_changes(attr=cst.Name(rule.rename or base)))
        if cast:
            value = cst.Call(cst.Attribute(_parenthesized(value), cst.Name("astype")),
                             [cst.Arg(cst.Attribute(call.receiver, cst.Name("dtype")))])
        return InPlace(value, rebinds=rebinds)

    return MethodRule(
        name,
        hook=hook,
        arity=arity,
        notes=notes or f"in place: MindSpore's in-place methods are no-ops or missing on CPU; assigns .{base}()",
        examples=tuple(examples),
    )


def _parenthesized(node: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


keyword = keyword_arg  # the name rule modules of this family use

def literal(expr: cst.BaseExpression | None, default=None):
    """The Python value of a literal argument; ``default`` when absent; raises
    ValueError when it is not a literal."""
    if expr is None:
        return default
    return literal_value(expr)


_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float, cst.SimpleString, cst.Tuple, cst.List)


def atom(node: cst.BaseExpression) -> str:
    """Source text of ``node``, parenthesised unless it is atomic, for
    composing expressions as text."""
    text = code_of(node)
    return text if isinstance(node, _ATOMS) or node.lpar else f"({text})"


def owner(node: cst.BaseExpression) -> str:
    """atom() for the object of an attribute: an integer literal is parenthesised
    too (``0.int()`` does not parse)."""
    return f"({code_of(node)})" if isinstance(node, cst.Integer) and not node.lpar else atom(node)


def is_call_of(node: cst.BaseExpression | None, name: str) -> bool:
    """``node`` is ``<something>.name()`` (no arguments) or ``...name(<args>)``
    for a function spelled ``name``: the form a rule already produced."""
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
    return last == name


def expr(text: str) -> cst.BaseExpression:
    return cst.parse_expression(text)


__all__ = ["as_argument", "atom", "code_of", "expr", "in_place", "keyword", "literal", "method", "same"]
