"""The public rule API: everything a rule module imports, ms-migrate's own and yours.

A rule module declares a module-level ``RULES`` list of rules; each rule is data
(target, signature, argument mapping) plus an optional hook, and carries its own
``Example``s, which ``ms-migrate rules --check`` runs under both frameworks::

    from rewrite_rules.api import ApiRule, Arg, Drop, Example

    RULES = [
        ApiRule(
            "mylib.layers.ConvBNAct", "mylib_ms.layers.ConvBNAct",
            signature="in_ch, out_ch, kernel_size=3, stride=1, act=True, device=None",
            args={"device": Drop("device placement is global in MindSpore")},
            examples=[Example("from mylib.layers import ConvBNAct\\nlayer = ConvBNAct(3, 8)\\nresult = layer(x)",
                              inputs={"x": "randn(2, 3, 8, 8)"})],
        ),
    ]

The rule model (see each class for its fields):

- ``ApiRule``: a torch callable (function or class) and its MindSpore form;
  ``AttributeRule``: a constant used as a value; ``MethodRule`` /
  ``PropertyRule``: a tensor or Cell method / attribute matched by name.
- ``Arg`` (rename, write the torch default out, convert the value), ``Drop``
  (no effect in MindSpore), ``Unsupported`` (cannot be carried: marked unless
  the torch default), a plain string (a keyword rename).
- ``Example``: torch code in, golden MindSpore text and/or execution inputs.
- ``WeightMove`` / ``AttributeRead``: how a layer's weights and attributes move.

What hooks receive and may use:

- ``BoundCall`` (an ApiRule hook's ``call``): the torch call bound to the
  torch signature; read with ``has``/``get``/``literal``, change with
  ``set``/``remove``/``add_keyword``, or set ``call.target``, ``call.func`` or
  ``call.result``. ``MethodCall`` (a MethodRule hook's ``call``). ``ctx.ref(name)``
  spells a MindSpore (or any importable) name and queues its import;
  ``ctx.warn(node, api, message)`` reports something the user should check.
- ``Unconvertible(reason)``: raise it when the call cannot be converted
  faithfully; the call is left as written under a ``# TODO(ms-migrate):`` marker.
  ``UnknownValue``: the conversion depends on a run-time value (the call goes
  through an adapter with torch's signature). ``NotALiteral``: what
  ``call.literal(name)`` raises for an argument not written as a literal (a
  ValueError to catch, or an Unconvertible to let through: the call is marked).
  ``InPlace``: a method hook's result for an in-place method.
- libcst helpers: ``code_of(node)`` (source text), ``literal_value(expr)`` /
  ``is_literal(expr)``, ``keyword_arg(name, value)``, ``parse_expr(text)``,
  ``render(call, func)`` (the call as the engine would write it, with callee
  ``func``); ``bind`` / ``apply_mapping`` bind a call to another rule's signature.

Rules import only this module (and their own helper modules), never the
rewriter's internals.
"""

from __future__ import annotations

from rewrite_rules.spec import (
    ApiRule,
    Arg,
    AttributeRead,
    AttributeRule,
    Drop,
    Example,
    InPlace,
    MethodRule,
    NotALiteral,
    Param,
    PropertyRule,
    Unconvertible,
    UnknownValue,
    Unsupported,
    WeightMove,
)
from transpiler.convert.context import parse_expr
from transpiler.convert.engine import (
    BoundCall,
    MethodCall,
    apply_mapping,
    bind,
    code_of,
    is_literal,
    keyword_arg,
    literal_value,
    render,
)

__all__ = [
    "ApiRule", "Arg", "AttributeRead", "AttributeRule", "BoundCall", "Drop", "Example", "InPlace", "MethodCall",
    "MethodRule", "NotALiteral", "Param", "PropertyRule", "Unconvertible", "UnknownValue", "Unsupported", "WeightMove",
    "apply_mapping", "bind", "code_of", "is_literal", "keyword_arg", "literal_value", "parse_expr", "render",
]
