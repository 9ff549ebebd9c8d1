"""torch.nn dropout layers -> mindspore.nn dropout Cells.

``p`` is always passed by keyword: ``mindspore.nn.Dropout``'s first positional
parameter is the deprecated keep_prob (``nn.Dropout(0.2)`` keeps 20%).
Dropout is random in training mode, so the execution cases compare eval mode
(identity) and training mode with p=0 exactly, and training mode with p>0
structurally: survivors scaled by 1/(1-p), whole channels for Nd, and the
share of zeros.
"""

from __future__ import annotations

from rewrite_rules.nn_shared import INPLACE, P, layer_cases
from rewrite_rules.spec import ApiRule, Arg, Example


_SHAPE = {"Dropout": "-1", "Dropout1d": "4, 20, -1", "Dropout2d": "4, 20, 25, -1", "Dropout3d": "4, 20, 5, 5, -1"}
# training mode on ones: the entries (Dropout) or channels (Nd) dropped are random in both frameworks
_ONES = {"Dropout": "ones(4, 500)", "Dropout1d": "ones(8, 50, 3)", "Dropout2d": "ones(8, 50, 3, 3)",
         "Dropout3d": "ones(8, 50, 2, 3, 3)"}
_UNIT = {"Dropout": "", "Dropout1d": "2", "Dropout2d": "(2, 3)", "Dropout3d": "(2, 3, 4)"}
_SCALED = (
    "the dropped entries are not compared (random in both); compared: every output is 0 or 1/(1-p) "
    "(whole channels for the Nd layers) and some are dropped"
)
_ZERO_SHARE = "the dropped entries are not compared; compared: the share of zeros, within 4 standard errors"


def scaling_check(name: str) -> str:
    """Statements reducing a dropout output ``y`` of ones to what both frameworks must agree on."""
    if not _UNIT[name]:
        return "result = (y.max().item(), bool(((y == 0) | (y == y.max())).all()), bool((y == 0).any()))"
    axes = _UNIT[name]
    return (f"kept = (y == y.max()).all({axes})\nzeroed = (y == 0).all({axes})\n"
            "result = (y.max().item(), bool((kept | zeroed).all()), bool(zeroed.any()))")


def _training(name: str) -> tuple[Example, ...]:
    ones = {"x": _ONES[name]}
    share = ("y[:, :, 0, 0]" if name == "Dropout2d" else "y") if name in ("Dropout", "Dropout2d") else None
    cases = [Example(f"layer = nn.{name}(p=0.3)\nlayer.train()\ny = layer(x)\n" + scaling_check(name), inputs=ones,
                     compare="structural", notes=_SCALED)]
    if share is not None:
        # 20000 entries (channels: 4000) with p=0.3: the shares agree to 0.02 (0.05)
        inputs, atol = ({"x": "ones(20000)"}, 0.02) if name == "Dropout" else ({"x": "ones(100, 40, 2, 2)"}, 0.05)
        cases.append(Example(f"layer = nn.{name}(0.3)\nlayer.train()\ny = layer(x)\n"
                             f"result = ({share} == 0).float().mean().item()", inputs=inputs, atol=atol,
                             compare="structural", notes=_ZERO_SHARE))
    return tuple(cases)


def _dropout(name: str, x: str, extra=()) -> ApiRule:
    inputs = {"x": x}
    return ApiRule(
        f"torch.nn.{name}",
        f"mindspore.nn.{name}",
        signature="p=0.5, inplace=False",
        args={"p": Arg(explicit=True), "inplace": INPLACE},
        positional=0,
        notes="p is written by keyword (MindSpore's nn.Dropout takes keep_prob positionally).",
        examples=(
            *extra,
            *layer_cases(name, [P("p", "0.3", default=True), P("inplace", "False", default=True)], inputs,
                         setup="layer.eval()\n", notes="eval mode: identity"),
            *layer_cases(name, [P("p", "0.0")], inputs, setup="layer.train()\n", shapes=("positional", "keywords"),
                         notes="training mode with p=0: identity"),
            # p means "drop": with p=0.9 most entries are zeroed (nn.Dropout(0.9) would keep 90% in MindSpore)
            *layer_cases(name, [P("p", "0.9")], {"x": "ones(4, 20, 5, 5, 5)"}, setup="layer.train()\n",
                         call="(layer(x.reshape(%s)) == 0).sum().item() > 0.5 * x.numel()" % _SHAPE[name],
                         shapes=("positional",), notes="drop rate"),
            *_training(name),
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
