"""torch.nn layers -> mindspore.nn Cells, with every differing default written out."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.helpers import DEVICE, INPLACE, as_tuple, literal_or_none, one_minus
from rewrite_rules.spec import (
    ApiRule,
    Arg,
    AttributeRule,
    Drop,
    Example,
    Unconvertible,
    Unsupported,
    WeightMove,
)

_PADDING_MODE = Unsupported("only zero padding is supported by MindSpore convolutions; pad explicitly with ops.pad")


def _conv_padding(ndim: int):
    """torch padding -> MindSpore pad_mode/padding. torch's default (0) is not
    MindSpore's default pad_mode='same'."""

    def hook(call, ctx):
        known, padding = literal_or_none(call, "padding")
        if not known:
            call.add_keyword("pad_mode", '"pad"', before="padding")
            ctx.warn(
                call.source,
                call.rule.torch,
                "padding passed through a variable: an int works; a tuple must have 2*ndim entries in MindSpore",
            )
            return
        if padding == "same":
            known_k, kernel = literal_or_none(call, "kernel_size")
            kernels = kernel if isinstance(kernel, (tuple, list)) else (kernel,)
            if not known_k or any(k % 2 == 0 for k in kernels):
                raise Unconvertible("padding='same' with an even or unknown kernel size pads differently in MindSpore")
            call.remove("padding")
            call.add_keyword("pad_mode", '"same"', before="padding")
            return
        if padding == "valid" or padding == 0 or padding == (0,) * ndim:
            call.remove("padding")
            call.add_keyword("pad_mode", '"valid"', before="padding")
            return
        call.add_keyword("pad_mode", '"pad"', before="padding")
        if isinstance(padding, (tuple, list)):
            if ndim == 1:
                call.set("padding", repr(padding[0]))
            elif len(set(padding)) == 1:
                call.set("padding", repr(padding[0]))
            else:
                call.set("padding", repr(tuple(p for p in padding for _ in range(2))))

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
            "padding_mode": _PADDING_MODE,
            "device": DEVICE,
        },
        positional=4,
        hook=_conv_padding(ndim),
        weights={"weight": WeightMove("weight", insert_axis=2)} if ndim == 1 else {},
        notes="pad_mode and has_bias are always written: MindSpore defaults to pad_mode='same' and has_bias=False."
        + (" The weight is stored 4-D (out, in, 1, k)." if ndim == 1 else ""),
        examples=examples,
    )


def _batch_norm(torch_name: str, target: str, examples=()) -> ApiRule:
    return ApiRule(
        torch_name,
        target,
        signature="num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None",
        args={
            "momentum": Arg(explicit=True, value=one_minus),
            "track_running_stats": Arg(to="use_batch_statistics", value=_track_running_stats),
            "device": DEVICE,
        },
        positional=2,
        weights={
            "weight": "gamma",
            "bias": "beta",
            "running_mean": "moving_mean",
            "running_var": "moving_variance",
            "num_batches_tracked": WeightMove(None, why="MindSpore BatchNorm does not count batches"),
        },
        notes="momentum becomes 1 - momentum (MindSpore weights the running statistic).",
        examples=examples,
    )


def _track_running_stats(expr, ctx):
    if isinstance(expr, cst.Name) and expr.value == "True":
        return cst.Name("None")  # follow set_train(), like torch
    if isinstance(expr, cst.Name) and expr.value == "False":
        return cst.Name("True")  # always batch statistics
    raise Unconvertible("track_running_stats given through a variable")


def _layer_norm_hook(call, ctx):
    known, value = literal_or_none(call, "normalized_shape")
    if known and isinstance(value, (tuple, list)) and len(value) > 1:
        axis = str(-len(value))
        call.add_keyword("begin_norm_axis", axis)
        call.add_keyword("begin_params_axis", axis)
    known, affine = literal_or_none(call, "elementwise_affine")
    if not known or affine is not True:
        raise Unconvertible("elementwise_affine=False has no MindSpore LayerNorm equivalent")
    call.remove("elementwise_affine")
    known, bias = literal_or_none(call, "bias")
    if not known or bias is not True:
        raise Unconvertible("bias=False has no MindSpore LayerNorm equivalent")
    call.remove("bias")


def _gelu_approximate(expr, ctx):
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        if value == "none":
            return cst.Name("False")
        if value == "tanh":
            return cst.Name("True")
    return cst.parse_expression(f"{_code(expr)} == 'tanh'")


def _code(node):
    return cst.Module([]).code_for_node(node)


def _softmax_dim(call, ctx):
    if not call.has("dim"):
        raise Unconvertible("dim not given: torch picks a legacy implicit dim, MindSpore uses -1; pass dim explicitly")


def _pool_hook(call, ctx):
    if not call.has("stride") or _is_none(call.get("stride")):
        call.set("stride", call.get("kernel_size"))
    known, padding = literal_or_none(call, "padding")
    if not known or padding not in (0, (0, 0)):
        call.add_keyword("pad_mode", '"pad"', before="padding")
    else:
        call.remove("padding")


def _is_none(expr) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _embedding_hook(call, ctx):
    if call.has("_weight") and not _is_none(call.get("_weight")):
        call.renamed["_weight"] = "embedding_table"
    else:
        call.remove("_weight")
        init = cst.Call(func=ctx.ref("mindspore.common.initializer.Normal"), args=[cst.Arg(cst.Float("1.0"))])
        call.add_keyword("embedding_table", init)


_EXAMPLES_CONV = (
    Example("layer = nn.Conv2d(3, 16, 3)", "layer = nn.Conv2d(3, 16, 3, pad_mode=\"valid\", has_bias=True)"),
    Example(
        "layer = nn.Conv2d(3, 16, kernel_size=3, padding=1, bias=False)",
        'layer = nn.Conv2d(3, 16, kernel_size=3, pad_mode="pad", padding=1, has_bias=False)',
    ),
    Example(
        "layer = nn.Conv2d(3, 16, 3, padding=(1, 2))",
        'layer = nn.Conv2d(3, 16, 3, pad_mode="pad", padding=(1, 1, 2, 2), has_bias=True)',
    ),
    Example("layer = nn.Conv2d(3, 16, 3, padding_mode='reflect')", marked="padding_mode"),
)

RULES = [
    AttributeRule("torch.nn.Module", "mindspore.nn.Cell", aliases=("torch.nn.modules.module.Module",)),
    ApiRule(
        "torch.nn.Linear",
        "mindspore.nn.Dense",
        signature="in_features, out_features, bias=True, device=None, dtype=None",
        args={"in_features": "in_channels", "out_features": "out_channels", "bias": "has_bias", "device": DEVICE},
        positional=2,
        examples=(
            Example("fc = nn.Linear(4, 3)", "fc = nn.Dense(4, 3)"),
            Example("fc = nn.Linear(in_features=4, out_features=3, bias=False)",
                    "fc = nn.Dense(in_channels=4, out_channels=3, has_bias=False)"),
        ),
    ),
    _conv("torch.nn.Conv1d", "mindspore.nn.Conv1d", 1),
    _conv("torch.nn.Conv2d", "mindspore.nn.Conv2d", 2, _EXAMPLES_CONV),
    _batch_norm(
        "torch.nn.BatchNorm1d",
        "mindspore.nn.BatchNorm1d",
    ),
    _batch_norm(
        "torch.nn.BatchNorm2d",
        "mindspore.nn.BatchNorm2d",
        examples=(
            Example("bn = nn.BatchNorm2d(16)", "bn = nn.BatchNorm2d(16, momentum=0.9)"),
            Example("bn = nn.BatchNorm2d(16, momentum=0.01)", "bn = nn.BatchNorm2d(16, momentum=0.99)"),
        ),
    ),
    ApiRule(
        "torch.nn.LayerNorm",
        "mindspore.nn.LayerNorm",
        signature="normalized_shape, eps=1e-05, elementwise_affine=True, bias=True, device=None, dtype=None",
        args={
            "normalized_shape": Arg(value=as_tuple),
            "eps": Arg(to="epsilon", explicit=True),
            "device": DEVICE,
        },
        positional=1,
        hook=_layer_norm_hook,
        weights={"weight": "gamma", "bias": "beta"},
        notes="epsilon is always written: MindSpore's default is 1e-7.",
        examples=(Example("ln = nn.LayerNorm(64)", "ln = nn.LayerNorm((64,), epsilon=1e-05)"),),
    ),
    ApiRule(
        "torch.nn.Dropout",
        "mindspore.nn.Dropout",
        signature="p=0.5, inplace=False",
        args={"p": Arg(explicit=True), "inplace": INPLACE},
        positional=0,
        notes="p is passed by keyword: MindSpore's first positional parameter is keep_prob.",
        examples=(
            Example("drop = nn.Dropout(0.2)", "drop = nn.Dropout(p=0.2)"),
            Example("drop = nn.Dropout()", "drop = nn.Dropout(p=0.5)"),
        ),
    ),
    ApiRule("torch.nn.ReLU", "mindspore.nn.ReLU", signature="inplace=False", args={"inplace": INPLACE},
            examples=(Example("act = nn.ReLU(inplace=True)", "act = nn.ReLU()"),)),
    ApiRule(
        "torch.nn.GELU",
        "mindspore.nn.GELU",
        signature="approximate='none'",
        args={"approximate": Arg(explicit=True, value=_gelu_approximate)},
        positional=0,
        notes="MindSpore's default is the tanh approximation; torch's is exact.",
        examples=(Example("act = nn.GELU()", "act = nn.GELU(approximate=False)"),),
    ),
    ApiRule("torch.nn.Sigmoid", "mindspore.nn.Sigmoid", signature=""),
    ApiRule("torch.nn.Tanh", "mindspore.nn.Tanh", signature=""),
    ApiRule(
        "torch.nn.Softmax",
        "mindspore.nn.Softmax",
        signature="dim=None",
        args={"dim": "axis"},
        positional=0,
        hook=_softmax_dim,
        examples=(Example("sm = nn.Softmax(dim=1)", "sm = nn.Softmax(axis=1)"),
                  Example("sm = nn.Softmax()", marked="implicit dim")),
    ),
    ApiRule(
        "torch.nn.MaxPool2d",
        "mindspore.nn.MaxPool2d",
        signature="kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False",
        positional=2,
        hook=_pool_hook,
        notes="stride is always written: torch defaults it to kernel_size, MindSpore to 1.",
        examples=(Example("pool = nn.MaxPool2d(2)", "pool = nn.MaxPool2d(2, stride=2)"),),
    ),
    ApiRule(
        "torch.nn.AvgPool2d",
        "mindspore.nn.AvgPool2d",
        signature="kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None",
        positional=2,
        hook=_pool_hook,
        notes="stride is always written: torch defaults it to kernel_size, MindSpore to 1.",
    ),
    ApiRule("torch.nn.AdaptiveAvgPool2d", "mindspore.nn.AdaptiveAvgPool2d", signature="output_size"),
    ApiRule(
        "torch.nn.Embedding",
        "mindspore.nn.Embedding",
        signature="num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0, "
        "scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None",
        args={
            "num_embeddings": "vocab_size",
            "embedding_dim": "embedding_size",
            "max_norm": Unsupported("max_norm renormalisation is not supported by mindspore.nn.Embedding"),
            "norm_type": Drop("only used with max_norm"),
            "scale_grad_by_freq": Unsupported("scale_grad_by_freq is not supported"),
            "sparse": Drop("gradient storage format only"),
            "_freeze": Unsupported("_freeze: make the table a non-trainable Parameter by hand"),
            "device": DEVICE,
        },
        positional=2,
        hook=_embedding_hook,
        weights={"weight": "embedding_table"},
        notes="embedding_table=Normal(1.0) matches torch's N(0, 1) init (MindSpore's default is N(0, 0.01)).",
        examples=(
            Example(
                "emb = nn.Embedding(100, 16)",
                "emb = nn.Embedding(100, 16, embedding_table=mindspore.common.initializer.Normal(1.0))",
            ),
        ),
    ),
    ApiRule(
        "torch.nn.LSTM",
        "mindspore.nn.LSTM",
        signature="input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, "
        "bidirectional=False, proj_size=0, device=None, dtype=None",
        args={
            "bias": "has_bias",
            "proj_size": Unsupported("projected LSTMs (proj_size > 0) are not supported"),
            "device": DEVICE,
        },
        positional=3,
        examples=(Example("rnn = nn.LSTM(8, 16, batch_first=True)", "rnn = nn.LSTM(8, 16, batch_first=True)"),),
    ),
    ApiRule("torch.nn.Flatten", "mindspore.nn.Flatten", signature="start_dim=1, end_dim=-1"),
    ApiRule(
        "torch.nn.CrossEntropyLoss",
        "mindspore.nn.CrossEntropyLoss",
        signature="weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean', label_smoothing=0.0",
        args={
            "size_average": Unsupported("size_average is deprecated in torch; use reduction="),
            "reduce": Unsupported("reduce is deprecated in torch; use reduction="),
        },
        positional=1,
        notes="On CPU MindSpore needs int32 class-index labels.",
    ),
    ApiRule(
        "torch.nn.MSELoss",
        "mindspore.nn.MSELoss",
        signature="size_average=None, reduce=None, reduction='mean'",
        args={
            "size_average": Unsupported("size_average is deprecated in torch; use reduction="),
            "reduce": Unsupported("reduce is deprecated in torch; use reduction="),
        },
        positional=0,
    ),
]
