"""torch.nn.functional resampling -> mindspore.ops: interpolate/upsample,
pixel (un)shuffle, channel_shuffle, grid_sample/affine_grid, unfold/fold.

scale_factor handling is shared with nn.Upsample (see nn/upsampling.py: integral
factors get recompute_scale_factor=True, others are marked). interpolate's
bicubic is a function written above the code: MindSpore's bicubic kernel uses
the cubic coefficient -0.5 where torch uses -0.75 (measured up to 0.27 off);
the function computes torch's weights as two matrices (exact to 3e-6).
grid_sample: bilinear/nearest with every padding mode and align_corners match
torch (<=1.2e-7); bicubic raises in MindSpore (marked).
affine_grid: torch's align_corners=None means False.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.helpers import literal_or_none
from rewrite_rules.nn.shared import P, fn_cases
from rewrite_rules.nn.upsampling import scale_factor_hook
from rewrite_rules.api import ApiRule, Arg, Example, Unconvertible, Unsupported, code_of, define, render
from rewrite_rules.torch_functions.builders import case

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


_BICUBIC = '''
def {name}(input, size=None, scale_factor=None, align_corners=None, recompute_scale_factor=None):
    """torch's bicubic interpolation (written by ms-migrate): cubic convolution with
    A=-0.75 and the border repeated, as two matrix products. MindSpore's bicubic uses
    A=-0.5 (up to 0.27 off torch)."""

    def weights(n_in, n_out, scale):
        # the (n_out, n_in) matrix of torch's weights along one axis
        out = ARANGE(n_out, dtype=FLOAT32)
        if align_corners:
            source = out * ((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
        else:
            source = (out + 0.5) * (n_in / n_out if scale is None else scale) - 0.5
        base = FLOOR(source)
        t = source - base
        a = -0.75
        on, off = TENSOR(1.0, FLOAT32), TENSOR(0.0, FLOAT32)
        matrix = ZEROS((n_out, n_in), FLOAT32)
        for k, d in ((-1, t + 1), (0, t), (1, 1 - t), (2, 2 - t)):
            if k in (0, 1):
                weight = ((a + 2) * d - (a + 3)) * d * d + 1
            else:
                weight = ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
            index = CLAMP(base + k, 0, n_in - 1).astype(INT32)
            matrix = matrix + ONE_HOT(index, n_in, on, off) * weight[:, None]
        return matrix.astype(input.dtype)

    height, width = input.shape[-2:]
    scales = (None, None)
    if size is None:
        factors = scale_factor
        if not isinstance(factors, (tuple, list)):
            factors = (factors, factors)
        size = (int(height * factors[0]), int(width * factors[1]))
        if not recompute_scale_factor:
            scales = (1.0 / factors[0], 1.0 / factors[1])
    elif not isinstance(size, (tuple, list)):
        size = (size, size)
    rows = weights(height, size[0], scales[0])
    columns = weights(width, size[1], scales[1])
    return MATMUL(MATMUL(rows, input), columns.T)
'''


def _interpolate(call, ctx):
    """mode='bicubic': torch's weights, which no MindSpore kernel computes (helper above)."""
    known, mode = literal_or_none(call, "mode")
    if not (known and mode == "bicubic"):
        scale_factor_hook(call, ctx)
        return
    source = _BICUBIC
    for name, qualified in (("ARANGE", "mindspore.ops.arange"), ("FLOAT32", "mindspore.float32"),
                            ("FLOOR", "mindspore.ops.floor"), ("ZEROS", "mindspore.ops.zeros"),
                            ("CLAMP", "mindspore.ops.clamp"), ("INT32", "mindspore.int32"),
                            ("ONE_HOT", "mindspore.ops.one_hot"), ("TENSOR", "mindspore.Tensor"),
                            ("MATMUL", "mindspore.ops.matmul")):
        source = source.replace(name, code_of(ctx.ref(qualified)))
    call.remove("mode")
    call.result = render(call, define(ctx, "bicubic_interpolate", source))


_INTERP_SIG = "input, size=None, scale_factor=None, mode='nearest', align_corners=None, recompute_scale_factor=None"

RULES = [
    ApiRule(
        "torch.nn.functional.interpolate",
        "mindspore.ops.interpolate",
        signature=_INTERP_SIG + ", antialias=False",
        args={"antialias": Unsupported("antialias=True is not supported by ops.interpolate")},
        positional=6,
        hook=_interpolate,
        notes="mode='bicubic': a function written above the code computes torch's weights (MindSpore's bicubic "
              "differs up to 0.27)",
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
            *fn_cases("interpolate", [P("input", "x"), P("size", "(6, 7)"), P("mode", "'bicubic'"),
                                      P("align_corners", "True", default=True)], {"x": "randn(2, 3, 5, 4)"},
                      shapes=("keywords",), atol=1e-5),
            *(case(f"result = F.interpolate(x, {args}, mode='bicubic')", {"x": "randn(2, 3, 7, 9)"}, atol=1e-5)
              for args in ("size=(3, 4)", "size=12", "scale_factor=1.5", "scale_factor=(2, 0.5)",
                           "scale_factor=1.7, recompute_scale_factor=True", "size=(1, 1), align_corners=True")),
            # DINO / timm: a position embedding resized to the patch grid
            case("pos = x.reshape(1, 4, 4, 6).permute(0, 3, 1, 2)\n"
                 "result = F.interpolate(pos, scale_factor=(1.5, 1.25), mode='bicubic', align_corners=False)",
                 {"x": "randn(16, 6)"}, atol=1e-5),
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
