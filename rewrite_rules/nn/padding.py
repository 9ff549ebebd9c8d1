"""torch.nn padding layers -> mindspore.nn padding Cells (same names, same
padding order: last dimension first, (left, right, top, bottom, ...)).

ZeroPad1d/ZeroPad3d have no MindSpore class: they are ConstantPad with value 0
(equal). Circular padding has no Cell: marked (F.pad / ops.pad support it).
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.nn.shared import P, layer_cases
from rewrite_rules.api import ApiRule, Example, PropertyRule, code_of
from rewrite_rules.nn.module_paths import with_module_paths

_X = {1: "randn(2, 3, 6)", 2: "randn(2, 3, 4, 5)", 3: "randn(2, 3, 3, 4, 5)"}
_PAD = {1: "(1, 2)", 2: "(1, 2, 0, 1)", 3: "(1, 0, 2, 1, 0, 1)"}


def _pad(kind: str, ndim: int) -> ApiRule:
    name = f"{kind}Pad{ndim}d"
    return ApiRule(
        f"torch.nn.{name}",
        f"mindspore.nn.{name}",
        signature="padding",
        examples=(
            *layer_cases(name, [P("padding", _PAD[ndim])], {"x": _X[ndim]}),
            *layer_cases(name, [P("padding", "1")], {"x": _X[ndim]}, shapes=("positional",)),
        ),
    )


def _constant(ndim: int) -> ApiRule:
    name = f"ConstantPad{ndim}d"
    return ApiRule(
        f"torch.nn.{name}",
        f"mindspore.nn.{name}",
        signature="padding, value",
        examples=layer_cases(name, [P("padding", _PAD[ndim]), P("value", "0.5")], {"x": _X[ndim]}),
    )


def _zero(ndim: int) -> ApiRule:
    name = f"ZeroPad{ndim}d"
    target = "mindspore.nn.ZeroPad2d" if ndim == 2 else f"mindspore.nn.ConstantPad{ndim}d"

    def hook(call, ctx):
        if ndim != 2:
            call.add_keyword("value", "0.0")

    return ApiRule(
        f"torch.nn.{name}",
        target,
        signature="padding",
        hook=hook if ndim != 2 else None,
        notes="" if ndim == 2 else f"MindSpore has no {name}: ConstantPad{ndim}d with value 0.0.",
        examples=layer_cases(name, [P("padding", _PAD[ndim])], {"x": _X[ndim]}),
    )


def _circular(ndim: int) -> ApiRule:
    return ApiRule(
        f"torch.nn.CircularPad{ndim}d",
        None,
        signature="padding",
        notes="mindspore.nn has no circular padding Cell; use ops.pad(x, padding, mode='circular') in construct",
        examples=(Example(f"pad = nn.CircularPad{ndim}d(1)", marked="no circular padding Cell"),),
    )


def _reflection_padding(receiver: cst.BaseExpression, ctx):
    """MindSpore's ReflectionPad keeps its padding as pairs, first dimension
    first ([[top, bottom], [left, right]]); torch flat, last dimension first."""
    classes = {code_of(ctx.ref(f"mindspore.nn.ReflectionPad{n}d")) for n in (1, 2, 3)}
    made_here = isinstance(receiver, cst.Call) and code_of(receiver.func) in classes
    if not made_here and ctx.known_kinds.get(code_of(receiver)) != "reflection pad":
        return None  # some other object's padding
    return cst.parse_expression(f"tuple(p for pair in reversed({code_of(receiver)}.padding) for p in pair)")


RULES = [
    PropertyRule("padding", hook=_reflection_padding, api="torch.nn.modules.padding._ReflectionPadNd.padding",
                 notes="read back flat, last dimension first, as torch keeps it (MindSpore keeps pairs)",
                 examples=tuple(Example(f"layer = nn.ReflectionPad{n}d({pad})\nresult = layer.padding", inputs={})
                                for n, pad in ((1, "2"), (2, "(1, 2, 0, 1)"), (2, "3"), (3, "(1, 0, 2, 1, 0, 1)")))
                 + (Example("result = nn.ReflectionPad2d((1, 2, 0, 1)).padding", inputs={}),
                    Example("layer = nn.ReplicationPad2d((1, 2, 0, 1))\nresult = layer.padding", inputs={}),
                    Example("y = conv.padding", "y = conv.padding"))),
    *(_pad(kind, n) for kind in ("Reflection", "Replication") for n in (1, 2, 3)),
    *(_constant(n) for n in (1, 2, 3)),
    *(_zero(n) for n in (1, 2, 3)),
    *(_circular(n) for n in (1, 2, 3)),
]

RULES = with_module_paths(RULES)  # torch.nn.modules.X and torch.nn.modules.<submodule>.X too
