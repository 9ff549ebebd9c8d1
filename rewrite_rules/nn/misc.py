"""torch.nn shape and utility layers -> mindspore.nn: Identity, Flatten,
Unflatten (dim -> axis), Bilinear (-> BiDense, same weight layout).

Marked: CosineSimilarity / PairwiseDistance (MindSpore's CosineSimilarity is
a different metric Cell; use ops.cosine_similarity / the F rules), Fold.
Unfold is a Cell written above the code over ops.unfold (MindSpore's nn.Unfold
is the TF-style extract-patches op).
"""

from __future__ import annotations

from rewrite_rules.helpers import DEVICE
from rewrite_rules.nn.shared import DTYPE, P, layer_cases
from rewrite_rules.api import ApiRule, Example, code_of, define, render
from rewrite_rules.nn.module_paths import with_module_paths

_UNFOLD = '''
class {name}(CELL):
    """torch.nn.Unfold (written by ms-migrate)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def construct(self, x):
        return UNFOLD(x, self.kernel_size, self.dilation, self.padding, self.stride)
'''


def _unfold_layer(call, ctx):
    source = _UNFOLD.replace("CELL", code_of(ctx.ref("mindspore.nn.Cell")))
    call.result = render(call, define(ctx, "Unfold", source.replace("UNFOLD", code_of(ctx.ref("mindspore.ops.unfold")))))


RULES = [
    ApiRule(
        "torch.nn.Identity",
        "mindspore.nn.Identity",
        examples=(
            *layer_cases("Identity", [], {"x": "randn(2, 3)"}),
            *layer_cases("Identity", [P("a", "54"), P("unused", "'x'", kind="keyword")], {"x": "randn(2, 3)"},
                         shapes=("positional",)),
        ),
    ),
    ApiRule(
        "torch.nn.Flatten",
        "mindspore.nn.Flatten",
        signature="start_dim=1, end_dim=-1",
        examples=layer_cases("Flatten", [P("start_dim", "0", default=True), P("end_dim", "2", default=True)],
                             {"x": "randn(2, 3, 4, 5)"}),
    ),
    ApiRule(
        "torch.nn.Unflatten",
        "mindspore.nn.Unflatten",
        signature="dim, unflattened_size",
        args={"dim": "axis"},
        positional=2,
        examples=layer_cases("Unflatten", [P("dim", "1"), P("unflattened_size", "(3, 4)")], {"x": "randn(2, 12, 5)"}),
    ),
    ApiRule(
        "torch.nn.Bilinear",
        "mindspore.nn.BiDense",
        signature="in1_features, in2_features, out_features, bias=True, device=None, dtype=None",
        args={"in1_features": "in1_channels", "in2_features": "in2_channels", "out_features": "out_channels",
              "bias": "has_bias", "device": DEVICE, "dtype": DTYPE},
        positional=3,
        notes="in*_features -> in*_channels, bias -> has_bias; the weight layout (out, in1, in2) is the same.",
        examples=layer_cases("Bilinear", [P("in1_features", "3"), P("in2_features", "4"), P("out_features", "5"),
                                          P("bias", "False", default=True)],
                             {"a": "randn(2, 3)", "b": "randn(2, 4)"}, call="layer(a, b)", atol=1e-5),
    ),
    ApiRule(
        "torch.nn.CosineSimilarity",
        None,
        signature="dim=1, eps=1e-08",
        notes="mindspore.nn.CosineSimilarity is a different (metric) Cell; call ops.cosine_similarity(x1, x2, dim, eps)",
        examples=(Example("cos = nn.CosineSimilarity(dim=1)", marked="different (metric) Cell"),),
    ),
    ApiRule(
        "torch.nn.PairwiseDistance",
        None,
        signature="p=2.0, eps=1e-06, keepdim=False",
        notes="mindspore.nn has no PairwiseDistance Cell; F.pairwise_distance converts",
        examples=(Example("dist = nn.PairwiseDistance()", marked="no PairwiseDistance Cell"),),
    ),
    ApiRule(
        "torch.nn.Unfold",
        None,
        signature="kernel_size, dilation=1, padding=0, stride=1",
        hook=_unfold_layer,
        notes="a Cell written above the code calls ops.unfold (torch's layout); mindspore.nn.Unfold is the "
              "TF-style extract-patches op with another layout.",
        examples=(
            *layer_cases("Unfold", [P("kernel_size", "2"), P("dilation", "1", default=True),
                                    P("padding", "1", default=True), P("stride", "2", default=True)],
                         {"x": "randn(2, 3, 5, 6)"}),
            Example("unfold = nn.Unfold(kernel_size=(2, 3), stride=(1, 2))\nresult = unfold(x)",
                    inputs={"x": "randn(1, 2, 5, 7)"}, notes="per-axis windows"),
        ),
    ),
    ApiRule(
        "torch.nn.Fold",
        None,
        signature="output_size, kernel_size, dilation=1, padding=0, stride=1",
        notes="mindspore.nn has no Fold Cell; F.fold (ops.fold) converts",
        examples=(Example("fold = nn.Fold((4, 5), 2)", marked="no Fold Cell"),),
    ),
]

RULES = with_module_paths(RULES)  # torch.nn.modules.X and torch.nn.modules.<submodule>.X too
