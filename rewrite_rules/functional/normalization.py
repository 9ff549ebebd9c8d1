"""torch.nn.functional normalization -> mindspore.ops.

Measured on MindSpore 2.10 CPU:
- ``ops.layer_norm`` routes to the Ascend-only LayerNormExt kernel, so
  F.layer_norm is composed with the ``ops.LayerNorm`` primitive (the kernel
  nn.LayerNorm uses; 1.2e-7 from torch). Its begin axis must be -1 or
  non-negative, hence ``x.ndim - len(shape)`` for several axes;
- ``ops.batch_norm`` matches torch (same momentum meaning, running statistics
  updated in place) but needs weight and bias tensors: None becomes ones/zeros,
  and running statistics even in training mode, where torch takes None (the
  batch's own statistics only): fresh zeros/ones of the channel count;
- instance norm has no CPU kernel: with batch statistics it equals group norm
  with one group per channel (``ops.group_norm(x, x.shape[1], ...)``, 2.4e-7);
- local_response_norm is the TF-style ``ops.LRN`` (odd sizes only);
- rms_norm is composed: ``x * rsqrt(mean(x**2) + eps) * weight``;
- eps (and batch_norm's momentum) are written as floats: MindSpore's kernels
  refuse an int ("Failed calling BatchNorm with ... epsilon=int").
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.helpers import literal_or_none
from rewrite_rules.cases import SHAPES
from rewrite_rules.nn.shared import P, fn_cases
from rewrite_rules.api import ApiRule, Arg, Example, Unconvertible, UnknownValue, code_of
from rewrite_rules.nn.float_args import as_float


def _is_none(expr) -> bool:
    return expr is None or (isinstance(expr, cst.Name) and expr.value == "None")


def _simple(expr) -> bool:
    """An expression that can be evaluated twice without cost or side effects."""
    return isinstance(expr, (cst.Name, cst.Attribute))


def _shape_text(call) -> tuple[str, int | None]:
    """(tuple source text, number of axes or None if unknown)."""
    known, shape = literal_or_none(call, "normalized_shape")
    if known and isinstance(shape, int):
        return f"({shape},)", 1
    if known and isinstance(shape, (tuple, list)):
        return repr(tuple(shape)), len(shape)
    return code_of(call.get("normalized_shape")), None


def _layer_norm(call, ctx):
    x = call.get("input")
    shape, axes = _shape_text(call)
    if axes == 1:
        begin = "-1"
    elif _simple(x):
        begin = f"{code_of(x)}.ndim - len({shape})"
    else:
        # the last axis (a channels-first LayerNorm's self.normalized_shape), which MindSpore's kernel takes
        # as -1; over several axes it refuses a negative begin axis, loudly
        begin = f"-len({shape})"
    ops = code_of(ctx.ref("mindspore.ops"))
    weight = call.get("weight")
    bias = call.get("bias")
    weight_text = f"{ops}.ones({shape})" if _is_none(weight) else code_of(weight)
    bias_text = f"{ops}.zeros({shape})" if _is_none(bias) else code_of(bias)
    eps = code_of(as_float(call.get("eps", "1e-05")))
    call.result = cst.parse_expression(
        f"{ops}.LayerNorm({begin}, {begin}, {eps})({code_of(x)}, {weight_text}, {bias_text})[0]"
    )


def _batch_norm(call, ctx):
    """In training mode torch needs no running statistics (None: the batch's
    own only); MindSpore's kernel always takes tensors to update, so fresh
    zeros/ones of the channel count stand in for them."""
    ops = code_of(ctx.ref("mindspore.ops"))
    channels = f"{code_of(call.get('input'))}.shape[1]"
    if call.for_adapter:  # every argument arrives at run time, None included
        fills = {"running_mean": ("zeros", " and training"), "running_var": ("ones", " and training"),
                 "weight": ("ones", ""), "bias": ("zeros", "")}
        for name, (fill, when) in fills.items():
            call.set(name, f"{ops}.{fill}({channels}) if {name} is None{when} else {name}")
        return
    batch_statistics = _is_none(call.get("running_mean")) or _is_none(call.get("running_var"))
    if batch_statistics:
        if call.literal("training") is not True:
            raise Unconvertible("batch_norm in evaluation mode needs running statistics (torch raises too)")
        if not _simple(call.get("input")):
            raise UnknownValue("batch statistics of a compound input: its channel count is read at run time")
        for name, fill in (("running_mean", "zeros"), ("running_var", "ones")):
            if _is_none(call.get(name)):
                call.set(name, f"{ops}.{fill}({channels})")
    mean = code_of(call.get("running_mean"))
    for name, fill in (("weight", "ones"), ("bias", "zeros")):
        if _is_none(call.get(name)):
            call.set(name, f"{ops}.{fill}({channels})" if batch_statistics else f"{ops}.{fill}_like({mean})")


def _instance_norm(call, ctx):
    if not _is_none(call.get("running_mean")) or not _is_none(call.get("running_var")):
        raise Unconvertible("instance_norm with running statistics has no MindSpore CPU kernel")
    known, use_input_stats = literal_or_none(call, "use_input_stats")
    if not known or not use_input_stats:
        raise Unconvertible("use_input_stats=False needs running statistics (no MindSpore CPU kernel)")
    x = call.get("input")
    if not _simple(x):
        raise Unconvertible("instance_norm of a compound expression: assign it to a variable first")
    args = [cst.Arg(x), cst.Arg(cst.parse_expression(f"{code_of(x)}.shape[1]"))]
    for name in ("weight", "bias"):
        if not _is_none(call.get(name)):
            args.append(cst.Arg(call.get(name), keyword=cst.Name(name)))
    args.append(cst.Arg(as_float(call.get("eps", "1e-05")), keyword=cst.Name("eps")))
    call.result = cst.Call(ctx.ref("mindspore.ops.group_norm"), args)


def _local_response_norm(call, ctx):
    known, size = literal_or_none(call, "size")
    if not known or not isinstance(size, int) or size % 2 == 0:
        raise Unconvertible("only an odd literal size maps onto MindSpore's symmetric LRN window")
    alpha = code_of(call.get("alpha", "0.0001"))
    beta = code_of(call.get("beta", "0.75"))
    k = code_of(call.get("k", "1.0"))
    lrn = code_of(ctx.ref("mindspore.ops.LRN"))
    call.result = cst.parse_expression(
        f"{lrn}(depth_radius={(size - 1) // 2}, bias={k}, alpha={alpha} / {size}, beta={beta})({code_of(call.get('input'))})"
    )


def _rms_norm(call, ctx):
    x = call.get("input")
    if not _simple(x):
        raise Unconvertible("rms_norm of a compound expression: assign it to a variable first")
    xs = code_of(x)
    shape, axes = _shape_text(call)
    dims = f"tuple(range(-{axes}, 0))" if axes is not None else f"tuple(range(-len({shape}), 0))"
    eps = call.get("eps")
    if _is_none(eps):  # torch: the machine epsilon of the input dtype
        np_ = code_of(ctx.ref("numpy"))
        # NumPy's finfo by the dtype's name (str(mindspore.float16) is "Float16"): mindspore.dtype_to_nptype
        # is deprecated since MindSpore 2.7
        eps_text = f"float({np_}.finfo(str({xs}.dtype).lower()).eps)"
    else:
        eps_text = code_of(eps)
    ops = code_of(ctx.ref("mindspore.ops"))
    text = f"{xs} * {ops}.rsqrt({xs}.pow(2).mean({dims}, keep_dims=True) + {eps_text})"
    if not _is_none(call.get("weight")):
        text += f" * {code_of(call.get('weight'))}"
    call.result = cst.parse_expression(text)


def _composed(name, signature, hook, notes, params, inputs, extra=(), **kw):
    return ApiRule(
        f"torch.nn.functional.{name}",
        None,
        signature=signature,
        hook=hook,
        notes=notes,
        examples=(*extra, *fn_cases(name, params, inputs, **kw)),
    )


_X = {"x": "randn(2, 3, 5)", "w": "rand(5)", "b": "randn(5)", "w2": "rand(3, 5)"}
_BN = {"x": "randn(4, 3, 5)", "m": "randn(3)", "v": "rand(3)", "w": "rand(3)", "b": "randn(3)"}

RULES = [
    _composed(
        "layer_norm",
        "input, normalized_shape, weight=None, bias=None, eps=1e-05",
        _layer_norm,
        "composed with the ops.LayerNorm primitive: ops.layer_norm has no CPU kernel",
        [P("input", "x"), P("normalized_shape", "(5,)"), P("weight", "w", default=True), P("bias", "b", default=True),
         P("eps", "0.001", default=True)],
        _X,
        extra=(
            *fn_cases("layer_norm", [P("input", "x"), P("normalized_shape", "(3, 5)"), P("weight", "w2")], _X,
                      shapes=("positional", "variables"), atol=1e-5),
            *fn_cases("layer_norm", [P("input", "x"), P("normalized_shape", "(5,)"), P("eps", "1", kind="keyword")], _X,
                      shapes=("keywords", "variables"), atol=1e-5, notes="int_eps"),
            Example("shape = (5,)\nresult = F.layer_norm(x.permute(1, 0, 2), shape, w, b, 1e-3)", inputs=_X, atol=1e-5,
                    notes="a compound input, the shape through a variable"),
        ),
        atol=1e-5,
    ),
    ApiRule(
        "torch.nn.functional.batch_norm",
        "mindspore.ops.batch_norm",
        signature="input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-05",
        args={"input": "input_x", "momentum": Arg(value=as_float), "eps": Arg(value=as_float)},
        positional=8,
        hook=_batch_norm,
        notes="weight/bias None become ones/zeros (MindSpore requires them).",
        examples=(
            *fn_cases("batch_norm", [P("input", "x"), P("running_mean", "m"), P("running_var", "v"),
                                     P("weight", "w", default=True), P("bias", "b", default=True),
                                     P("training", "False", default=True), P("momentum", "0.1", default=True),
                                     P("eps", "0.001", default=True)], _BN, atol=1e-5),
            # training: the output uses batch statistics and the running ones are updated in place
            *fn_cases("batch_norm", [P("input", "x"), P("running_mean", "m"), P("running_var", "v"),
                                     P("training", "True"), P("momentum", "0.3")], _BN,
                      shapes=("keywords",), results=("result", "m", "v"), atol=1e-5),
            # training without running statistics: batch statistics only (weight standardisation, timm's StdConv)
            # (not through variables: a None there is known only at run time)
            *fn_cases("batch_norm", [P("input", "x"), P("running_mean", "None"), P("running_var", "None"),
                                     P("weight", "w"), P("bias", "b"), P("training", "True"),
                                     P("momentum", "0.0", default=True), P("eps", "0.001", default=True)],
                      _BN, atol=1e-5, shapes=SHAPES[:4], notes="batch statistics"),
            *fn_cases("batch_norm", [P("input", "x"), P("running_mean", "None"), P("running_var", "None"),
                                     P("training", "True")], _BN, atol=1e-5, shapes=("keywords",),
                      notes="batch statistics, no weight or bias"),
            Example("result = F.batch_norm(x.reshape(1, 3, -1), None, None, weight=w, training=True, momentum=0.0)",
                    inputs=_BN, atol=1e-5, notes="batch statistics of a compound input: through the adapter"),
            Example("y = F.batch_norm(x, None, None, training=True)",
                    "y = ops.batch_norm(\n    x,\n    ops.zeros(x.shape[1]),\n    ops.ones(x.shape[1]),\n"
                    "    weight=ops.ones(x.shape[1]),\n    bias=ops.zeros(x.shape[1]),\n    training=True,\n)"),
            Example("y = F.batch_norm(x, None, None)", marked="needs running statistics"),
            *fn_cases("batch_norm", [P("input", "x"), P("running_mean", "m"), P("running_var", "v"),
                                     P("training", "True", kind="keyword"), P("momentum", "0", kind="keyword"),
                                     P("eps", "1", kind="keyword")], _BN,
                      shapes=("keywords", "variables"), results=("result", "m", "v"), atol=1e-5, notes="int_eps"),
        ),
    ),
    ApiRule(
        "torch.nn.functional.group_norm",
        "mindspore.ops.group_norm",
        signature="input, num_groups, weight=None, bias=None, eps=1e-05",
        args={"eps": Arg(value=as_float)},
        examples=(*fn_cases("group_norm", [P("input", "x"), P("num_groups", "2"), P("weight", "w", default=True),
                                           P("bias", "b", default=True), P("eps", "0.001", default=True)],
                            {"x": "randn(2, 4, 3)", "w": "rand(4)", "b": "randn(4)"}, atol=1e-5),
                  *fn_cases("group_norm", [P("input", "x"), P("num_groups", "2"), P("eps", "1", kind="keyword")],
                            {"x": "randn(2, 4, 3)"}, atol=1e-5, shapes=("keywords", "variables"), notes="int_eps")),
    ),
    _composed(
        "instance_norm",
        "input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True, momentum=0.1, "
        "eps=1e-05",
        _instance_norm,
        "composed as ops.group_norm with one group per channel (instance norm has no CPU kernel)",
        [P("input", "x"), P("weight", "w", default=True), P("bias", "b", default=True), P("eps", "0.001", default=True)],
        {"x": "randn(2, 3, 5)", "w": "rand(3)", "b": "randn(3)"},
        shapes=("keywords", "reordered", "defaults"),
        extra=(
            Example("y = F.instance_norm(x, rm, rv)", marked="running statistics"),
            Example("result = F.instance_norm(x, eps=1)", inputs={"x": "randn(2, 3, 5)"}, atol=1e-5, notes="int_eps"),
            Example("v_w = w\nv_eps = 0.001\nresult = F.instance_norm(x, None, None, v_w, None, True, 0.1, v_eps)",
                    inputs={"x": "randn(2, 3, 5)", "w": "rand(3)"}, atol=1e-5, notes="variables"),
        ),
        atol=1e-5,
    ),
    _composed(
        "local_response_norm",
        "input, size, alpha=0.0001, beta=0.75, k=1.0",
        _local_response_norm,
        "composed with the TF-style ops.LRN: depth_radius=(size-1)/2, alpha/size; odd sizes only",
        [P("input", "x"), P("size", "3"), P("alpha", "0.01", default=True), P("beta", "0.5", default=True),
         P("k", "2.0", default=True)],
        {"x": "randn(2, 6, 4, 4)"},
        shapes=("positional", "keywords", "reordered", "defaults"),
        extra=(Example("y = F.local_response_norm(x, 4)", marked="odd literal size"),),
    ),
    _composed(
        "rms_norm",
        "input, normalized_shape, weight=None, eps=None",
        _rms_norm,
        "composed: x * rsqrt(mean(x**2 over the normalised axes) + eps) * weight; eps=None is the dtype's epsilon",
        [P("input", "x"), P("normalized_shape", "(5,)"), P("weight", "w", default=True), P("eps", "1e-05", default=True)],
        _X,
        atol=1e-5,
        extra=(Example("result = F.rms_norm(x, (5,))",
                       "result = x * ops.rsqrt(\n    x.pow(2).mean(tuple(range(-1, 0)), keep_dims=True)\n"
                       "    + float(np.finfo(str(x.dtype).lower()).eps)\n)",
                       inputs={"x": "randn(2, 5)"}),
               Example("result = F.rms_norm(x, (5,))", inputs={"x": "randn(2, 5, dtype='float16')"}, rtol=1e-3, atol=1e-3),
               Example("result = F.rms_norm(x, (5,))", inputs={"x": "randn(2, 5, dtype='float64')"}, rtol=1e-6, atol=1e-6)),
    ),
]
