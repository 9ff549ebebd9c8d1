"""torch.nn.functional losses -> mindspore.ops losses.

Differences carried (measured against torch):
- ``size_average``/``reduce`` (deprecated in torch) become the ``reduction=``
  torch reads them as (marked when not literals); torch's newer
  ``weight=`` on l1/mse/huber is marked (ops has none);
- first-parameter names differ (``logits``/``labels``, ``inputs``, ``x``):
  renamed for keyword calls; argument order differs for
  binary_cross_entropy_with_logits (pos_weight before reduction): keywords;
- smooth_l1_loss: MindSpore's reduction default is 'none': written;
- binary_cross_entropy: MindSpore reads a weight that is not in the input's
  shape out of bounds, so the weight is broadcast first;
- cross_entropy: ops.cross_entropy takes torch's int64 labels on CPU;
- triplet_margin_loss / poisson_nll_loss have no CPU ops kernel / ops form:
  the equivalent Cells are built and called in place;
- soft_margin_loss has no CPU kernel: composed as softplus(-target * input);
- multilabel_margin_loss has no CPU kernel: marked.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import SHAPES
from rewrite_rules.nn.shared import LOSS_LEGACY, P, fn_cases, with_legacy_reduction
from rewrite_rules.api import ApiRule, Arg, Example, Unconvertible, Unsupported, code_of, keyword_arg, literal_value
from rewrite_rules.tensor.binding import atom, literal
from rewrite_rules.torch_functions.builders import case

_RED = "'sum'"
_NO_WEIGHT = Unsupported("weight= is not supported by the MindSpore functional loss")
_PAIR = {"x": "randn(4, 5)", "y": "randn(4, 5)"}
_SIGNS = {"x": "randn(4, 5)", "t": "tensor([[1., -1., 1., 1., -1.], [-1., -1., 1., 1., 1.], [1., 1., 1., -1., -1.], "
          "[-1., 1., -1., 1., -1.]])"}
_TRIPLE = {"a": "randn(4, 5)", "b": "randn(4, 5)", "c": "randn(4, 5)"}


def _cases(fn: str, params, inputs, **kw):
    """All shapes but variables (deprecated arguments cannot be checked through
    variables), a keyword variables case without them, and reduction='none'."""
    chosen = [p for p in params if p.name not in LOSS_LEGACY]
    setup = "".join(f"v_{p.name} = {p.value}\n" for p in chosen)
    args = ", ".join(f"{p.name}=v_{p.name}" for p in chosen)
    required = [p for p in params if not p.default]
    return (
        *fn_cases(fn, params, inputs, shapes=SHAPES[:4], **kw),
        Example(f"{setup}result = F.{fn}({args})", inputs=dict(inputs), notes="variables", **kw),
        *fn_cases(fn, [*required, P("reduction", "'none'")], inputs, shapes=("keywords",), **kw),
    )


def _loss(fn: str, signature: str, params, inputs, target: str | None = None, args=None, positional=None, hook=None,
          notes="", extra=(), **kw) -> ApiRule:
    return ApiRule(
        f"torch.nn.functional.{fn}",
        target if target is not None else f"mindspore.ops.{fn}",
        signature=signature,
        args={**LOSS_LEGACY, **(args or {})},
        positional=positional,
        hook=with_legacy_reduction(hook),
        notes=notes,
        examples=(*extra, *_cases(fn, params, inputs, **kw)),
    )


def _float_target(call, ctx):
    """MindSpore's hinge_embedding_loss wants float targets (torch takes +-1 integers too)."""
    call.set("target", f"{atom(call.get('target'))}.astype({atom(call.get('input'))}.dtype)")


def _cosine_embedding(call, ctx):
    """MindSpore's cosine_embedding_loss wants a batch: one unbatched pair (1-D
    inputs, a 0-d target) is read as a batch of one, and 'none' keeps the
    target's shape."""
    ops = code_of(ctx.ref("mindspore.ops"))
    a, b, t = (atom(call.get(n)) for n in ("input1", "input2", "target"))
    options = "".join(f", {n}={code_of(call.get(n))}" for n in ("margin", "reduction") if call.has(n))
    loss = f"{ops}.cosine_embedding_loss({a}.reshape(-1, {a}.shape[-1]), {b}.reshape(-1, {b}.shape[-1]), {t}.reshape(-1){options})"
    try:
        keeps_shape = literal(call.get("reduction"), "mean") == "none"
    except ValueError:
        keeps_shape = None
    if keeps_shape is None:
        loss = f"({loss}.reshape({t}.shape) if {atom(call.get('reduction'))} == 'none' else {loss})"
    elif keeps_shape:
        loss = f"{loss}.reshape({t}.shape)"
    call.result = cst.parse_expression(loss)


def _legacy(*names):
    return [P(n, "None", default=True) for n in names]


def _broadcast_weight(call, ctx):
    weight = call.get("weight")
    if weight is None or (isinstance(weight, cst.Name) and weight.value == "None"):
        call.remove("weight")
        return
    x = call.get("input")
    if not isinstance(x, (cst.Name, cst.Attribute)):
        raise Unconvertible("weight with a compound input: MindSpore needs the weight broadcast to the input's shape")
    call.set("weight", f"{code_of(weight)}.broadcast_to({code_of(x)}.shape)")


def reduced(elementwise: str, reduction: cst.BaseExpression) -> str:
    """torch's reduction applied to an elementwise loss; a reduction in a
    variable is chosen at run time."""
    try:
        value = literal_value(reduction)
    except (ValueError, SyntaxError):
        r = code_of(reduction)
        return f"({elementwise}).mean() if {r} == 'mean' else ({elementwise}).sum() if {r} == 'sum' else {elementwise}"
    return f"({elementwise})" + {"mean": ".mean()", "sum": ".sum()", "none": ""}[value]


def _soft_margin(call, ctx):
    softplus = code_of(ctx.ref("mindspore.ops.softplus"))
    x, t = code_of(call.get("input")), code_of(call.get("target"))
    call.result = cst.parse_expression(reduced(f"{softplus}(-({t}) * ({x}))", call.get("reduction", "'mean'")))


def _first_of_pair(call, ctx):
    """ops.ctc_loss returns (loss, log_alpha); torch returns the loss."""
    call.result = cst.Subscript(
        value=cst.Call(
            ctx.ref("mindspore.ops.ctc_loss"),
            [keyword_arg(p.name, call.get(p.name)) for p in call.rule.params if call.has(p.name)],
        ),
        slice=[cst.SubscriptElement(cst.Index(cst.Integer("0")))],
    )


def _cell_in_place(cell: str, ctor_args: tuple[str, ...], call_args: tuple[str, ...], distance: bool = False):
    """Build the equivalent Cell and call it at once (no ops form on CPU)."""

    def hook(call, ctx):
        keywords = []
        if distance:  # torch's pairwise distance ||x1 - x2 + eps||_p
            p, eps = call.get("p", "2.0"), call.get("eps", "1e-06")
            try:
                default = float(literal_value(p)) == 2.0 and float(literal_value(eps)) == 1e-6
            except (ValueError, SyntaxError, TypeError):
                default = False
            if not default:
                norm = code_of(ctx.ref("mindspore.ops.norm"))
                keywords.append(keyword_arg(
                    "distance_function",
                    cst.parse_expression(f"lambda x1, x2: {norm}(x1 - x2 + {code_of(eps)}, {code_of(p)}, dim=-1)")))
        for name in ctor_args:
            if call.has(name):
                keywords.append(keyword_arg(name, call.get(name)))
        built = cst.Call(ctx.ref(cell), keywords)
        call.result = cst.Call(built, [cst.Arg(call.get(n)) for n in call_args])

    return hook



_CE = {"x": "randn(6, 5)", "y": "randint(0, 5, (6,))", "w": "rand(5)"}

RULES = [
    _loss("l1_loss", "input, target, size_average=None, reduce=None, reduction='mean', weight=None",
          [P("input", "x"), P("target", "y"), *_legacy("size_average", "reduce"), P("reduction", _RED, default=True)],
          _PAIR, args={"weight": _NO_WEIGHT}, positional=2),
    _loss("mse_loss", "input, target, size_average=None, reduce=None, reduction='mean', weight=None",
          [P("input", "x"), P("target", "y"), *_legacy("size_average", "reduce"), P("reduction", _RED, default=True)],
          _PAIR, args={"weight": _NO_WEIGHT}, positional=2, atol=1e-5,
          extra=(Example("l = F.mse_loss(x, y, reduce=False)", "l = ops.mse_loss(x, y, reduction=\"none\")"),
                 Example("result = F.mse_loss(x, y, size_average=False, reduce=True)", inputs=_PAIR))),
    _loss("cross_entropy",
          "input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean', "
          "label_smoothing=0.0",
          [P("input", "x"), P("target", "y"), P("weight", "w", default=True), P("size_average", "None", default=True),
           P("ignore_index", "2", default=True), P("reduce", "None", default=True), P("reduction", _RED, default=True),
           P("label_smoothing", "0.1", default=True)], _CE, positional=3,
          notes="ops.cross_entropy accepts torch's int64 class labels on CPU.",
          extra=(
              Example("loss = F.cross_entropy(logits, labels)", "loss = ops.cross_entropy(logits, labels)"),
              *fn_cases("cross_entropy", [P("input", "x"), P("target", "y.softmax(dim=1)"), P("label_smoothing", "0.2")],
                        {"x": "randn(6, 5)", "y": "rand(6, 5)"}, shapes=("keywords",), notes="class probabilities",
                        atol=1e-5),
          ),
          atol=1e-5),
    _loss("nll_loss", "input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean'",
          [P("input", "x.log_softmax(1)"), P("target", "y"), P("weight", "w", default=True),
           P("size_average", "None", default=True), P("ignore_index", "2", default=True),
           P("reduce", "None", default=True), P("reduction", _RED, default=True)], _CE,
          args={"input": "inputs"}, positional=3, atol=1e-5,
          # PyTorchZeroToAll's MNIST test loop
          extra=(Example("result = F.nll_loss(x.log_softmax(1), y, size_average=False)", inputs=_CE, atol=1e-5),)),
    _loss("binary_cross_entropy", "input, target, weight=None, size_average=None, reduce=None, reduction='mean'",
          [P("input", "x"), P("target", "y"), P("weight", "w", default=True), *_legacy("size_average", "reduce"),
           P("reduction", _RED, default=True)], {"x": "rand(4, 5)", "y": "rand(4, 5)", "w": "rand(5)"},
          args={"input": "logits", "target": "labels"}, positional=3, hook=_broadcast_weight,
          notes="the weight is broadcast to the input's shape (MindSpore reads it out of bounds otherwise).",
          atol=1e-5),
    _loss("binary_cross_entropy_with_logits",
          "input, target, weight=None, size_average=None, reduce=None, reduction='mean', pos_weight=None",
          [P("input", "x"), P("target", "y"), P("weight", "w", default=True), *_legacy("size_average", "reduce"),
           P("reduction", _RED, default=True), P("pos_weight", "pw", default=True)],
          {"x": "randn(4, 5)", "y": "rand(4, 5)", "w": "rand(5)", "pw": "rand(5)"}, positional=3, atol=1e-5),
    _loss("smooth_l1_loss", "input, target, size_average=None, reduce=None, reduction='mean', beta=1.0",
          [P("input", "x"), P("target", "y"), *_legacy("size_average", "reduce"), P("reduction", _RED, default=True),
           P("beta", "0.5", default=True)], _PAIR, args={"reduction": Arg(explicit=True)}, positional=2,
          notes="reduction is always written: MindSpore's default is 'none'."),
    _loss("huber_loss", "input, target, reduction='mean', delta=1.0, weight=None",
          [P("input", "x"), P("target", "y"), P("reduction", _RED, default=True), P("delta", "0.5", default=True)],
          _PAIR, args={"weight": _NO_WEIGHT}),
    _loss("kl_div", "input, target, size_average=None, reduce=None, reduction='mean', log_target=False",
          [P("input", "x.log_softmax(1)"), P("target", "y"), *_legacy("size_average", "reduce"),
           P("reduction", "'batchmean'", default=True)], {"x": "randn(4, 5)", "y": "rand(4, 5)"},
          args={"input": "logits", "target": "labels",
                "log_target": Unsupported("log_target=True is not supported by ops.kl_div")},
          positional=2, atol=1e-5),
    _loss("margin_ranking_loss", "input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction='mean'",
          [P("input1", "a"), P("input2", "b"), P("target", "t"), P("margin", "0.3", default=True),
           *_legacy("size_average", "reduce"), P("reduction", _RED, default=True)],
          {"a": "randn(6)", "b": "randn(6)", "t": "tensor([1., -1., 1., 1., -1., -1.])"}, positional=4),
    _loss("hinge_embedding_loss", "input, target, margin=1.0, size_average=None, reduce=None, reduction='mean'",
          [P("input", "x"), P("target", "t"), P("margin", "0.5", default=True), *_legacy("size_average", "reduce"),
           P("reduction", _RED, default=True)], _SIGNS, args={"input": "inputs", "target": "targets"}, positional=3,
          hook=_float_target, notes="targets cast to the input's dtype: MindSpore wants float targets",
          extra=(case("result = F.hinge_embedding_loss(x, t * 2 - 1)", {"x": "randn(4, 5)", "t": "randint(0, 2, (4, 5))"}),)),
    _loss("cosine_embedding_loss", "input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction='mean'",
          [P("input1", "a"), P("input2", "b"), P("target", "t"), P("margin", "0.2", default=True),
           *_legacy("size_average", "reduce"), P("reduction", _RED, default=True)],
          {"a": "randn(4, 5)", "b": "randn(4, 5)", "t": "tensor([1., -1., 1., -1.])"}, positional=4, atol=1e-5,
          hook=_cosine_embedding, notes="an unbatched pair is read as a batch of one (MindSpore needs a batch)",
          extra=(case("result = F.cosine_embedding_loss(a, b, t)", {"a": "randn(5)", "b": "randn(5)", "t": "tensor(-1)"}),
                 case("result = F.cosine_embedding_loss(a, b, t, reduction='none')",
                      {"a": "randn(5)", "b": "randn(5)", "t": "tensor(1)"}),
                 case("result = F.cosine_embedding_loss(a, b, t, 0.1, reduction='none')",
                      {"a": "randn(4, 5)", "b": "randn(4, 5)", "t": "tensor([1, -1, 1, -1])"}, atol=1e-5),
                 case("r = 'sum'\nresult = F.cosine_embedding_loss(a, b, t, reduction=r)",
                      {"a": "randn(4, 5)", "b": "randn(4, 5)", "t": "tensor([1, -1, 1, -1])"}, atol=1e-5))),
    _loss("multilabel_soft_margin_loss", "input, target, weight=None, size_average=None, reduce=None, reduction='mean'",
          [P("input", "x"), P("target", "y.float()"), P("weight", "w", default=True), *_legacy("size_average", "reduce"),
           P("reduction", _RED, default=True)], {"x": "randn(4, 5)", "y": "randint(0, 2, (4, 5))", "w": "rand(5)"},
          positional=3, atol=1e-5),
    _loss("soft_margin_loss", "input, target, size_average=None, reduce=None, reduction='mean'",
          [P("input", "x"), P("target", "t"), *_legacy("size_average", "reduce"), P("reduction", _RED, default=True)],
          _SIGNS, target="mindspore.ops.soft_margin_loss", hook=_soft_margin,
          notes="composed as softplus(-target * input) reduced: MindSpore's SoftMarginLoss has no CPU kernel.",
          atol=1e-5),
    _loss("gaussian_nll_loss", "input, target, var, full=False, eps=1e-06, reduction='mean'",
          [P("input", "x"), P("target", "y"), P("var", "v + 0.1"), P("full", "True", default=True),
           P("eps", "1e-05", default=True), P("reduction", _RED, default=True)],
          {"x": "randn(4, 5)", "y": "randn(4, 5)", "v": "rand(4, 5)"}, args={"input": "x"}, positional=6, atol=1e-5),
    _loss("multi_margin_loss",
          "input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction='mean'",
          [P("input", "x"), P("target", "y"), P("p", "2", default=True), P("margin", "0.5", default=True),
           P("weight", "w", default=True), *_legacy("size_average", "reduce"), P("reduction", _RED, default=True)],
          _CE, target="mindspore.nn.MultiMarginLoss",
          hook=_cell_in_place("mindspore.nn.MultiMarginLoss", ("p", "margin", "reduction", "weight"), ("input", "target")),
          notes="ops.multi_margin_loss accepts only an int margin (measured); nn.MultiMarginLoss built and called "
          "in place takes torch's float margin.", atol=1e-5),
    _loss("triplet_margin_loss",
          "anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False, size_average=None, reduce=None, "
          "reduction='mean'",
          [P("anchor", "a"), P("positive", "b"), P("negative", "c"), P("margin", "0.5", default=True),
           P("p", "1.0", default=True), P("eps", "1e-05", default=True), P("swap", "True", default=True),
           *_legacy("size_average", "reduce"), P("reduction", _RED, default=True)], _TRIPLE,
          target="mindspore.nn.TripletMarginWithDistanceLoss",
          hook=_cell_in_place("mindspore.nn.TripletMarginWithDistanceLoss", ("margin", "swap", "reduction"),
                              ("anchor", "positive", "negative"), distance=True),
          notes="ops.triplet_margin_loss has no CPU kernel: nn.TripletMarginWithDistanceLoss with torch's "
          "pairwise distance, built and called in place.", atol=1e-5),
    ApiRule(
        "torch.nn.functional.triplet_margin_with_distance_loss",
        "mindspore.nn.TripletMarginWithDistanceLoss",
        signature="anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False, reduction='mean'",
        hook=_cell_in_place("mindspore.nn.TripletMarginWithDistanceLoss",
                            ("distance_function", "margin", "swap", "reduction"), ("anchor", "positive", "negative")),
        notes="no ops form: nn.TripletMarginWithDistanceLoss built and called in place.",
        examples=fn_cases("triplet_margin_with_distance_loss",
                          [P("anchor", "a"), P("positive", "b"), P("negative", "c"),
                           P("margin", "0.5", default=True, kind="keyword"), P("swap", "True", default=True, kind="keyword"),
                           P("reduction", _RED, default=True, kind="keyword")], _TRIPLE, atol=1e-5),
    ),
    _loss("poisson_nll_loss",
          "input, target, log_input=True, full=False, size_average=None, eps=1e-08, reduce=None, reduction='mean'",
          [P("input", "x"), P("target", "y.float()"), P("log_input", "True", default=True), P("full", "True", default=True),
           P("size_average", "None", default=True), P("eps", "1e-06", default=True), P("reduce", "None", default=True),
           P("reduction", _RED, default=True)], {"x": "randn(4, 5)", "y": "randint(0, 6, (4, 5))"},
          target="mindspore.nn.PoissonNLLLoss",
          hook=_cell_in_place("mindspore.nn.PoissonNLLLoss", ("log_input", "full", "eps", "reduction"), ("input", "target")),
          notes="no ops form: nn.PoissonNLLLoss built and called in place.", atol=1e-4),
    ApiRule(
        "torch.nn.functional.ctc_loss",
        "mindspore.ops.ctc_loss",
        signature="log_probs, targets, input_lengths, target_lengths, blank=0, reduction='mean', zero_infinity=False",
        hook=_first_of_pair,
        notes="ops.ctc_loss returns (loss, log_alpha): the loss is taken.",
        examples=fn_cases("ctc_loss", [P("log_probs", "x.log_softmax(2)"), P("targets", "t"), P("input_lengths", "il"),
                                       P("target_lengths", "tl"), P("blank", "0", default=True),
                                       P("reduction", _RED, default=True), P("zero_infinity", "True", default=True)],
                          {"x": "randn(6, 2, 5)", "t": "randint(1, 5, (2, 3))", "il": "tensor([6, 5])",
                           "tl": "tensor([3, 2])"}, atol=1e-5),
    ),
    ApiRule(
        "torch.nn.functional.multilabel_margin_loss",
        None,
        signature="input, target, size_average=None, reduce=None, reduction='mean'",
        notes="MindSpore's multilabel_margin_loss has no CPU kernel (measured)",
        examples=(Example("l = F.multilabel_margin_loss(x, y)", marked="no CPU kernel"),),
    ),
]
