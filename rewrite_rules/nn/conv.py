"""torch.nn convolutions -> mindspore.nn Conv Cells.

Differences carried (all measured against torch with copied weights):
- torch's ``padding=0`` default is not MindSpore's ``pad_mode='same'``
  default: pad_mode is always written ('valid' for no padding, 'pad' with
  explicit padding, 'same' for torch 'same' with odd kernels);
- ``bias=True`` is not MindSpore's ``has_bias=False`` default: always written;
- torch 'same' padding = MindSpore pad_mode='same', even kernels included
  (both put the odd extra row/column at the end);
- ``groups`` -> ``group``; MindSpore pads per side, so a torch (ph, pw) pair
  becomes (ph, ph, pw, pw);
- Conv1d / ConvTranspose1d weights are stored 4-D (out, in, 1, k);
- ConvTranspose2d ``output_padding`` is computed wrongly by MindSpore 2.10
  (the extra row differs by up to 0.6), so it is composed as asymmetric
  padding (p, p - op) which gives torch's result (2e-7);
- ConvTranspose1d has no output_padding in MindSpore; Conv3dTranspose accepts
  only dilation 1 in depth.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.helpers import DEVICE, literal_or_none
from rewrite_rules.cases import SHAPES
from rewrite_rules.nn.shared import DTYPE, KAIMING_RESET, P, layer_cases, reset_example
from rewrite_rules.api import (ApiRule, Arg, AttributeRead, Example, NotALiteral, Unconvertible, UnknownValue, Unsupported,
                               WeightMove, code_of, define)
from rewrite_rules.nn.module_paths import with_module_paths

_CONV1D_WEIGHT = {"weight": WeightMove("weight", insert_axis=2)}


def _conv_attributes(ndim: int) -> dict:
    """Conv1d keeps its window as 2-d (1, k) tuples; the padding is stored per side (or as one int)."""
    attributes = {"groups": "group",
                  "padding": AttributeRead(reason="MindSpore keeps the padding per side (top, bottom, left, "
                                                  "right) or as one int; read the value the layer was built with")}
    if ndim == 1:
        for name in ("kernel_size", "stride", "dilation"):
            attributes[name] = AttributeRead(f"{{cell}}.{name}[1:]")
    return attributes


def _as_tuple(value, ndim: int) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * ndim


def _per_side(values: tuple, ndim: int):
    """torch pads each spatial dim on both sides; MindSpore wants (before, after) per dim."""
    if ndim == 1:
        return values[0]
    if len(set(values)) == 1:
        return values[0]
    return tuple(v for v in values for _ in range(2))


def _per_side_at_run_time(expr, ndim: int):
    """The (before, after) expansion of a padding only known at run time."""
    v = code_of(expr)
    if ndim == 1:
        return cst.parse_expression(f"{v}[0] if isinstance({v}, (tuple, list)) else {v}")
    return cst.parse_expression(f"tuple(p for p in {v} for _ in (0, 1)) if isinstance({v}, (tuple, list)) else {v}")


def _windows_at_run_time(call, ndim: int) -> None:
    """torch takes a list, or one value in a sequence, for kernel_size, stride and dilation
    (EfficientNet passes stride=[2]); MindSpore an int or a tuple of ndim values (1-d: an int)."""
    for name in ("kernel_size", "stride", "dilation"):
        if not call.has(name) or not isinstance(call.get(name), cst.Name):
            continue
        v = code_of(call.get(name))
        one = f"{v}[0]" if ndim == 1 else f"tuple({v}) * ({ndim} // len({v}))"
        call.set(name, cst.parse_expression(f"{one} if isinstance({v}, (tuple, list)) else {v}"))


_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")

_WITH_PADDING_MODE = '''
class {name}(CONV):
    """torch.nn.ConvNDd with padding_mode= (written by ms-migrate)."""

    # MindSpore pads with zeros only: the input is padded with ops.pad in the mode, then convolved unpadded

    def __init__(self, *args, padding=0, padding_mode="zeros", **kwargs):
        super().__init__(*args, pad_mode="valid", **kwargs)
        if padding == "same":  # torch puts the odd extra element at the end
            windows = zip(self.kernel_size[-ND:], self.dilation[-ND:])
            pairs = [(d * (k - 1) // 2, d * (k - 1) - d * (k - 1) // 2) for k, d in windows]
        elif padding == "valid":
            pairs = [(0, 0)] * ND
        else:
            sizes = padding if isinstance(padding, (tuple, list)) else (padding,) * ND
            pairs = [(p, p) for p in sizes]
        self.padding_mode = {{"zeros": "constant"}}.get(padding_mode, padding_mode)
        # ops.pad takes the last axis first
        self.pads = tuple(v for pair in reversed(pairs) for v in pair)

    def construct(self, x):
        return super().construct(OPS.pad(x, self.pads, mode=self.padding_mode))
'''


def _padding_mode(call, ctx, ndim: int) -> bool:
    """padding_mode other than 'zeros': the Conv class written above the code pads the input
    (ops.pad with the mode) and convolves unpadded (MindSpore's convolutions pad with zeros only).
    Returns whether the call goes through it."""
    if not call.has("padding_mode"):
        return False
    known, mode = literal_or_none(call, "padding_mode")
    if known and mode == "zeros":
        call.remove("padding_mode")
        return False
    if call.for_adapter:
        raise NotALiteral("padding_mode", code_of(call.get("padding_mode")))  # the adapter checks torch's default
    if known and mode not in _PADDING_MODES:
        raise Unconvertible(f"padding_mode={mode!r} is not one of torch's {_PADDING_MODES}")
    source = _WITH_PADDING_MODE.replace("CONV", code_of(ctx.ref(f"mindspore.nn.Conv{ndim}d")))
    source = source.replace("OPS", code_of(ctx.ref("mindspore.ops"))).replace("ND", str(ndim))
    call.func = define(ctx, f"Conv{ndim}dWithPaddingMode", source)
    return True


def _conv_padding(ndim: int):
    """torch padding -> MindSpore pad_mode/padding. torch's default (0) is not
    MindSpore's default pad_mode='same'."""

    def hook(call, ctx):
        if _padding_mode(call, ctx, ndim):
            return
        if call.for_adapter:
            _windows_at_run_time(call, ndim)
        known, padding = literal_or_none(call, "padding")
        if not known and call.for_adapter:  # torch's 'same' / 'valid' arrive as strings too
            call.add_keyword("pad_mode", 'padding if isinstance(padding, str) else "pad"', before="padding")
            call.set("padding", cst.parse_expression(f"0 if isinstance(padding, str) else {code_of(_per_side_at_run_time(call.get('padding'), ndim))}"))
            return
        if not known:
            call.add_keyword("pad_mode", '"pad"', before="padding")
            call.set("padding", _per_side_at_run_time(call.get("padding"), ndim))
            ctx.warn(call.source, call.rule.torch, "padding passed through a variable: 'same'/'valid' strings need pad_mode")
            return
        if padding == "same":
            # both put the odd extra padding at the end (measured equal with even kernels, 1.8e-7)
            call.remove("padding")
            call.add_keyword("pad_mode", '"same"', before="padding")
            return
        if padding == "valid" or padding == 0 or padding == (0,) * ndim:
            call.remove("padding")
            call.add_keyword("pad_mode", '"valid"', before="padding")
            return
        call.add_keyword("pad_mode", '"pad"', before="padding")
        if isinstance(padding, (tuple, list)):
            call.set("padding", repr(_per_side(tuple(padding), ndim)))

    return hook


def _conv(torch_name: str, target: str, ndim: int, examples=()) -> ApiRule:
    return ApiRule(
        torch_name,
        target,
        signature="in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True, "
        "padding_mode='zeros', device=None, dtype=None",
        args={
            "groups": "group",
            "bias": Arg(to="has_bias", explicit=True),
            "device": DEVICE,
            "dtype": DTYPE,
        },
        positional=4,
        hook=_conv_padding(ndim),
        weights=_CONV1D_WEIGHT if ndim == 1 else {},
        attributes=_conv_attributes(ndim),
        reset_parameters=KAIMING_RESET,
        notes="pad_mode and has_bias are always written: MindSpore defaults to pad_mode='same' and has_bias=False."
        + (" The weight is stored 4-D (out, in, 1, k)." if ndim == 1 else ""),
        examples=examples,
    )


_FOLD_OUTPUT_PADDING = '''
def {name}(padding, output_padding):
    """torch.nn.ConvTranspose2d's padding and output_padding as MindSpore's padding (written by ms-migrate)."""
    # one padding less at the end adds torch's output_padding rows (MindSpore's own output_padding differs)
    pads = tuple(padding) if isinstance(padding, (tuple, list)) else (padding, padding)
    extra = tuple(output_padding) if isinstance(output_padding, (tuple, list)) else (output_padding, output_padding)
    if any(o > p for p, o in zip(pads, extra)):
        raise ValueError(f"output_padding {{output_padding}} larger than padding {{padding}}: cannot be folded into MindSpore's padding")
    return tuple(v for p, o in zip(pads, extra) for v in (p, p - o))
'''


def _fold_at_run_time(call, ctx) -> None:
    """ConvTranspose2d with a padding or output_padding known only at run time (monai's
    ``output_padding=stride - 1`` in a variable): folded when the layer is built."""
    fold = code_of(define(ctx, "transpose_padding", _FOLD_OUTPUT_PADDING))
    padding, output_padding = (code_of(call.get(name)) if call.has(name) else "0" for name in ("padding", "output_padding"))
    call.remove("output_padding")
    call.add_keyword("pad_mode", '"pad"', before="padding")
    call.set("padding", f"{fold}({padding}, {output_padding})")


def _transpose_padding(ndim: int):
    def hook(call, ctx):
        known_p, padding = literal_or_none(call, "padding")
        known_o, output_padding = literal_or_none(call, "output_padding")
        if ndim == 2 and (not known_o or (not known_p and any(_as_tuple(output_padding, ndim)))):
            _fold_at_run_time(call, ctx)
            return
        if not known_o and ndim != 3:
            raise UnknownValue("output_padding through a variable: MindSpore needs it folded into the padding")
        if ndim == 3:
            known_d, dilation = literal_or_none(call, "dilation")
            if known_d and _as_tuple(dilation, 3)[0] != 1:
                raise Unconvertible("MindSpore's Conv3dTranspose supports only dilation 1 in depth")
        extra = _as_tuple(output_padding, ndim) if known_o else (0,)
        if not known_p:
            if ndim != 3 and any(extra):
                raise Unconvertible("padding through a variable with output_padding: cannot fold them")
            if ndim != 3:
                call.remove("output_padding")
            call.add_keyword("pad_mode", '"pad"', before="padding")
            call.set("padding", _per_side_at_run_time(call.get("padding"), ndim))
            return
        pads = _as_tuple(padding, ndim)
        if not any(extra) or ndim == 3:
            if ndim != 3:
                call.remove("output_padding")
            if not any(pads):
                call.remove("padding")
                call.add_keyword("pad_mode", '"valid"', before="padding")
            else:
                call.add_keyword("pad_mode", '"pad"', before="padding")
                call.set("padding", repr(_per_side(pads, ndim)))
            return
        if ndim == 1:
            raise Unconvertible("MindSpore's Conv1dTranspose has no output_padding")
        # MindSpore 2.10 zero-fills the output_padding strip; cropping one
        # padding less at the end computes it (measured equal to torch).
        if any(o > p for o, p in zip(extra, pads)):
            raise Unconvertible("output_padding larger than padding cannot be folded into MindSpore's padding")
        call.remove("output_padding")
        call.add_keyword("pad_mode", '"pad"', before="padding")
        call.set("padding", repr(tuple(v for p, o in zip(pads, extra) for v in (p, p - o))))

    return hook


# MindSpore's Conv1d/2dTranspose read their own self.output_padding (0: torch's is folded into the
# padding); an adapter keeping torch's value there would add MindSpore's output padding on top
_OUTPUT_PADDING = AttributeRead(reason="MindSpore folds torch's output_padding into the padding per side; "
                                       "read the value the layer was built with")


def _conv_transpose(ndim: int, examples=()) -> ApiRule:
    return ApiRule(
        f"torch.nn.ConvTranspose{ndim}d",
        f"mindspore.nn.Conv{ndim}dTranspose",
        signature="in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, "
        "bias=True, dilation=1, padding_mode='zeros', device=None, dtype=None",
        args={
            "groups": "group",
            "bias": Arg(to="has_bias", explicit=True),
            "padding_mode": Unsupported("transposed convolutions support only zero padding"),
            "device": DEVICE,
            "dtype": DTYPE,
        },
        positional=4,
        hook=_transpose_padding(ndim),
        weights=_CONV1D_WEIGHT if ndim == 1 else {},
        attributes={**_conv_attributes(ndim), **({} if ndim == 3 else {"output_padding": _OUTPUT_PADDING})},
        reset_parameters=KAIMING_RESET,
        notes="pad_mode and has_bias are always written; output_padding is folded into asymmetric padding (2d)."
        + (" The weight is stored 4-D (in, out, 1, k)." if ndim == 1 else ""),
        examples=examples,
    )


def _conv_cases(ndim: int, x: str):
    name = f"Conv{ndim}d"
    k = "3" if ndim != 2 else "(3, 2)"
    pad = "1" if ndim != 2 else "(1, 2)"
    return (
        reset_example(name, f"4, 6, {k}, groups=2", x),
        *layer_cases(name, [P("in_channels", "4"), P("out_channels", "6"), P("kernel_size", k),
                            P("stride", "2", default=True), P("padding", pad, default=True),
                            P("dilation", "1", default=True), P("groups", "2", default=True),
                            P("bias", "False", default=True)], {"x": x}),
        *layer_cases(name, [P("in_channels", "4"), P("out_channels", "6"), P("kernel_size", "3"),
                            P("padding", "'same'"), P("dilation", "2")], {"x": x}, shapes=("keywords",)),
        *layer_cases(name, [P("in_channels", "4"), P("out_channels", "6"), P("kernel_size", "4"),
                            P("padding", "'same'")], {"x": x}, shapes=("keywords",), notes="even kernel"),
        *layer_cases(name, [P("in_channels", "4"), P("out_channels", "6"), P("kernel_size", "3"),
                            P("padding", "'valid'")], {"x": x}, shapes=("keywords",)),
    )


def _transpose_cases(ndim: int, x: str):
    name = f"ConvTranspose{ndim}d"
    out_pad = "1" if ndim != 2 else "(1, 0)"
    pad = "1" if ndim != 2 else "(1, 2)"
    with_out_pad = () if ndim == 1 else layer_cases(
        name, [P("in_channels", "4"), P("out_channels", "6"), P("kernel_size", "3"), P("stride", "2"),
               P("padding", pad), P("output_padding", out_pad)], {"x": x},
        shapes=("positional", "keywords", "reordered") + (("variables",) if ndim == 2 else ()))
    return (
        reset_example(name, "4, 6, 3, stride=2, groups=2", x),
        *layer_cases(name, [P("in_channels", "4"), P("out_channels", "6"), P("kernel_size", "3"),
                            P("stride", "2", default=True), P("padding", pad, default=True),
                            P("output_padding", "0", default=True), P("groups", "2", default=True),
                            P("bias", "False", default=True)], {"x": x}, shapes=SHAPES[:4]),
        *layer_cases(name, [P("in_channels", "4"), P("out_channels", "6"), P("kernel_size", "3"),
                            P("stride", "2"), P("padding", pad)], {"x": x}, shapes=("variables",)),
        *with_out_pad,
    )


_GOLDEN_CONV2D = (
    Example("layer = nn.Conv2d(3, 16, 3)", "layer = nn.Conv2d(3, 16, 3, pad_mode=\"valid\", has_bias=True)"),
    Example(
        "layer = nn.Conv2d(3, 16, kernel_size=3, padding=1, bias=False)",
        'layer = nn.Conv2d(3, 16, kernel_size=3, pad_mode="pad", padding=1, has_bias=False)',
    ),
    Example(
        "layer = nn.Conv2d(3, 16, 3, padding=(1, 2))",
        'layer = nn.Conv2d(3, 16, 3, pad_mode="pad", padding=(1, 1, 2, 2), has_bias=True)',
    ),
    Example("layer = nn.Conv2d(3, 16, 4, padding='same')", 'layer = nn.Conv2d(3, 16, 4, pad_mode="same", has_bias=True)'),
)

def _padding_mode_cases(ndim: int, x: str):
    """padding_mode through the Conv class written above the code (Time-Series-Library's circular
    token embedding, a reflect-padded Conv2d)."""
    name = f"Conv{ndim}d"
    pad = "1" if ndim != 2 else "(1, 2)"
    return (
        *(case for mode in ("circular", "reflect", "replicate")
          for case in layer_cases(name, [P("in_channels", "4"), P("out_channels", "6"), P("kernel_size", "3"),
                                         P("padding", pad), P("padding_mode", f"'{mode}'")], {"x": x},
                                  shapes=("keywords",), notes=mode, atol=1e-5)),
        *layer_cases(name, [P("in_channels", "4"), P("out_channels", "6"), P("kernel_size", "4"),
                            P("stride", "1" if ndim != 2 else "2"), P("padding", "'same'" if ndim != 2 else "2"),
                            P("dilation", "2" if ndim != 2 else "1"), P("padding_mode", "'replicate'", kind="keyword")],
                     {"x": x}, shapes=("variables",), atol=1e-5),
    )


_TSLIB_EMBEDDING = Example(
    "padding = 1\nconv = nn.Conv1d(in_channels=4, out_channels=8, kernel_size=3, padding=padding, "
    "padding_mode='circular', bias=False)\nresult = conv(x.permute(0, 2, 1)).transpose(1, 2)",
    inputs={"x": "randn(2, 9, 4)"}, atol=1e-5, notes="Time-Series-Library's TokenEmbedding")

RULES = [
    _conv("torch.nn.Conv1d", "mindspore.nn.Conv1d", 1,
          _conv_cases(1, "randn(2, 4, 9)") + _padding_mode_cases(1, "randn(2, 4, 9)") + (_TSLIB_EMBEDDING,)),
    _conv("torch.nn.Conv2d", "mindspore.nn.Conv2d", 2,
          _GOLDEN_CONV2D + _conv_cases(2, "randn(2, 4, 7, 8)") + _padding_mode_cases(2, "randn(2, 4, 7, 8)")),
    _conv("torch.nn.Conv3d", "mindspore.nn.Conv3d", 3, _conv_cases(3, "randn(2, 4, 5, 6, 7)")),
    _conv_transpose(1, (
        *_transpose_cases(1, "randn(2, 4, 7)"),
        Example("layer = nn.ConvTranspose1d(4, 6, 3, 2, 1, 1)", marked="no output_padding"),
    )),
    _conv_transpose(2, (
        Example(
            "t = nn.ConvTranspose2d(4, 6, 3, 2, 1, 1)",
            't = nn.Conv2dTranspose(4, 6, 3, 2, pad_mode="pad", padding=(1, 0, 1, 0), has_bias=True)',
        ),
        *_transpose_cases(2, "randn(2, 4, 5, 6)"),
    )),
    _conv_transpose(3, (
        *_transpose_cases(3, "randn(2, 4, 3, 4, 5)"),
        Example("layer = nn.ConvTranspose3d(4, 6, 3, dilation=2)", marked="dilation 1 in depth"),
    )),
]

RULES = with_module_paths(RULES)  # torch.nn.modules.X and torch.nn.modules.<submodule>.X too
