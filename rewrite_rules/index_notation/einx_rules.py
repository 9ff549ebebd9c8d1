"""einx's element-wise operations with a broadcasting description -> MindSpore
operators on tensors rearranged to the output's axes.

``einx.subtract('i, j -> i j', q_pos, k_pos)`` (x-transformers' relative
positions), ``einx.where('b n, b n d, -> b n d', mask, out, 0.)`` (its masked
outputs): each input's axes are put in the output's order, with a length-1
axis where it has none of the output's (the einops rearrange of ``i -> i 1``),
and the operation broadcasts them, as einx's own backends do. einx has no
MindSpore backend ("No registered backends match the tensor types"); the
lowered form needs neither einx nor torch and compiles in graph mode.

Lowered: descriptions whose output is axis names, ``1``, one ``...`` (leading
where an input has none) and flat groups ``(b s)`` (merged after the
broadcast), each input naming output axes only (an empty input is a scalar).
Marked: groups in an input, brackets ``[...]`` (einx's reductions), anonymous
ellipses ``b...``, and axis-length keywords (an axis only the output has).
"""

from __future__ import annotations

import re

import libcst as cst

from rewrite_rules.index_notation.build import atom
from rewrite_rules.index_notation.calls import evaluated_once
from rewrite_rules.index_notation.equations import EquationError
from rewrite_rules.index_notation.literals import argument_string, not_literal
from rewrite_rules.index_notation.patterns import parse_pattern
from rewrite_rules.index_notation.rearranging import lower_pattern
from rewrite_rules.api import ApiRule, Example, Unconvertible, code_of

_AXIS = re.compile(r"[A-Za-z_]\w*|1|\.\.\.")
_FLAT_GROUPS = re.compile(r"[^()]*(\([^()]*\)[^()]*)*")  # (a b) groups, none nested
_SYMBOLS = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "true_divide": "/", "floor_divide": "//",
            "logical_and": "&", "logical_or": "|", "less": "<", "less_equal": "<=", "greater": ">",
            "greater_equal": ">=", "equal": "==", "not_equal": "!="}
_FUNCTIONS = {"maximum": "mindspore.ops.maximum", "minimum": "mindspore.ops.minimum", "where": "mindspore.ops.where"}
_ARITY = {**{name: 2 for name in (*_SYMBOLS, "maximum", "minimum")}, "where": 3}
_NOT_LOWERED = "only broadcasting descriptions (axis names, 1, one ... and flat output groups) are lowered"


def _axes(text: str, description: str) -> list[str]:
    tokens = text.split()
    if not all(_AXIS.fullmatch(t) for t in tokens) or tokens.count("...") > 1:
        raise Unconvertible(f"einx description {description!r}: {_NOT_LOWERED}")
    return tokens


def _aligned(axes: list[str], output: list[str], description: str) -> str | None:
    """The einops pattern putting an input's axes in the output's order (None: already there)."""
    if any(a != "1" and a not in output for a in axes):
        raise Unconvertible(f"einx description {description!r}: an input axis the output does not name")
    if "..." in output and "..." not in axes and output[0] != "...":
        raise Unconvertible(f"einx description {description!r}: {_NOT_LOWERED}")
    kept = [a for a in output if a != "..." or "..." in axes]
    filler = [a not in axes and a != "1" for a in kept]  # output axes this input lacks: length 1 here
    while kept and filler[0] and "..." not in axes:
        kept, filler = kept[1:], filler[1:]  # leading ones: broadcasting adds them
    target = ["1" if lacks else a for a, lacks in zip(kept, filler)]
    if target == axes:
        return None
    return f"{' '.join(axes)} -> {' '.join(target)}"


def _rearranged(pattern: str, tensor: cst.BaseExpression, description: str) -> cst.BaseExpression:
    """``tensor`` rearranged by the einops ``pattern``, lowered as einops.rearrange is."""
    try:
        parsed = parse_pattern(pattern, "rearrange", set())
        return evaluated_once(lambda t, s: lower_pattern(parsed, t, s), tensor, {})
    except EquationError as error:
        raise Unconvertible(f"einx description {description!r}: {error}") from None


def _operation(name: str):
    def hook(call, ctx):
        description = argument_string(call, "description")
        if description is None:
            raise not_literal("description", call.get("description"))
        if any(k not in ("description", "backend", "cse", "graph") for k in call.values):
            raise Unconvertible("axis lengths given as keywords: an axis only the output has is not lowered")
        if call.has("backend") or any(a.star for a in call.varargs):
            raise Unconvertible("a backend or unpacked tensors: the tensors must be written one by one")
        inputs_text, arrow, output_text = description.partition("->")
        if not _FLAT_GROUPS.fullmatch(output_text):
            raise Unconvertible(f"einx description {description!r}: {_NOT_LOWERED}")
        output = _axes(output_text.replace("(", " ").replace(")", " "), description)
        specs = [_axes(part, description) for part in inputs_text.split(",")]
        tensors = [a.value for a in call.varargs]
        if not arrow or len(specs) != len(tensors) or len(tensors) != _ARITY[name]:
            raise Unconvertible(f"einx description {description!r}: one input per tensor and one output")
        operands = []
        for axes, tensor in zip(specs, tensors):
            pattern = _aligned(axes, output, description) if axes else None
            if pattern is None:
                operands.append(tensor)
                continue
            operands.append(_rearranged(pattern, tensor, description))
        if name in _FUNCTIONS:
            result = cst.Call(ctx.ref(_FUNCTIONS[name]), [cst.Arg(o) for o in operands])
        else:
            left, right = (code_of(atom(o)) for o in operands)
            result = cst.parse_expression(f"({left} {_SYMBOLS[name]} {right})")
        if "(" in output_text:  # x-transformers' 'b n d, s d -> (b s) n d': the broadcast axes merged after
            result = _rearranged(f"{' '.join(output)} -> {output_text}", result, description)
        call.result = result

    return hook


_SIGNATURE = "description, *tensors, backend=None, cse=True, graph=False, **parameters"
_POSITIONS = {"q": "arange(4)", "k": "arange(3)"}
_POSITIONS_IJ = {"a": "arange(4)", "b": "arange(3)"}
_MASKED = {"mask": "bool(2, 5)", "x": "randn(2, 5, 3)"}


def _rule(name: str, examples=()) -> ApiRule:
    return ApiRule(f"einx.{name}", None, signature=_SIGNATURE, hook=_operation(name),
                   notes="a broadcasting description -> the inputs rearranged to the output's axes, then "
                         + ("the MindSpore function" if name in _FUNCTIONS else "the operator"),
                   examples=tuple(examples))


RULES = [
    _rule("subtract", (
        Example("import einx\nrel = einx.subtract('j, i -> i j', k, q)", "rel = k - q[:, None]"),
        Example("import einx\nresult = einx.subtract('j, i -> i j', k, q)", inputs=_POSITIONS),
        Example("import einx\nresult = einx.subtract('i, j -> 1 i j', q, k)", inputs=_POSITIONS),
        Example("import einx\nresult = -einx.subtract('... j, ... i -> ... i j', a, b).abs()",
                inputs={"a": "randn(2, 3)", "b": "randn(2, 4)"}),
        Example("import einx\nresult = einx.subtract('b h i, b h j -> b h i j', x, x)", inputs={"x": "randn(2, 3, 4)"}),
        Example("import einx\ny = einx.subtract('b (h d), b h d -> b h d', x, x)", marked="only broadcasting"),
        Example("import einx\ny = einx.subtract('b i, j -> b i j', x, y, j=3)", marked="axis lengths"),
    )),
    _rule("add", (
        Example("import einx\nresult = einx.add('b n d, s d -> (b s) n d', x, streams)",
                inputs={"x": "randn(2, 3, 4)", "streams": "randn(5, 4)"}),
        Example("import einx\nresult = einx.add('b n d, n d -> b n d', x, pos)", inputs={"x": "randn(2, 3, 4)",
                                                                                       "pos": "randn(3, 4)"}),
    )),
    _rule("multiply", (
        Example("import einx\nresult = einx.multiply('b n h, b h n d -> b h n d', gate.sigmoid(), x)",
                inputs={"gate": "randn(2, 5, 3)", "x": "randn(2, 3, 5, 4)"}),
    )),
    _rule("divide", (Example("import einx\nresult = einx.divide('b n d, b n -> b n d', x, s)",
                             inputs={"x": "randn(2, 3, 4)", "s": "uniform(1, 2, (2, 3))"}),)),
    _rule("where", (
        Example("import einx\nout = einx.where('b n, b n d, -> b n d', mask, out, 0.)",
                "out = ops.where(mask[..., None], out, 0.0)"),
        Example("import einx\nresult = einx.where('b n, b n d, -> b n d', mask, x, 0.)", inputs=_MASKED),
    )),
    _rule("maximum", (Example("import einx\nresult = einx.maximum('i, j -> i j', a, b)",
                              inputs={"a": "randn(3)", "b": "randn(4)"}),)),
    _rule("minimum", (Example("import einx\nresult = einx.minimum('b n, n -> b n', x, y)",
                              inputs={"x": "randn(2, 3)", "y": "randn(3)"}),)),
    _rule("less", (Example("import einx\nresult = einx.less('i, j -> i j', q, k)", inputs=_POSITIONS),)),
    _rule("greater_equal", (Example("import einx\nresult = einx.greater_equal('i, j -> i j', q, k)", inputs=_POSITIONS),)),
    *(_rule(name, (Example(f"import einx\nresult = einx.{name}('i, j -> i j', a, b)", inputs=inputs),))
      for name, inputs in (("true_divide", {"a": "randn(3)", "b": "uniform(1, 2, (4,))"}),
                           ("floor_divide", {"a": "randint(-9, 9, (3,))", "b": "randint(1, 4, (4,))"}),
                           ("logical_and", {"a": "bool(3)", "b": "bool(4)"}),
                           ("logical_or", {"a": "bool(3)", "b": "bool(4)"}),
                           ("less_equal", _POSITIONS_IJ), ("greater", _POSITIONS_IJ), ("equal", _POSITIONS_IJ),
                           ("not_equal", _POSITIONS_IJ))),
]
