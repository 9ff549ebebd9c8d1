"""torch.nn.modules.utils._single / _pair / _triple / _quadruple / _ntuple: a
layer argument as an n-tuple (resnest's SplAtConv2d, timm-style layers).

Not torch APIs to replace but plain Python: a literal becomes the tuple
itself (``_pair(3)`` -> ``(3, 3)``); anything else calls a function written
above the code that does what torch's does (an iterable becomes a tuple,
anything else is repeated n times).
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.api import ApiRule, Example, code_of, define, literal_value

_NTUPLE = '''
def {name}(n):
    """torch.nn.modules.utils._ntuple (written by ms-migrate)."""

    def parse(x):
        if isinstance(x, ITERABLE):
            return tuple(x)
        return (x,) * n

    return parse
'''

_N = {"_single": 1, "_pair": 2, "_triple": 3, "_quadruple": 4}


def _ntuple(ctx) -> cst.Name:
    return define(ctx, "_ntuple", _NTUPLE.replace("ITERABLE", code_of(ctx.ref("collections.abc.Iterable"))))


def _fixed(n: int):
    """``_pair(3)`` -> ``(3, 3)``; ``_pair(k)`` -> ``_ntuple(2)(k)``."""

    def hook(call, ctx):
        value = call.get("x")
        try:
            literal = literal_value(value)
        except (ValueError, SyntaxError):
            literal = None
        if isinstance(literal, (int, float)) and not isinstance(literal, bool):
            call.result = cst.Tuple([cst.Element(value)] * n)
            return
        if isinstance(literal, (tuple, list)):
            call.result = cst.parse_expression(repr(tuple(literal)))
            return
        call.result = cst.Call(cst.Call(_ntuple(ctx), [cst.Arg(cst.Integer(str(n)))]), [cst.Arg(value)])

    return hook


def _ntuple_call(call, ctx):
    call.result = cst.Call(_ntuple(ctx), [cst.Arg(call.get("n"))])


def _rule(name: str, n: int) -> ApiRule:
    return ApiRule(
        f"torch.nn.modules.utils.{name}",
        None,
        signature="x",
        hook=_fixed(n),
        notes=f"a literal becomes the {n}-tuple itself; anything else goes through _ntuple({n}), written above the code.",
        examples=(
            Example(f"from torch.nn.modules.utils import {name}\nk = {name}(3)", f"k = {(3,) * n}"),
            Example(f"from torch.nn.modules.utils import {name}\nv = 2\nresult = ({name}(v), {name}([1] * {n}), "
                    f"{name}(x.shape[:1] * {n}))", inputs={"x": "randn(3)"}),
        ),
    )


RULES = [
    *(_rule(name, n) for name, n in _N.items()),
    ApiRule(
        "torch.nn.modules.utils._ntuple",
        None,
        signature="n, name='parse'",
        hook=_ntuple_call,
        notes="a function written above the code that does what torch's does.",
        examples=(
            Example("from torch.nn.modules.utils import _ntuple\nto_2tuple = _ntuple(2)\nv = 5\n"
                    "result = (to_2tuple(v), to_2tuple((1, 2)), _ntuple(3)(v))", inputs={}),
        ),
    ),
]
