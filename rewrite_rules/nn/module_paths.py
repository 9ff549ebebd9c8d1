"""Where torch.nn's layer classes live: ``torch.nn.PReLU`` is also
``torch.nn.modules.PReLU`` and ``torch.nn.modules.activation.PReLU`` (monai's
layer factories and older code name them so). ``with_module_paths`` adds those
spellings to the aliases of each rule of a ``torch.nn.<Layer>``, so every
spelling converts (and its weights move) as the layer's own rule says.

The table is torch 2.13's (the conversion never imports torch);
tests/rules/test_research_gaps.py checks it against the installed torch.
(No RULES here: the registry imports this module and finds none.)
"""

from __future__ import annotations

import dataclasses

# torch.nn.modules.<submodule> -> the torch.nn classes defined there
# fmt: off
SUBMODULES: dict[str, tuple[str, ...]] = {
    "activation": ("CELU", "ELU", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh",
        "LeakyReLU", "LogSigmoid", "LogSoftmax", "Mish", "MultiheadAttention", "PReLU", "RReLU", "ReLU",
        "ReLU6", "SELU", "SiLU", "Sigmoid", "Softmax", "Softmax2d", "Softmin", "Softplus", "Softshrink",
        "Softsign", "Tanh", "Tanhshrink", "Threshold"),
    "adaptive": ("AdaptiveLogSoftmaxWithLoss",),
    "batchnorm": ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
        "LazyBatchNorm3d", "SyncBatchNorm"),
    "channelshuffle": ("ChannelShuffle",),
    "container": ("Container", "ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"),
    "conv": ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
        "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
        "LazyConvTranspose3d"),
    "distance": ("CosineSimilarity", "PairwiseDistance"),
    "dropout": ("AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout"),
    "flatten": ("Flatten", "Unflatten"),
    "fold": ("Fold", "Unfold"),
    "instancenorm": ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
        "LazyInstanceNorm2d", "LazyInstanceNorm3d"),
    "linear": ("Bilinear", "Identity", "LazyLinear", "Linear"),
    "loss": ("BCELoss", "BCEWithLogitsLoss", "CTCLoss", "CosineEmbeddingLoss", "CrossEntropyLoss",
        "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss", "LinearCrossEntropyLoss",
        "MSELoss", "MarginRankingLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
        "NLLLoss", "NLLLoss2d", "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss",
        "TripletMarginWithDistanceLoss"),
    "module": ("Module",),
    "normalization": ("CrossMapLRN2d", "GroupNorm", "LayerNorm", "LocalResponseNorm", "RMSNorm"),
    "padding": ("CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
        "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
        "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"),
    "pixelshuffle": ("PixelShuffle", "PixelUnshuffle"),
    "pooling": ("AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
        "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d", "FractionalMaxPool2d",
        "FractionalMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "MaxPool1d", "MaxPool2d", "MaxPool3d",
        "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"),
    "rnn": ("GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"),
    "sparse": ("Embedding", "EmbeddingBag"),
    "transformer": ("Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
        "TransformerEncoderLayer"),
    "upsampling": ("Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d"),
}
# fmt: on

_WHERE = {name: submodule for submodule, names in SUBMODULES.items() for name in names}


def module_paths(qualified: str) -> tuple[str, ...]:
    """The other spellings of ``torch.nn.<Layer>`` (none for other names)."""
    prefix, _, name = qualified.rpartition(".")
    if prefix != "torch.nn" or name not in _WHERE:
        return ()
    return f"torch.nn.modules.{name}", f"torch.nn.modules.{_WHERE[name]}.{name}"


def with_module_paths(rules: list) -> list:
    """``rules`` with each torch.nn layer rule also answering to its module paths."""
    result = []
    for rule in rules:
        names = getattr(rule, "aliases", None)
        if names is not None and hasattr(rule, "torch"):
            extra = tuple(p for p in module_paths(rule.torch) if p not in names)
            if extra:
                rule = dataclasses.replace(rule, aliases=(*names, *extra))
        result.append(rule)
    return result
