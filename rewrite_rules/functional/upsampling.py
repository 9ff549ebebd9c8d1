"""torch.nn.functional resampling -> mindspore.ops: interpolate/upsample,
pixel (un)shuffle, channel_shuffle, grid_sample/affine_grid, unfold/fold.

scale_factor handling is shared with nn.Upsample (see nn/upsampling.py: integral
factors get recompute_scale_factor=True, others are marked; bicubic is
marked). grid_sample: bilinear/nearest with every padding mode and
align_corners match torch (<=1.2e-7); bicubic raises in MindSpore (marked).
affine_grid: torch's align_corners=None means False.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.helpers import literal_or_none
from rewrite_rules.nn.shared import P, fn_cases
from rewrite_rules.nn.upsampling import scale_factor_hook
from rewrite_rules.api import ApiRule, Arg, Example, Unconvertible, Unsupported

_X = {"x": "randn(2, 3, 4, 5)"}


def _fixed(mode: str, align: bool):
    def hook(call, ctx):
        call.add_keyword("mode", repr(mode))
        if align:
            call.add_keyword("align_corners", "True")
        scale_factor_hook(call, ctx)

    return hook


def _grid_mode(call, ctx):
    known, mode = literal_or_none(call, "mode")
    if known and mode == "bicubic":
        raise Unconvertible("mode='bicubic' is not implemented by MindSpore's grid_sample")


def _size_tuple(expr, ctx):
    if isinstance(expr, cst.Tuple):
        return expr
    if isinstance(expr, cst.List):
        return cst.Tuple(list(expr.elements))
    return cst.Call(cst.Name("tuple"), [cst.Arg(expr)])


def _align_false(expr, ctx):
    if isinstance(expr, cst.Name) and expr.value == "None":
        return cst.Name("False")
    return expr


_INTERP_SIG = "input, size=None, scale_factor=None, mode='nearest', align_corners=None, recompute_scale_factor=None"

RULES = [
    ApiRule(
        "torch.nn.functional.interpolate",
        "mindspore.ops.interpolate",
        signature=_INTERP_SIG + ", antialias=False",
        args={"antialias": Unsupported("antialias=True is not supported by ops.interpolate")},
        positional=6,
        hook=scale_factor_hook,
        examples=(
            Example("y = F.interpolate(x, scale_factor=2, mode='bilinear')",
                    'y = ops.interpolate(x, scale_factor=2.0, mode="bilinear", recompute_scale_factor=True)'),
            *fn_cases("interpolate", [P("input", "x"), P("size", "(6, 7)"), P("scale_factor", "None", default=True),
                                      P("mode", "'bilinear'", default=True), P("align_corners", "True", default=True)], _X),
            *fn_cases("interpolate", [P("input", "x"), P("scale_factor", "2"), P("mode", "'nearest'")], _X,
                      shapes=("keywords", "reordered")),
            *fn_cases("interpolate", [P("input", "x"), P("scale_factor", "(2, 3)"), P("mode", "'bilinear'"),
                                      P("align_corners", "False")], _X, shapes=("keywords",)),
            *fn_cases("interpolate", [P("input", "x"), P("scale_factor", "3"), P("mode", "'area'")], _X,
                      shapes=("keywords",), atol=1e-5),
            *fn_cases("interpolate", [P("input", "x"), P("size", "7"), P("mode", "'linear'")], {"x": "randn(2, 3, 5)"},
                      shapes=("keywords",)),
            Example("v_sf = 2\nresult = F.interpolate(x, scale_factor=v_sf, mode='bilinear')", inputs=_X, notes="variables"),
            Example("y = F.interpolate(x, scale_factor=1.5)", marked="non-integral scale_factor"),
            Example("y = F.interpolate(x, size=(8, 8), mode='bicubic')", marked="bicubic"),
        ),
    ),
    ApiRule(
        "torch.nn.functional.upsample",
        "mindspore.ops.upsample",
        signature="input, size=None, scale_factor=None, mode='nearest', align_corners=None",
        positional=5,
        hook=scale_factor_hook,
        examples=fn_cases("upsample", [P("input", "x"), P("size", "(6, 7)"), P("scale_factor", "None", default=True),
                                       P("mode", "'bilinear'", default=True), P("align_corners", "True", default=True)], _X),
    ),
    *(
        ApiRule(
            f"torch.nn.functional.upsample_{mode}",
            "mindspore.ops.interpolate",
            signature="input, size=None, scale_factor=None",
            positional=3,
            hook=_fixed(mode, mode == "bilinear"),
            notes=f"interpolate(mode='{mode}'" + (", align_corners=True)" if mode == "bilinear" else ")"),
            examples=(
                *fn_cases(f"upsample_{mode}", [P("input", "x"), P("size", "(6, 7)")], _X),
                *fn_cases(f"upsample_{mode}", [P("input", "x"), P("scale_factor", "2")], _X, shapes=("keywords",)),
            ),
        )
        for mode in ("nearest", "bilinear")
    ),
    ApiRule(
        "torch.nn.functional.pixel_shuffle",
        "mindspore.ops.pixel_shuffle",
        signature="input, upscale_factor",
        examples=fn_cases("pixel_shuffle", [P("input", "x"), P("upscale_factor", "2")], {"x": "randn(2, 8, 3, 4)"}),
    ),
    ApiRule(
        "torch.nn.functional.pixel_unshuffle",
        "mindspore.ops.pixel_unshuffle",
        signature="input, downscale_factor",
        examples=fn_cases("pixel_unshuffle", [P("input", "x"), P("downscale_factor", "2")], {"x": "randn(2, 2, 4, 6)"}),
    ),
    ApiRule(
        "torch.nn.functional.channel_shuffle",
        "mindspore.ops.channel_shuffle",
        signature="input, groups",
        args={"input": "x"},
        positional=2,
        notes="MindSpore needs an input with more than 3 dims.",
        examples=fn_cases("channel_shuffle", [P("input", "x"), P("groups", "3")], {"x": "randn(2, 6, 3, 4)"}),
    ),
    ApiRule(
        "torch.nn.functional.grid_sample",
        "mindspore.ops.grid_sample",
        signature="input, grid, mode='bilinear', padding_mode='zeros', align_corners=None",
        hook=_grid_mode,
        examples=(
            *fn_cases("grid_sample", [P("input", "x"), P("grid", "g"), P("mode", "'nearest'", default=True),
                                      P("padding_mode", "'border'", default=True), P("align_corners", "True", default=True)],
                      {"x": "randn(2, 3, 4, 5)", "g": "uniform(-1.2, 1.2, (2, 3, 4, 2))"}),
            *fn_cases("grid_sample", [P("input", "x"), P("grid", "g"), P("padding_mode", "'reflection'"),
                                      P("align_corners", "False")],
                      {"x": "randn(2, 3, 4, 5)", "g": "uniform(-1.2, 1.2, (2, 3, 4, 2))"}, shapes=("keywords",)),
            Example("y = F.grid_sample(x, g, mode='bicubic')", marked="bicubic"),
        ),
    ),
    ApiRule(
        "torch.nn.functional.affine_grid",
        "mindspore.ops.affine_grid",
        signature="theta, size, align_corners=None",
        args={"align_corners": Arg(explicit=True, value=_align_false), "size": Arg(value=_size_tuple)},
        notes="torch's align_corners=None means False (MindSpore's default is False too; written out); "
              "the size as a tuple (MindSpore refuses a list).",
        examples=(*fn_cases("affine_grid", [P("theta", "t"), P("size", "(2, 3, 4, 5)"), P("align_corners", "True", default=True)],
                            {"t": "randn(2, 2, 3)"}),
                  *fn_cases("affine_grid", [P("theta", "t"), P("size", "[2, 3, 4, 5]")], {"t": "randn(2, 2, 3)"},
                            shapes=("positional", "variables")),
                  *fn_cases("affine_grid", [P("theta", "t"), P("size", "x.size()")], {"t": "randn(2, 2, 3)", "x": "randn(2, 3, 4, 5)"},
                            shapes=("positional",)),
                  *fn_cases("affine_grid", [P("theta", "t"), P("size", "torch.Size([2, 3, 4, 5])")], {"t": "randn(2, 2, 3)"},
                            shapes=("positional",))),
    ),
    ApiRule(
        "torch.nn.functional.unfold",
        "mindspore.ops.unfold",
        signature="input, kernel_size, dilation=1, padding=0, stride=1",
        examples=fn_cases("unfold", [P("input", "x"), P("kernel_size", "2"), P("dilation", "1", default=True),
                                     P("padding", "1", default=True), P("stride", "2", default=True)], _X),
    ),
    ApiRule(
        "torch.nn.functional.fold",
        "mindspore.ops.fold",
        signature="input, output_size, kernel_size, dilation=1, padding=0, stride=1",
        hook=lambda call, ctx: call.set(
            "output_size",
            cst.Call(ctx.ref("mindspore.Tensor"), [cst.Arg(call.get("output_size")),
                                                   cst.Arg(ctx.ref("mindspore.int32"))]),
        ),
        notes="MindSpore takes output_size as an int32 Tensor.",
        examples=fn_cases("fold", [P("input", "u"), P("output_size", "(4, 5)"), P("kernel_size", "2"),
                                   P("dilation", "1", default=True), P("padding", "0", default=True),
                                   P("stride", "1", default=True)], {"u": "randn(2, 12, 12)"}),
    ),
]
