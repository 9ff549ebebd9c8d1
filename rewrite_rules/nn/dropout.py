"""torch.nn dropout layers -> mindspore.nn dropout Cells.

``p`` is always passed by keyword: ``mindspore.nn.Dropout``'s first positional
parameter is the deprecated keep_prob (``nn.Dropout(0.2)`` keeps 20%).
The execution cases compare eval mode (identity), training mode with p=0,
and training mode with p>0, where the harness replays torch's mask to
MindSpore so that the kept entries and their 1/(1-p) scaling compare by value.
"""

from __future__ import annotations

from rewrite_rules.nn.float_args import as_float
from rewrite_rules.nn.shared import INPLACE, P, layer_cases
from rewrite_rules.api import ApiRule, Arg, Example
from rewrite_rules.nn.module_paths import with_module_paths


_SHAPE = {"Dropout": "-1", "Dropout1d": "4, 20, -1", "Dropout2d": "4, 20, 25, -1", "Dropout3d": "4, 20, 5, 5, -1"}
def _dropout(name: str, x: str, extra=()) -> ApiRule:
    inputs = {"x": x}
    return ApiRule(
        f"torch.nn.{name}",
        f"mindspore.nn.{name}",
        signature="p=0.5, inplace=False",
        # nn.Dropout takes an int p; Dropout1d/2d/3d refuse one ("the type of 'p' should be 'float'")
        args={"p": Arg(explicit=True, value=None if name == "Dropout" else as_float), "inplace": INPLACE},
        positional=0,
        notes="p is written by keyword (MindSpore's nn.Dropout takes keep_prob positionally)"
              + ("." if name == "Dropout" else "; as a float (MindSpore refuses an int p)."),
        examples=(
            *extra,
            *layer_cases(name, [P("p", "0.3", default=True), P("inplace", "False", default=True)], inputs,
                         setup="layer.eval()\n", notes="eval mode: identity"),
            *layer_cases(name, [P("p", "0.0")], inputs, setup="layer.train()\n", shapes=("positional", "keywords"),
                         notes="training mode with p=0: identity"),
            # an int p, as research code writes it (nn.Dropout(0)), and one held in a variable
            *layer_cases(name, [P("p", "0")], inputs, setup="layer.train()\n", shapes=("positional", "variables"),
                         notes="int_p"),
            # p means "drop": with p=0.9 most entries are zeroed (nn.Dropout(0.9) would keep 90% in MindSpore)
            *layer_cases(name, [P("p", "0.9")], {"x": "ones(4, 20, 5, 5, 5)"}, setup="layer.train()\n",
                         call="(layer(x.reshape(%s)) == 0).sum().item() > 0.5 * x.numel()" % _SHAPE[name],
                         shapes=("positional",), notes="drop rate"),
            # training mode, p>0: the harness replays torch's mask, so the kept entries and their
            # 1/(1-p) scaling (whole channels for the Nd layers) compare by value
            *layer_cases(name, [P("p", "0.3")], inputs, setup="layer.train()\n", shapes=("positional", "keywords"),
                         notes="training mode: mask replayed"),
        ),
    )


RULES = [
    _dropout(
        "Dropout",
        "randn(4, 5)",
        extra=(
            Example("drop = nn.Dropout(0.2)", "drop = nn.Dropout(p=0.2)"),
            Example("drop = nn.Dropout()", "drop = nn.Dropout(p=0.5)"),
        ),
    ),
    _dropout("Dropout1d", "randn(2, 3, 5)"),
    _dropout("Dropout2d", "randn(2, 3, 4, 5)"),
    _dropout("Dropout3d", "randn(2, 3, 2, 4, 5)"),
    ApiRule(
        "torch.nn.AlphaDropout",
        None,
        signature="p=0.5, inplace=False",
        notes="MindSpore has no alpha dropout (SELU-preserving) layer",
        examples=(Example("drop = nn.AlphaDropout(0.1)", marked="no alpha dropout"),),
    ),
    ApiRule(
        "torch.nn.FeatureAlphaDropout",
        None,
        signature="p=0.5, inplace=False",
        notes="MindSpore has no alpha dropout (SELU-preserving) layer",
        examples=(Example("drop = nn.FeatureAlphaDropout(0.1)", marked="no alpha dropout"),),
    ),
]

RULES = with_module_paths(RULES)  # torch.nn.modules.X and torch.nn.modules.<submodule>.X too
