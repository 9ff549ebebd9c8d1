"""torch.nn pooling layers -> mindspore.nn pooling Cells.

Differences carried (measured with torch on the same inputs):
- ``stride`` defaults to kernel_size in torch and to 1 in MindSpore: always written;
- MindSpore max pooling accepts padding, dilation, ceil_mode and
  return_indices only with ``pad_mode='pad'`` (its default 'valid' rejects
  them), so 'pad' is written whenever one of them is used;
- MindSpore's AdaptiveAvgPool1d / AdaptiveMaxPool1d need the input length
  divisible by output_size: the 2-d Cells with output size (None, n) pool
  the last axis of an (N, C, L) input for any length, as torch does;
- fractional max pooling samples differently: marked.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.helpers import literal_or_none
from rewrite_rules.nn.shared import P, layer_cases
from rewrite_rules.api import ApiRule, Example, Unsupported, parse_expr
from rewrite_rules.nn.module_paths import with_module_paths

_X = {1: "randn(2, 3, 9)", 2: "randn(2, 3, 7, 8)", 3: "randn(2, 3, 5, 6, 7)"}
_EVEN = {1: "randn(2, 3, 8)", 2: "randn(2, 3, 6, 8)", 3: "randn(2, 3, 4, 6, 6)"}  # unpooling restores these


def _is_none(expr) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _non_default(call, name: str, default) -> bool:
    if not call.has(name):
        return False
    known, value = literal_or_none(call, name)
    return not known or value != default


def pool_hook(needs_pad: tuple[str, ...]):
    """stride defaults to kernel_size; 'pad' mode whenever padding or one of
    ``needs_pad`` (arguments MindSpore accepts only in 'pad' mode) is set."""

    def hook(call, ctx):
        if not call.has("stride") or _is_none(call.get("stride")):
            call.set("stride", call.get("kernel_size"))
        elif isinstance(call.get("stride"), cst.Name) and isinstance(call.get("kernel_size"), cst.Name):
            # a stride passed on from a signature defaulting it to None (the layer's adapter,
            # a helper's make_pool(kernel_size, stride=None)): MindSpore refuses None
            kernel, stride = call.get("kernel_size").value, call.get("stride").value
            call.set("stride", parse_expr(f"{kernel} if {stride} is None else {stride}"))
        defaults = {"dilation": 1, "return_indices": False, "ceil_mode": False}
        padded = _non_default(call, "padding", 0) and literal_or_none(call, "padding")[1] not in ((0, 0), (0, 0, 0))
        if padded or any(_non_default(call, n, defaults[n]) for n in needs_pad):
            call.add_keyword("pad_mode", '"pad"', before="padding")
        else:
            call.remove("padding")

    return hook


def _max_pool(ndim: int, examples=()) -> ApiRule:
    name = f"MaxPool{ndim}d"
    k = "3" if ndim != 2 else "(3, 2)"
    return ApiRule(
        f"torch.nn.{name}",
        f"mindspore.nn.{name}",
        signature="kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False",
        positional=2,
        hook=pool_hook(("dilation", "return_indices", "ceil_mode")),
        notes="stride is always written (torch defaults it to kernel_size, MindSpore to 1); "
        "pad_mode='pad' whenever padding/dilation/ceil_mode/return_indices are used.",
        examples=(
            *examples,
            *layer_cases(name, [P("kernel_size", k), P("stride", "2", default=True), P("padding", "1", default=True),
                                P("dilation", "1", default=True), P("return_indices", "False", default=True),
                                P("ceil_mode", "True", default=True)], {"x": _X[ndim]}),
            *layer_cases(name, [P("kernel_size", "2"), P("return_indices", "True")], {"x": _X[ndim]},
                         shapes=("keywords",)),
            *(layer_cases(name, [P("kernel_size", "2"), P("dilation", "2")], {"x": _X[ndim]}, shapes=("keywords",))
              if ndim != 3 else ()),
        ),
    )


def _avg_pool(ndim: int, examples=()) -> ApiRule:
    name = f"AvgPool{ndim}d"
    divisor = ndim != 1
    k = "3" if ndim != 2 else "(3, 2)"
    signature = "kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True" + (
        ", divisor_override=None" if divisor else ""
    )
    params = [P("kernel_size", k), P("stride", "2", default=True), P("padding", "1", default=True),
              P("ceil_mode", "True", default=True), P("count_include_pad", "False", default=True)]
    return ApiRule(
        f"torch.nn.{name}",
        f"mindspore.nn.{name}",
        signature=signature,
        positional=2,
        hook=pool_hook(("ceil_mode",)),
        notes="stride is always written: torch defaults it to kernel_size, MindSpore to 1.",
        examples=(
            *examples,
            *layer_cases(name, params, {"x": _X[ndim]}),
            *(layer_cases(name, [P("kernel_size", "2"), P("divisor_override", "3")], {"x": _X[ndim]},
                          shapes=("keywords",)) if divisor else ()),
        ),
    )


def _last_axis(call, ctx):
    """(None, n): keep the channel axis (read as height), pool the length."""
    call.set("output_size", cst.Tuple([cst.Element(cst.Name("None")), cst.Element(call.get("output_size"))]))


def _adaptive(kind: str, ndim: int, indices: bool) -> ApiRule:
    name = f"Adaptive{kind}Pool{ndim}d"
    size = {1: "3", 2: "(3, 4)", 3: "(2, 3, 4)"}[ndim]
    params = [P("output_size", size)]
    signature = "output_size"
    args = {}
    if indices:
        signature += ", return_indices=False"
        params.append(P("return_indices", "True", default=True))
        if ndim == 1:
            args["return_indices"] = Unsupported("MindSpore's AdaptiveMaxPool1d does not return indices")
            params.pop()
    one_d = ndim == 1
    return ApiRule(
        f"torch.nn.{name}",
        f"mindspore.nn.Adaptive{kind}Pool2d" if one_d else f"mindspore.nn.{name}",
        signature=signature,
        args=args,
        hook=_last_axis if one_d else None,
        notes=f"Adaptive{kind}Pool2d((None, n)): MindSpore's 1-d Cell needs the length divisible by output_size" if one_d
        else "MindSpore returns int32 indices (torch int64)." if indices and ndim == 3 else "",
        examples=(*layer_cases(name, params, {"x": _X[ndim]},
                               dtype_map={"int64": "int32"} if indices and ndim == 3 else None,
                               notes="indices are int32 in MindSpore's AdaptiveMaxPool3d" if indices and ndim == 3 else ""),
                  *(layer_cases(name, [P("output_size", "3")], {"x": "randn(2, 3, 7)"}, shapes=("positional",),
                                notes="length not a multiple of the output size") if one_d else ())),
    )


def _lp_pool(ndim: int) -> ApiRule:
    name = f"LPPool{ndim}d"
    return ApiRule(
        f"torch.nn.{name}",
        f"mindspore.nn.{name}",
        signature="norm_type, kernel_size, stride=None, ceil_mode=False",
        examples=layer_cases(name, [P("norm_type", "2"), P("kernel_size", "2"), P("stride", "1", default=True),
                                    P("ceil_mode", "True", default=True)], {"x": _X[ndim]}, atol=1e-5),
    )


def _unpool(ndim: int) -> ApiRule:
    name = f"MaxUnpool{ndim}d"
    pool = f"pool = nn.MaxPool{ndim}d(2, return_indices=True)\ny, i = pool(x)\n"
    return ApiRule(
        f"torch.nn.{name}",
        f"mindspore.nn.{name}",
        signature="kernel_size, stride=None, padding=0",
        examples=tuple(
            Example(pool + ex.torch.replace("result = layer(x)", "result = layer(y, i)"), inputs=ex.inputs, notes=ex.notes)
            for ex in layer_cases(name, [P("kernel_size", "2"), P("stride", "2", default=True),
                                         P("padding", "0", default=True)], {"x": _EVEN[ndim]})
        ),
    )


def _fractional(ndim: int) -> ApiRule:
    return ApiRule(
        f"torch.nn.FractionalMaxPool{ndim}d",
        None,
        signature="kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None",
        notes="fractional max pooling draws its random pooling regions differently in MindSpore",
        examples=(Example(f"pool = nn.FractionalMaxPool{ndim}d(2, output_ratio=0.5)", marked="random pooling regions"),),
    )


RULES = [
    _max_pool(1),
    _max_pool(2, (Example("pool = nn.MaxPool2d(2)", "pool = nn.MaxPool2d(2, stride=2)"),)),
    _max_pool(3),
    _avg_pool(1),
    _avg_pool(2),
    _avg_pool(3),
    _adaptive("Avg", 1, False),
    _adaptive("Avg", 2, False),
    _adaptive("Avg", 3, False),
    _adaptive("Max", 1, True),
    _adaptive("Max", 2, True),
    _adaptive("Max", 3, True),
    _lp_pool(1),
    _lp_pool(2),
    _unpool(1),
    _unpool(2),
    _unpool(3),
    _fractional(2),
    _fractional(3),
]

RULES = with_module_paths(RULES)  # torch.nn.modules.X and torch.nn.modules.<submodule>.X too
