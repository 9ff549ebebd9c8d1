"""torch.nn upsampling and pixel shuffling -> mindspore.nn.

Measured on MindSpore 2.10 CPU against torch:
- ``interpolate``/``Upsample`` with ``scale_factor`` raise for 1-d/2-d
  nearest/linear/bilinear/bicubic ("'scale_factor' option cannot currently be
  set") unless ``recompute_scale_factor=True``; that computes coordinates from
  the size ratio, which equals torch's 1/scale_factor mapping exactly when the
  factor is integral. Integral literal factors get ``recompute_scale_factor=True``
  (and become floats: MindSpore rejects an int factor); other literal factors
  are marked; a factor in a variable is converted with a warning;
- ``mode='bicubic'`` differs (up to 0.27): marked;
- UpsamplingNearest2d / UpsamplingBilinear2d are Upsample with mode
  'nearest' / 'bilinear' + align_corners=True.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.helpers import literal_or_none
from rewrite_rules.nn.shared import P, layer_cases
from rewrite_rules.api import ApiRule, Example, Unconvertible
from rewrite_rules.nn.module_paths import with_module_paths
from rewrite_rules.torch_functions.builders import atom


def _is_none(expr) -> bool:
    return expr is None or (isinstance(expr, cst.Name) and expr.value == "None")


def scale_factor_hook(call, ctx, recompute_name: str = "recompute_scale_factor"):
    """Make a torch scale_factor acceptable and faithful to MindSpore (see the module doc)."""
    known_mode, mode = literal_or_none(call, "mode")
    if known_mode and mode == "bicubic":
        raise Unconvertible("mode='bicubic' interpolates differently in MindSpore (measured up to 0.27 off)")
    factor = call.get("scale_factor")
    if _is_none(factor):
        return
    known_r, recompute = literal_or_none(call, recompute_name)
    known, value = literal_or_none(call, "scale_factor")
    if not known:
        v = atom(factor)  # MindSpore rejects int factors; `a if c else b` reads as one operand
        call.set("scale_factor", f"None if {v} is None else tuple(map(float, {v})) if isinstance({v}, (tuple, list)) else float({v})")
        if not (known_r and recompute):
            call.set(recompute_name, f"{v} is not None")
            ctx.warn(call.source, call.rule.torch,
                     "scale_factor in a variable: exact for integral factors; MindSpore maps coordinates by the size ratio")
        return
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    text = repr(tuple(float(v) for v in values)) if isinstance(value, (tuple, list)) else repr(float(value))
    call.set("scale_factor", text)
    if known_r and recompute:
        return
    if not all(float(v).is_integer() for v in values):
        raise Unconvertible(
            "non-integral scale_factor: MindSpore needs recompute_scale_factor=True, which maps coordinates "
            "by the size ratio (torch uses 1/scale_factor); pass recompute_scale_factor=True to accept that"
        )
    call.set(recompute_name, "True")


_X = {"x": "randn(2, 3, 4, 5)"}
_X1 = {"x": "randn(2, 3, 5)"}
_X3 = {"x": "randn(1, 2, 3, 4, 5)"}


def _fixed_mode(name: str, mode: str, align: bool) -> ApiRule:
    def hook(call, ctx):
        call.add_keyword("mode", repr(mode))
        if align:
            call.add_keyword("align_corners", "True")
        scale_factor_hook(call, ctx)

    return ApiRule(
        f"torch.nn.{name}",
        "mindspore.nn.Upsample",
        signature="size=None, scale_factor=None",
        positional=0,
        hook=hook,
        notes=f"Upsample(mode='{mode}'" + (", align_corners=True)" if align else ")"),
        examples=(
            *layer_cases(name, [P("size", "(6, 7)")], _X),
            *layer_cases(name, [P("scale_factor", "2")], _X, shapes=("keywords",)),
        ),
    )


RULES = [
    ApiRule(
        "torch.nn.Upsample",
        "mindspore.nn.Upsample",
        signature="size=None, scale_factor=None, mode='nearest', align_corners=None, recompute_scale_factor=None",
        positional=0,
        hook=scale_factor_hook,
        notes="integral scale factors get recompute_scale_factor=True (see nn/upsampling.py); bicubic is marked.",
        examples=(
            Example("up = nn.Upsample(scale_factor=2, mode='bilinear')",
                    'up = nn.Upsample(scale_factor=2.0, mode="bilinear", recompute_scale_factor=True)'),
            *layer_cases("Upsample", [P("size", "(6, 7)"), P("scale_factor", "None", default=True),
                                      P("mode", "'bilinear'", default=True), P("align_corners", "True", default=True)], _X),
            *layer_cases("Upsample", [P("scale_factor", "2"), P("mode", "'bilinear'")], _X, shapes=("keywords",)),
            Example("v_sf = 2.0\nv_mode = 'bilinear'\nlayer = nn.Upsample(scale_factor=v_sf, mode=v_mode)\nresult = layer(x)",
                    inputs=_X, notes="variables"),
            *layer_cases("Upsample", [P("scale_factor", "(2, 3)")], _X, shapes=("keywords",)),
            *layer_cases("Upsample", [P("scale_factor", "2.0"), P("mode", "'linear'"), P("align_corners", "False")], _X1,
                         shapes=("keywords",)),
            *layer_cases("Upsample", [P("scale_factor", "2"), P("mode", "'trilinear'")], _X3, shapes=("keywords",)),
            *layer_cases("Upsample", [P("scale_factor", "1.5"), P("mode", "'bilinear'"),
                                      P("recompute_scale_factor", "True")], _X, shapes=("keywords",)),
            Example("up = nn.Upsample(scale_factor=1.5)", marked="non-integral scale_factor"),
            Example("up = nn.Upsample(scale_factor=2, mode='bicubic')", marked="bicubic"),
        ),
    ),
    _fixed_mode("UpsamplingNearest2d", "nearest", False),
    _fixed_mode("UpsamplingBilinear2d", "bilinear", True),
    ApiRule(
        "torch.nn.PixelShuffle",
        "mindspore.nn.PixelShuffle",
        signature="upscale_factor",
        examples=layer_cases("PixelShuffle", [P("upscale_factor", "2")], {"x": "randn(2, 8, 3, 4)"}),
    ),
    ApiRule(
        "torch.nn.PixelUnshuffle",
        "mindspore.nn.PixelUnshuffle",
        signature="downscale_factor",
        examples=layer_cases("PixelUnshuffle", [P("downscale_factor", "2")], {"x": "randn(2, 2, 4, 6)"}),
    ),
    ApiRule(
        "torch.nn.ChannelShuffle",
        "mindspore.nn.ChannelShuffle",
        signature="groups",
        notes="MindSpore needs an input with more than 3 dims.",
        examples=layer_cases("ChannelShuffle", [P("groups", "3")], {"x": "randn(2, 6, 3, 4)"}),
    ),
]

RULES = with_module_paths(RULES)  # torch.nn.modules.X and torch.nn.modules.<submodule>.X too
