"""torch.nn losses -> mindspore.nn loss Cells.

Differences carried (measured against torch on the same inputs):
- ``size_average`` / ``reduce`` (deprecated in torch) become the ``reduction=``
  torch reads them as (marked when not literals);
- SmoothL1Loss: MindSpore's reduction default is 'none' (torch 'mean'): written;
- constructor argument order differs for BCEWithLogitsLoss, TripletMarginLoss,
  MultiMarginLoss and TripletMarginWithDistanceLoss: written by keyword;
- KLDivLoss has no ``log_target`` in MindSpore: marked when True;
- CrossEntropyLoss: ``mindspore.nn.CrossEntropyLoss`` rejects torch's int64
  class labels on CPU ("'labels' should be Int32"; it only validates, then
  calls ops.cross_entropy). ``ops.cross_entropy`` accepts int64 and matches
  torch for class indices, class probabilities, weight, ignore_index,
  label_smoothing and every reduction (<= 1.9e-6). So the loss becomes a
  function of ``(input, target)`` over ops.cross_entropy: it takes torch's
  labels and argument names as they are (it is not a Cell: nothing to train);
- MultiLabelMarginLoss: MindSpore's kernel needs int32 targets: the same
  function form casts them.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.helpers import literal_or_none
from rewrite_rules.cases import call_cases
from rewrite_rules.nn.shared import LOSS_LEGACY, P, layer_cases, with_legacy_reduction
from rewrite_rules.cases import SHAPES
from rewrite_rules.api import ApiRule, Arg, Example, Unconvertible, WeightMove, code_of, keyword_arg, literal_value
from rewrite_rules.nn.module_paths import with_module_paths

_PAIR = {"x": "randn(4, 5)", "y": "randn(4, 5)"}
_PROB = {"x": "rand(4, 5)", "y": "rand(4, 5)"}  # probabilities / binary targets in [0, 1)
_RED = "'sum'"


def _inline(example: Example, name: str) -> Example:
    """``layer = nn.X(...)`` + ``layer(...)`` -> ``nn.X(...)(...)``: for losses
    that become functions (the harness pairs torch Modules with Cells only)."""
    lines = example.torch.splitlines()
    ctor = next(line for line in lines if line.startswith("layer = "))
    call = next(line for line in lines if line.startswith("result = "))
    merged = call.replace("layer(", ctor[len("layer = "):] + "(", 1)
    kept = [line for line in lines if line not in (ctor, call)]
    return Example("\n".join(kept + [merged]), inputs=example.inputs, results=example.results, rtol=example.rtol,
                   atol=example.atol, notes=example.notes)


def _variables_case(name: str, params, inputs, call: str, **kw) -> Example:
    """The variables shape with keywords (the deprecated size_average/reduce
    cannot be checked through variables, so they are left out)."""
    chosen = [p for p in params if p.name not in LOSS_LEGACY]
    setup = "".join(f"v_{p.name} = {p.value}\n" for p in chosen)
    args = ", ".join(f"{p.name}=v_{p.name}" for p in chosen)
    return Example(f"{setup}layer = nn.{name}({args})\nresult = {call}", inputs=dict(inputs), notes="variables",
                   **kw)


def _loss(name: str, target: str | None, signature: str, params, inputs, *, call="layer(x, y)", args=None,
          positional=None, hook=None, notes="", extra=(), weights=None, inline=False, **kw) -> ApiRule:
    examples = (
        *layer_cases(name, params, inputs, call=call, shapes=SHAPES[:4], **kw),
        _variables_case(name, params, inputs, call, **kw),
        *layer_cases(name, [P("reduction", "'none'")], inputs, call=call, shapes=("keywords",), **kw),
    )
    if inline:
        examples = tuple(_inline(ex, name) for ex in examples)
    return ApiRule(
        f"torch.nn.{name}",
        target,
        signature=signature,
        args={**LOSS_LEGACY, **(args or {})},
        positional=positional,
        hook=with_legacy_reduction(hook),
        notes=notes,
        weights=weights or {},
        examples=(*extra, *examples),
    )


# torch losses register their weight tensors as buffers; MindSpore keeps the
# tensor given to the constructor as a plain attribute (same values).
_WEIGHT_BUFFER = WeightMove(None, why="a constructor argument; MindSpore keeps it as a plain tensor attribute")


def _functional_loss(fn: str, params: tuple[str, ...], cast: dict[str, str] | None = None,
                     broadcast: tuple[str, ...] = ()):
    """The loss as ``lambda input, target: ops.<fn>(input, target, <constructor args>)``:
    a function of torch's own forward arguments. ``broadcast``: tensor
    arguments MindSpore needs in the input's shape."""

    def hook(call, ctx):
        keywords = []
        for name in params:
            if not call.has(name) or _is_none(call.get(name)):
                continue
            value = call.get(name)
            if name == "reduction" and code_of(value).strip("'\"") == "elementwise_mean":
                value = cst.SimpleString("'mean'")  # torch's old name for 'mean', still accepted (vinhkhuc's tutorials)
            if name in broadcast:
                value = cst.parse_expression(f"{code_of(value)}.broadcast_to(input.shape)")
            keywords.append(keyword_arg(name, value))
        inputs = []
        for name in ("input", "target"):
            value: cst.BaseExpression = cst.Name(name)
            if cast and name in cast:
                value = cst.Call(cst.Attribute(value, cst.Name("astype")), [cst.Arg(ctx.ref(cast[name]))])
            inputs.append(cst.Arg(value))
        call.result = _lambda(cst.Call(ctx.ref(f"mindspore.ops.{fn}"), inputs + keywords))

    return hook


def _lambda(body: cst.BaseExpression) -> cst.Lambda:
    # parenthesised: the lambda may be called where it is made (black drops redundant parentheses)
    return cst.Lambda(
        params=cst.Parameters([cst.Param(cst.Name("input")), cst.Param(cst.Name("target"))]),
        body=body,
        lpar=[cst.LeftParen()],
        rpar=[cst.RightParen()],
    )


def _bce(call, ctx):
    """MindSpore's BCELoss reads a weight that is not in the input's shape out
    of bounds (measured: 1.8e9 instead of 6.65); with a weight, the loss is a
    function that broadcasts it first."""
    if call.has("weight") and not _is_none(call.get("weight")):
        _functional_loss("binary_cross_entropy", ("weight", "reduction"), broadcast=("weight",))(call, ctx)


def _soft_margin(call, ctx):
    """MindSpore's SoftMarginLoss has no CPU kernel: log(1 + exp(-y x)) reduced."""
    from rewrite_rules.functional.losses import reduced

    softplus = code_of(ctx.ref("mindspore.ops.softplus"))
    call.result = _lambda(cst.parse_expression(reduced(f"{softplus}(-target * input)", call.get("reduction", "'mean'"))))




def _is_none(expr) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _triplet_distance(call, ctx):
    """torch's distance is pairwise_distance(x1, x2, p, eps) = ||x1 - x2 + eps||_p over the last dim."""
    p = call.get("p", "2.0")
    eps = call.get("eps", "1e-06")
    call.remove("p")
    call.remove("eps")
    try:
        default = float(literal_value(p)) == 2.0 and float(literal_value(eps)) == 1e-6
    except (ValueError, SyntaxError, TypeError):
        default = False
    if default:
        return  # MindSpore's default distance function is exactly this
    norm = code_of(ctx.ref("mindspore.ops.norm"))
    call.add_keyword(
        "distance_function",
        cst.parse_expression(f"lambda x1, x2: {norm}(x1 - x2 + {code_of(eps)}, {code_of(p)}, dim=-1)"),
    )


def _log_target(call, ctx):
    known, value = literal_or_none(call, "log_target")
    if not known or value:
        raise Unconvertible("log_target=True is not supported by MindSpore's KLDivLoss")
    call.remove("log_target")


_SIGNS = {"x": "randn(4, 5)", "t": "tensor([[1., -1., 1., 1., -1.], [-1., -1., 1., 1., 1.], [1., 1., 1., -1., -1.], [-1., 1., -1., 1., -1.]])"}
_CE_INPUTS = {"x": "randn(6, 5)", "y": "randint(0, 5, (6,))", "w": "rand(5)"}

RULES = [
    _loss("L1Loss", "mindspore.nn.L1Loss", "size_average=None, reduce=None, reduction='mean'",
          [P("size_average", "None", default=True), P("reduce", "None", default=True), P("reduction", _RED, default=True)],
          _PAIR, positional=0),
    _loss("MSELoss", "mindspore.nn.MSELoss", "size_average=None, reduce=None, reduction='mean'",
          [P("size_average", "None", default=True), P("reduce", "None", default=True), P("reduction", _RED, default=True)],
          _PAIR, positional=0, extra=(
              Example("loss = nn.MSELoss(size_average=False)", "loss = nn.MSELoss(reduction=\"sum\")"),
              Example("result = nn.MSELoss(reduce=False)(x, y)", inputs=_PAIR),
              Example("result = nn.MSELoss(False, reduction='none')(x, y)", inputs=_PAIR,
                      notes="torch ignores reduction= once a legacy argument is given"))),
    ApiRule(
        "torch.nn.CrossEntropyLoss",
        None,
        signature="weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean', label_smoothing=0.0",
        args=LOSS_LEGACY,
        hook=with_legacy_reduction(
            _functional_loss("cross_entropy", ("weight", "ignore_index", "reduction", "label_smoothing"))),
        notes="a function over ops.cross_entropy: nn.CrossEntropyLoss rejects int64 class labels on CPU, "
        "ops.cross_entropy takes them and matches torch (indices, probabilities, weight, ignore_index, smoothing).",
        examples=(
            Example("loss_fn = nn.CrossEntropyLoss()", "loss_fn = lambda input, target: ops.cross_entropy(input, target)"),
            Example("loss = nn.BCELoss(w)",
                    "loss = lambda input, target: ops.binary_cross_entropy(\n    input, target, weight=w.broadcast_to(input.shape)\n)"),
            Example("result = nn.CrossEntropyLoss(size_average=False)(x, y)", inputs=_CE_INPUTS, atol=1e-5),
            # the loss is a function, not a Cell: the cases call it where it is made
            *call_cases("result = nn.CrossEntropyLoss({args})(x, y)",
                        [P("weight", "w", default=True), P("size_average", "None", default=True),
                         P("ignore_index", "2", default=True), P("reduce", "None", default=True),
                         P("reduction", _RED, default=True), P("label_smoothing", "0.1", default=True)],
                        _CE_INPUTS, atol=1e-5, shapes=SHAPES[:4]),
            Example("v_weight = w\nv_ignore_index = 2\nv_reduction = 'none'\nv_label_smoothing = 0.1\n"
                    "result = nn.CrossEntropyLoss(weight=v_weight, ignore_index=v_ignore_index, reduction=v_reduction, "
                    "label_smoothing=v_label_smoothing)(x, y)", inputs=_CE_INPUTS, atol=1e-5, notes="variables"),
            Example("result = nn.CrossEntropyLoss(reduction='none')(input=x, target=y)",
                    inputs=_CE_INPUTS, atol=1e-5, notes="torch keyword names"),
            Example("result = nn.CrossEntropyLoss(label_smoothing=0.2)(x, y.softmax(dim=1))",
                    inputs={"x": "randn(6, 5)", "y": "rand(6, 5)"}, atol=1e-5, notes="class probabilities"),
            Example("result = nn.CrossEntropyLoss()(x, y)", inputs={"x": "randn(2, 5, 3, 4)", "y": "randint(0, 5, (2, 3, 4))"},
                    atol=1e-5, notes="spatial"),
        ),
    ),
    _loss("NLLLoss", "mindspore.nn.NLLLoss", "weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean'",
          [P("weight", "w", default=True), P("size_average", "None", default=True), P("ignore_index", "2", default=True),
           P("reduce", "None", default=True), P("reduction", _RED, default=True)],
          {"x": "randn(6, 5)", "y": "randint(0, 5, (6,))", "w": "rand(5)"}, call="layer(x.log_softmax(1), y)",
          weights={"weight": _WEIGHT_BUFFER}, positional=1, atol=1e-5),
    _loss("BCELoss", "mindspore.nn.BCELoss", "weight=None, size_average=None, reduce=None, reduction='mean'",
          [P("weight", "w", default=True), P("size_average", "None", default=True), P("reduce", "None", default=True),
           P("reduction", _RED, default=True)], {**_PROB, "w": "rand(5)"}, weights={"weight": _WEIGHT_BUFFER}, inline=True, hook=_bce, positional=1, atol=1e-5),
    _loss("BCEWithLogitsLoss", "mindspore.nn.BCEWithLogitsLoss",
          "weight=None, size_average=None, reduce=None, reduction='mean', pos_weight=None",
          [P("weight", "w", default=True), P("size_average", "None", default=True), P("reduce", "None", default=True),
           P("reduction", _RED, default=True), P("pos_weight", "pw", default=True)],
          {"x": "randn(4, 5)", "y": "rand(4, 5)", "w": "rand(5)", "pw": "rand(5)"}, weights={"weight": _WEIGHT_BUFFER, "pos_weight": _WEIGHT_BUFFER}, positional=0, atol=1e-5),
    _loss("SmoothL1Loss", "mindspore.nn.SmoothL1Loss", "size_average=None, reduce=None, reduction='mean', beta=1.0",
          [P("size_average", "None", default=True), P("reduce", "None", default=True), P("reduction", _RED, default=True),
           P("beta", "0.5", default=True)], _PAIR,
          args={"reduction": Arg(explicit=True)}, positional=0,
          notes="reduction is always written: MindSpore's default is 'none'."),
    _loss("HuberLoss", "mindspore.nn.HuberLoss", "reduction='mean', delta=1.0",
          [P("reduction", _RED, default=True), P("delta", "0.5", default=True)], _PAIR),
    _loss("KLDivLoss", "mindspore.nn.KLDivLoss", "size_average=None, reduce=None, reduction='mean', log_target=False",
          [P("size_average", "None", default=True), P("reduce", "None", default=True),
           P("reduction", "'batchmean'", default=True)],
          {"x": "randn(4, 5)", "y": "rand(4, 5)"}, call="layer(x.log_softmax(1), y)", positional=0, hook=_log_target,
          extra=(Example("loss = nn.KLDivLoss(log_target=True)", marked="log_target"),), atol=1e-5),
    _loss("MarginRankingLoss", "mindspore.nn.MarginRankingLoss",
          "margin=0.0, size_average=None, reduce=None, reduction='mean'",
          [P("margin", "0.3", default=True), P("size_average", "None", default=True), P("reduce", "None", default=True),
           P("reduction", _RED, default=True)],
          {"a": "randn(6)", "b": "randn(6)", "t": "tensor([1., -1., 1., 1., -1., -1.])"}, call="layer(a, b, t)",
          positional=1),
    _loss("HingeEmbeddingLoss", "mindspore.nn.HingeEmbeddingLoss",
          "margin=1.0, size_average=None, reduce=None, reduction='mean'",
          [P("margin", "0.5", default=True), P("size_average", "None", default=True), P("reduce", "None", default=True),
           P("reduction", _RED, default=True)],
          {"x": "randn(4, 5)", "t": "tensor([[1., -1., 1., 1., -1.], [-1., -1., 1., 1., 1.], [1., 1., 1., -1., -1.], [-1., 1., -1., 1., -1.]])"}, call="layer(x, t)", positional=1),
    _loss("CosineEmbeddingLoss", "mindspore.nn.CosineEmbeddingLoss",
          "margin=0.0, size_average=None, reduce=None, reduction='mean'",
          [P("margin", "0.2", default=True), P("size_average", "None", default=True), P("reduce", "None", default=True),
           P("reduction", _RED, default=True)],
          {"a": "randn(4, 5)", "b": "randn(4, 5)", "t": "tensor([1., -1., 1., -1.])"}, call="layer(a, b, t)",
          positional=1, atol=1e-5),
    _loss("TripletMarginLoss", "mindspore.nn.TripletMarginWithDistanceLoss",
          "margin=1.0, p=2.0, eps=1e-06, swap=False, size_average=None, reduce=None, reduction='mean'",
          [P("margin", "0.5", default=True), P("p", "1.0", default=True), P("eps", "1e-05", default=True),
           P("swap", "True", default=True), P("size_average", "None", default=True), P("reduce", "None", default=True),
           P("reduction", _RED, default=True)],
          {"a": "randn(4, 5)", "b": "randn(4, 5)", "c": "randn(4, 5)"}, call="layer(a, b, c)", positional=0,
          hook=_triplet_distance,
          notes="MindSpore's TripletMarginLoss has no CPU kernel; TripletMarginWithDistanceLoss with torch's "
          "pairwise distance ||a - b + eps||_p is the same loss (default distance when p=2, eps=1e-6).",
          extra=(Example("loss = nn.TripletMarginLoss(margin=0.5)",
                         "loss = nn.TripletMarginWithDistanceLoss(margin=0.5)"),),
          atol=1e-5),
    _loss("MultiLabelSoftMarginLoss", "mindspore.nn.MultiLabelSoftMarginLoss",
          "weight=None, size_average=None, reduce=None, reduction='mean'",
          [P("weight", "w", default=True), P("size_average", "None", default=True), P("reduce", "None", default=True),
           P("reduction", _RED, default=True)],
          {"x": "randn(4, 5)", "y": "randint(0, 2, (4, 5))", "w": "rand(5)"}, call="layer(x, y.float())",
          weights={"weight": _WEIGHT_BUFFER}, positional=1, atol=1e-5),
    ApiRule(
        "torch.nn.SoftMarginLoss",
        None,
        signature="size_average=None, reduce=None, reduction='mean'",
        args=LOSS_LEGACY,
        hook=_soft_margin,
        notes="composed as ops.softplus(-target * input) reduced: MindSpore's SoftMarginLoss has no CPU kernel.",
        examples=(
            *call_cases("result = nn.SoftMarginLoss({args})(x, t)",
                        [P("size_average", "None", default=True), P("reduce", "None", default=True),
                         P("reduction", _RED, default=True)], _SIGNS, atol=1e-5, shapes=SHAPES[:4]),
            Example("result = nn.SoftMarginLoss(reduction='none')(x, t)", inputs=_SIGNS, atol=1e-5),
            Example("v_reduction = 'sum'\nresult = nn.SoftMarginLoss(reduction=v_reduction)(x, t)", inputs=_SIGNS,
                    atol=1e-5, notes="variables"),
        ),
    ),
    _loss("PoissonNLLLoss", "mindspore.nn.PoissonNLLLoss",
          "log_input=True, full=False, size_average=None, eps=1e-08, reduce=None, reduction='mean'",
          [P("log_input", "True", default=True), P("full", "True", default=True), P("size_average", "None", default=True),
           P("eps", "1e-06", default=True), P("reduce", "None", default=True), P("reduction", _RED, default=True)],
          {"x": "randn(4, 5)", "y": "randint(0, 6, (4, 5))"}, call="layer(x, y.float())", positional=2, atol=1e-4),
    _loss("GaussianNLLLoss", "mindspore.nn.GaussianNLLLoss", "*, full=False, eps=1e-06, reduction='mean'",
          [P("full", "True", default=True, kind="keyword"), P("eps", "1e-05", default=True, kind="keyword"),
           P("reduction", _RED, default=True, kind="keyword")],
          {"x": "randn(4, 5)", "y": "randn(4, 5)", "v": "rand(4, 5)"}, call="layer(x, y, v + 0.1)", atol=1e-5),
    _loss("MultiMarginLoss", "mindspore.nn.MultiMarginLoss",
          "p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction='mean'",
          [P("p", "2", default=True), P("margin", "0.5", default=True), P("weight", "w", default=True),
           P("size_average", "None", default=True), P("reduce", "None", default=True), P("reduction", _RED, default=True)],
          {"x": "randn(6, 5)", "y": "randint(0, 5, (6,))", "w": "rand(5)"}, weights={"weight": _WEIGHT_BUFFER}, positional=2,
          notes="weight by keyword: MindSpore orders reduction before weight.", atol=1e-5),
    ApiRule(
        "torch.nn.MultiLabelMarginLoss",
        None,
        signature="size_average=None, reduce=None, reduction='mean'",
        notes="MindSpore's MultilabelMarginLoss has no CPU kernel (measured: kernel select fails) and needs int32 targets",
        examples=(Example("loss = nn.MultiLabelMarginLoss()", marked="no CPU kernel"),),
    ),
    ApiRule(
        "torch.nn.CTCLoss",
        "mindspore.nn.CTCLoss",
        signature="blank=0, reduction='mean', zero_infinity=False",
        examples=(
            *layer_cases("CTCLoss", [P("blank", "0", default=True), P("reduction", _RED, default=True),
                                     P("zero_infinity", "True", default=True)],
                         {"x": "randn(6, 2, 5)", "t": "randint(1, 5, (2, 3))", "il": "tensor([6, 5])",
                          "tl": "tensor([3, 2])"},
                         call="layer(x.log_softmax(2), t, il, tl)", atol=1e-5),
        ),
    ),
    ApiRule(
        "torch.nn.TripletMarginWithDistanceLoss",
        "mindspore.nn.TripletMarginWithDistanceLoss",
        signature="*, distance_function=None, margin=1.0, swap=False, reduction='mean'",
        examples=layer_cases("TripletMarginWithDistanceLoss",
                             [P("margin", "0.5", default=True, kind="keyword"), P("swap", "True", default=True, kind="keyword"),
                              P("reduction", _RED, default=True, kind="keyword")],
                             {"a": "randn(4, 5)", "b": "randn(4, 5)", "c": "randn(4, 5)"}, call="layer(a, b, c)",
                             atol=1e-5),
    ),
]

RULES = with_module_paths(RULES)  # torch.nn.modules.X and torch.nn.modules.<submodule>.X too
