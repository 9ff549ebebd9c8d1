"""torch.nn normalization layers -> mindspore.nn Cells.

Differences carried (measured against torch with copied weights):
- BatchNorm momentum is ``1 - m`` in MindSpore (it weights the running
  statistic); torch ``momentum=None`` (cumulative average) has no equivalent;
  ``track_running_stats=False`` is ``use_batch_statistics=True``;
- BatchNorm3d keeps its parameters in an inner ``bn2d`` Cell;
- a torch Module starts in training mode, a MindSpore Cell in eval mode: a
  new BatchNorm gets ``.set_train()`` (which returns it), so one used right
  after construction normalises with batch statistics, as in torch;
- LayerNorm's epsilon default differs (1e-7): always written; the normalised
  axes are ``-len(normalized_shape)``;
- MindSpore's InstanceNorm has no CPU kernel ("Unsupported op [InstanceNorm]
  on CPU"); instance norm is group norm with one group per channel, so
  InstanceNormNd(C) becomes GroupNorm(C, C) (equal to 2.4e-7), valid while
  running statistics are not tracked;
- LocalResponseNorm is MindSpore's (TF-style) LRN with depth_radius =
  (size - 1) / 2 and alpha / size; equal for odd sizes only;
- every eps is written as a float: MindSpore refuses an int (``eps=1``,
  ``eps=0``: "Failed calling BatchNorm with ... epsilon=int").
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.helpers import DEVICE, as_tuple, literal_or_none, one_minus
from rewrite_rules.cases import SHAPES
from rewrite_rules.nn.float_args import as_float
from rewrite_rules.nn.shared import DTYPE, P, layer_cases, norm_reset, reset_example
from rewrite_rules.api import ApiRule, Arg, AttributeRead, Example, Unconvertible, UnknownValue, Unsupported, \
    WeightMove, code_of, define, explain
from rewrite_rules.torch_functions.builders import wrapped
from rewrite_rules.nn.module_paths import with_module_paths

_NO_BIAS = Unsupported("bias=False (affine weight without bias) has no MindSpore equivalent")
_EPS = Arg(value=as_float)  # MindSpore refuses an int eps


def _track_running_stats(expr, ctx):
    if isinstance(expr, cst.Name) and expr.value == "True":
        return cst.Name("None")  # follow set_train(), like torch
    if isinstance(expr, cst.Name) and expr.value == "False":
        return cst.Name("True")  # always batch statistics
    # through a variable: decided at run time
    return cst.parse_expression(f"None if {code_of(expr)} else True")


_TRAINING_MODE = ".set_train(): torch builds a layer in training mode, MindSpore a Cell in inference mode"


def _in_training_mode(expr: cst.BaseExpression, ctx) -> cst.BaseExpression:
    return explain(ctx, cst.Call(cst.Attribute(expr, cst.Name("set_train")), []), _TRAINING_MODE)


def _bn_weights(prefix: str = "") -> dict:
    return {
        "weight": f"{prefix}gamma",
        "bias": f"{prefix}beta",
        "running_mean": f"{prefix}moving_mean",
        "running_var": f"{prefix}moving_variance",
        "num_batches_tracked": WeightMove(None, why="MindSpore BatchNorm does not count batches"),
    }


# torch's BatchNorm forward, copied into a subclass (timm's BatchNormAct2d), counts batches
# only where num_batches_tracked is not None, and reads the count only for momentum=None,
# which the rule refuses; None is what torch's forward has with track_running_stats=False.
# A read anywhere else is marked.
_NO_BATCH_COUNT = AttributeRead(template="None", reason="MindSpore's BatchNorm keeps no batch count")


_CHANGE_AFFINE = "nn.init.constant_(layer.weight, 2.0)\nnn.init.constant_(layer.bias, 0.5)\n"
_BN_X = {1: "randn(6, 4, 5)", 2: "randn(6, 4, 3, 5)", 3: "randn(4, 4, 2, 3, 3)"}
# train one step (updates the running statistics through momentum), then
# compare the eval-mode output, which reads them.
_TRAIN_THEN_EVAL = "layer.train()\ntrained = layer(x)\nlayer.eval()\n"


def _batch_norm(ndim: int, examples=()) -> ApiRule:
    name = f"BatchNorm{ndim}d"
    x = {"x": _BN_X[ndim]}
    params = [P("num_features", "4"), P("eps", "0.001", default=True), P("momentum", "0.3", default=True),
              P("affine", "True", default=True), P("track_running_stats", "True", default=True)]
    return ApiRule(
        f"torch.nn.{name}",
        f"mindspore.nn.{name}",
        signature="num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, device=None, "
        "dtype=None, *, bias=True",
        args={
            "eps": _EPS,
            "momentum": Arg(explicit=True, value=one_minus),
            "track_running_stats": Arg(to="use_batch_statistics", value=_track_running_stats),
            "device": DEVICE,
            "dtype": DTYPE,
            "bias": _NO_BIAS,
        },
        positional=2,
        hook=wrapped(_in_training_mode),
        weights=_bn_weights("bn2d." if ndim == 3 else ""),
        attributes={"num_batches_tracked": _NO_BATCH_COUNT},
        reset_parameters=norm_reset("bn2d." if ndim == 3 else "", running_statistics=True),
        notes="momentum becomes 1 - momentum (MindSpore weights the running statistic); created in training mode "
        "(.set_train()) like a torch Module."
        + (" The parameters live in the inner bn2d Cell." if ndim == 3 else ""),
        examples=(
            *examples,
            *layer_cases(name, params, x, setup=_TRAIN_THEN_EVAL, results=("result", "trained"), atol=1e-5),
            *layer_cases(name, [P("num_features", "4"), P("affine", "False"), P("track_running_stats", "False")], x,
                         setup="layer.eval()\n", shapes=("keywords",), atol=1e-5),
            # trained running statistics and changed affine parameters, restored by the reset
            reset_example(name, "4", _BN_X[ndim], before="trained = layer(x)\n" + _CHANGE_AFFINE,
                          after="layer.eval()\n"),
            Example(f"layer = nn.{name}(4, momentum=None)", marked="cumulative moving average"),
            *layer_cases(name, [P("num_features", "4")], x, atol=1e-5, shapes=("positional", "keywords"),
                         notes="used right after construction: training mode"),
            # an int eps, as research code writes it, and one held in a variable
            *layer_cases(name, [P("num_features", "4"), P("eps", "1")], x, atol=1e-5, setup="layer.eval()\n",
                         shapes=("keywords", "variables"), notes="int_eps"),
        ),
    )


def _layer_norm_hook(call, ctx):
    known, value = literal_or_none(call, "normalized_shape")
    if known and isinstance(value, (tuple, list)) and len(value) > 1:
        # measured: nn.LayerNorm(..., begin_norm_axis=-2) fails in the kernel's
        # CheckAxis (it accepts -1 or a non-negative axis, which needs the input rank)
        raise Unconvertible(
            "normalized_shape over several axes: MindSpore's LayerNorm accepts begin_norm_axis -1 "
            "or a non-negative axis (input rank unknown here); set begin_norm_axis=x.ndim - len(shape) by hand"
        )
    flags = {name: literal_or_none(call, name) for name in ("elementwise_affine", "bias")}
    if all(value is True for _, value in flags.values()):
        for name in flags:
            call.remove(name)
        return
    if call.for_adapter:
        raise UnknownValue("elementwise_affine=False or bias=False: the layer keeps its scale or shift fixed")
    for name, (known, value) in flags.items():
        if known and value is True:
            call.remove(name)
    source = _WITHOUT_AFFINE.replace("LAYER_NORM", code_of(ctx.ref("mindspore.nn.LayerNorm")))
    call.func = define(ctx, "LayerNormWithoutAffine", source)


_WITHOUT_AFFINE = '''
class {name}(LAYER_NORM):
    """torch.nn.LayerNorm with elementwise_affine=False or bias=False (written by ms-migrate)."""

    # MindSpore's LayerNorm always has gamma and beta: torch's missing scale (ones) and shift (zeros) stay fixed
    def __init__(self, *args, elementwise_affine=True, bias=True, **kwargs):
        super().__init__(*args, **kwargs)
        self.gamma.requires_grad = bool(elementwise_affine)
        self.beta.requires_grad = bool(elementwise_affine and bias)
'''


def _instance_norm_hook(call, ctx):
    """InstanceNorm -> GroupNorm(C, C): MindSpore's InstanceNorm has no CPU kernel."""
    known, tracking = literal_or_none(call, "track_running_stats")
    if not known or tracking:
        error = Unconvertible if known else UnknownValue
        raise error("track_running_stats=True: eval mode would read running statistics GroupNorm does not keep")
    call.remove("track_running_stats")
    call.remove("momentum")  # only used for running statistics
    features = call.get("num_features")
    call.add_keyword("num_groups", features, before="num_features")
    call.renamed["num_features"] = "num_channels"
    call.set("affine", call.get("affine", "False"))


def _instance_norm(ndim: int) -> ApiRule:
    name = f"InstanceNorm{ndim}d"
    x = {"x": _BN_X[ndim]}
    return ApiRule(
        f"torch.nn.{name}",
        "mindspore.nn.GroupNorm",
        signature="num_features, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False, device=None, "
        "dtype=None, *, bias=True",
        args={"eps": _EPS, "device": DEVICE, "dtype": DTYPE, "bias": _NO_BIAS},
        positional=0,
        hook=_instance_norm_hook,
        weights={"weight": "gamma", "bias": "beta"},
        attributes={"num_features": "num_channels"},
        reset_parameters=norm_reset(),
        notes="composed as GroupNorm(C, C): MindSpore's InstanceNorm has no CPU kernel; "
        "running statistics (track_running_stats=True) are not supported.",
        examples=(
            Example(f"layer = nn.{name}(4)", f"layer = nn.GroupNorm(num_groups=4, num_channels=4, affine=False)"),
            *layer_cases(name, [P("num_features", "4"), P("eps", "0.001", default=True), P("momentum", "0.2", default=True),
                                P("affine", "True", default=True)], x, atol=1e-5),
            reset_example(name, "4, affine=True", _BN_X[ndim], before=_CHANGE_AFFINE),
            Example(f"layer = nn.{name}(4, track_running_stats=True)", marked="running statistics"),
            *layer_cases(name, [P("num_features", "4"), P("eps", "1"), P("momentum", "0")], x, atol=1e-5,
                         shapes=("keywords", "variables"), notes="int_eps_and_momentum"),
        ),
    )


def _local_response_norm(call, ctx):
    known, size = literal_or_none(call, "size")
    if not known or not isinstance(size, int) or size % 2 == 0:
        raise Unconvertible("only an odd literal size maps onto MindSpore's symmetric LRN window")
    call.remove("size")
    call.add_keyword("depth_radius", str((size - 1) // 2))
    call.renamed["k"] = "bias"
    alpha = code_of(call.get("alpha", "0.0001"))
    call.remove("alpha")
    call.add_keyword("alpha", cst.parse_expression(f"{alpha} / {size}"))
    call.set("beta", call.get("beta", "0.75"))


RULES = [
    _batch_norm(1),
    _batch_norm(2, (
        Example("bn = nn.BatchNorm2d(16)", f"# {_TRAINING_MODE}\nbn = nn.BatchNorm2d(16, momentum=0.9).set_train()"),
        Example("bn = nn.BatchNorm2d(16, momentum=0.01)",
                f"# {_TRAINING_MODE}\nbn = nn.BatchNorm2d(16, momentum=0.99).set_train()"),
    )),
    _batch_norm(3),
    ApiRule(
        "torch.nn.LayerNorm",
        "mindspore.nn.LayerNorm",
        signature="normalized_shape, eps=1e-05, elementwise_affine=True, bias=True, device=None, dtype=None",
        args={
            "normalized_shape": Arg(value=as_tuple),
            "eps": Arg(to="epsilon", explicit=True, value=as_float),
            "device": DEVICE,
            "dtype": DTYPE,
        },
        positional=1,
        hook=_layer_norm_hook,
        weights={"weight": "gamma", "bias": "beta"},
        attributes={"eps": "epsilon"},
        reset_parameters=norm_reset(),
        notes="epsilon is always written: MindSpore's default is 1e-7.",
        examples=(
            Example("ln = nn.LayerNorm(64)", "ln = nn.LayerNorm((64,), epsilon=1e-05)"),
            *layer_cases("LayerNorm", [P("normalized_shape", "5"), P("eps", "0.001", default=True),
                                       P("elementwise_affine", "True", default=True), P("bias", "True", default=True)],
                         {"x": "randn(2, 3, 5)"}, atol=1e-5, shapes=SHAPES[:4]),
            *layer_cases("LayerNorm", [P("normalized_shape", "5"), P("eps", "0.001")], {"x": "randn(2, 3, 5)"},
                         shapes=("variables",), atol=1e-5),
            Example("affine = True\nlayer = nn.LayerNorm(5, elementwise_affine=affine)\nresult = layer(x)",
                    inputs={"x": "randn(2, 3, 5)"}, atol=1e-5,
                    notes="through a variable: the torch.nn.LayerNorm adapter checks the value at run time"),
            reset_example("LayerNorm", "5", "randn(2, 3, 5)", before=_CHANGE_AFFINE),
            *layer_cases("LayerNorm", [P("normalized_shape", "5"), P("eps", "1")], {"x": "randn(2, 3, 5)"},
                         shapes=("keywords", "variables"), atol=1e-5, notes="int_eps"),
            Example("ln = nn.LayerNorm((3, 5))", marked="several axes"),
            Example("dims = [4, 5]\nlayer = nn.LayerNorm(dims[-1], eps=1e-6)\nresult = layer(x)",
                    inputs={"x": "randn(2, 3, 5)"}, atol=1e-5, notes="ConvNeXt's final norm"),
            Example("ln = nn.LayerNorm(8, elementwise_affine=False, eps=1e-6)\nresult = (ln(x), len(list(ln.parameters())))",
                    inputs={"x": "randn(2, 3, 8)"}, atol=1e-5, notes="DiT's final and block norms"),
            *layer_cases("LayerNorm", [P("normalized_shape", "5"), P("eps", "0.001"), P("elementwise_affine", "False"),
                                       P("bias", "True")], {"x": "randn(2, 3, 5)"}, atol=1e-5,
                         shapes=("positional", "keywords", "variables"), notes="without affine"),
            Example("ln = nn.LayerNorm(5, bias=False)\nresult = (ln(x), [p.shape for p in ln.parameters()])",
                    inputs={"x": "randn(2, 3, 5)"}, atol=1e-5, notes="a scale without a shift"),
        ),
    ),
    ApiRule(
        "torch.nn.GroupNorm",
        "mindspore.nn.GroupNorm",
        signature="num_groups, num_channels, eps=1e-05, affine=True, device=None, dtype=None, *, bias=True",
        args={"eps": _EPS, "device": DEVICE, "dtype": DTYPE, "bias": _NO_BIAS},
        weights={"weight": "gamma", "bias": "beta"},
        reset_parameters=norm_reset(),
        examples=(*layer_cases("GroupNorm", [P("num_groups", "2"), P("num_channels", "4"), P("eps", "0.001", default=True),
                                            P("affine", "False", default=True)], {"x": "randn(2, 4, 3, 5)"}, atol=1e-5),
                  *layer_cases("GroupNorm", [P("num_groups", "2"), P("num_channels", "4"), P("eps", "1")],
                               {"x": "randn(2, 4, 3, 5)"}, atol=1e-5, shapes=("keywords", "variables"), notes="int_eps"),
                  reset_example("GroupNorm", "2, 4", "randn(2, 4, 3, 5)", before=_CHANGE_AFFINE)),
    ),
    _instance_norm(1),
    _instance_norm(2),
    _instance_norm(3),
    ApiRule(
        "torch.nn.LocalResponseNorm",
        "mindspore.nn.LRN",
        signature="size, alpha=0.0001, beta=0.75, k=1.0",
        positional=0,
        hook=_local_response_norm,
        notes="MindSpore's LRN is TensorFlow-style: depth_radius=(size-1)/2, alpha divided by size; odd sizes only.",
        examples=(
            *layer_cases("LocalResponseNorm", [P("size", "3"), P("alpha", "0.01", default=True),
                                               P("beta", "0.5", default=True), P("k", "2.0", default=True)],
                         {"x": "randn(2, 6, 4, 4)"}, shapes=("positional", "keywords", "reordered", "defaults")),
            Example("layer = nn.LocalResponseNorm(4)", marked="odd literal size"),
        ),
    ),
    ApiRule(
        "torch.nn.SyncBatchNorm",
        "mindspore.nn.SyncBatchNorm",
        signature="num_features, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True, process_group=None, "
        "device=None, dtype=None, *, bias=True",
        args={
            "eps": _EPS,
            "momentum": Arg(explicit=True, value=one_minus),
            "track_running_stats": Arg(to="use_batch_statistics", value=_track_running_stats),
            "process_group": Unsupported("torch process groups have no MindSpore counterpart; "
                                         "pass process_groups (lists of ranks) to mindspore.nn.SyncBatchNorm"),
            "device": DEVICE,
            "dtype": DTYPE,
            "bias": _NO_BIAS,
        },
        positional=2,
        hook=wrapped(_in_training_mode),
        weights=_bn_weights(),
        reset_parameters=norm_reset(running_statistics=True),
        notes="momentum becomes 1 - momentum; created in training mode (.set_train()) like a torch Module. "
        "Synchronises over all devices when MindSpore's communication is initialised; on one process it is "
        "BatchNorm, as torch's is outside a process group (2-d and 4-d inputs only: MindSpore refuses others).",
        examples=(
            Example("layer = nn.SyncBatchNorm(4, eps=0.001, momentum=0.3)\nlayer.eval()\nresult = layer(x)",
                    f"# {_TRAINING_MODE}\nlayer = nn.SyncBatchNorm(4, eps=0.001, momentum=0.7).set_train()\n"
                    "layer.set_train(False)\n"
                    "result = layer(x)",
                    inputs={"x": "randn(6, 4, 3, 5)"}, atol=1e-5),
            # a new layer trains (batch statistics, running statistics updated), as torch's does on one process
            *layer_cases("SyncBatchNorm", [P("num_features", "4"), P("eps", "0.001", default=True),
                                           P("momentum", "0.3", default=True)], {"x": "randn(6, 4, 3, 5)"},
                         setup=_TRAIN_THEN_EVAL, results=("result", "trained"), atol=1e-5),
            Example("layer = nn.SyncBatchNorm(4)\nresult = (layer(x), layer.running_mean, layer.running_var)",
                    inputs={"x": "randn(8, 4)"}, atol=1e-5),
            Example("layer = nn.SyncBatchNorm(8, process_group=group)", marked="process groups"),
            Example("layer = nn.SyncBatchNorm(8, bias=False)", marked="bias=False"),
        ),
    ),
    ApiRule(
        "torch.nn.RMSNorm",
        None,
        signature="normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None",
        notes="mindspore.nn has no RMSNorm Cell in 2.10 (mint.nn.RMSNorm is Ascend-only)",
        examples=(Example("layer = nn.RMSNorm(8)", marked="no RMSNorm Cell"),),
    ),
]

RULES = with_module_paths(RULES)  # torch.nn.modules.X and torch.nn.modules.<submodule>.X too
