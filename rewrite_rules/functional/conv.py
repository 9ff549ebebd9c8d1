"""torch.nn.functional convolutions -> mindspore.ops.conv1d/2d/3d.

ops.convNd default to pad_mode='valid' and take torch's padding (an int or
one value per spatial dim) with pad_mode='pad'; torch's 'same'/'valid'
strings are pad modes (even kernels included, measured equal). The weight
layouts are torch's. Transposed convolutions have no CPU kernel in ops
(``ops.conv_transpose2d``: "kernel ConvTranspose2D unregistered"): marked;
nn.ConvTranspose*d converts.
"""

from __future__ import annotations

from rewrite_rules.helpers import literal_or_none
from rewrite_rules.nn.shared import P, fn_cases
from rewrite_rules.api import ApiRule, Example


def _padding(call, ctx):
    known, padding = literal_or_none(call, "padding")
    if known and padding in ("same", "valid"):
        call.remove("padding")
        call.add_keyword("pad_mode", repr(padding), before="padding")
    elif known and (padding == 0 or (isinstance(padding, (tuple, list)) and not any(padding))):
        call.remove("padding")
    else:
        call.add_keyword("pad_mode", '"pad"', before="padding")


_X = {1: "randn(2, 4, 9)", 2: "randn(2, 4, 7, 8)", 3: "randn(2, 4, 5, 6, 7)"}
_W = {1: "randn(6, 2, 3)", 2: "randn(6, 2, 3, 2)", 3: "randn(6, 2, 3, 3, 3)"}
_PAD = {1: "1", 2: "(1, 2)", 3: "(1, 0, 1)"}


def _conv(n: int) -> ApiRule:
    inputs = {"x": _X[n], "w": _W[n], "b": "randn(6)"}
    return ApiRule(
        f"torch.nn.functional.conv{n}d",
        f"mindspore.ops.conv{n}d",
        signature="input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1",
        positional=4,
        hook=_padding,
        notes="pad_mode is written for any padding: ops.conv defaults to 'valid'.",
        examples=(
            *fn_cases(f"conv{n}d", [P("input", "x"), P("weight", "w"), P("bias", "b", default=True),
                                    P("stride", "2", default=True), P("padding", _PAD[n], default=True),
                                    P("dilation", "1", default=True), P("groups", "2", kind="keyword")], inputs, atol=1e-5),
            *fn_cases(f"conv{n}d", [P("input", "x"), P("weight", "w"), P("padding", "'same'"), P("dilation", "2"),
                                    P("groups", "2")], inputs, shapes=("keywords",), atol=1e-5),
        ),
    )


def _transpose(n: int) -> ApiRule:
    return ApiRule(
        f"torch.nn.functional.conv_transpose{n}d",
        None,
        signature="input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1",
        notes="MindSpore's functional transposed convolution has no CPU kernel; use nn.ConvTranspose (Conv{n}dTranspose)",
        examples=(Example(f"y = F.conv_transpose{n}d(x, w)", marked="no CPU kernel"),),
    )


RULES = [_conv(1), _conv(2), _conv(3), _transpose(1), _transpose(2), _transpose(3)]
