"""torch.nn.functional dropout -> mindspore.ops dropout.

Same parameter meaning (p = drop probability, measured) and the same
``training=True`` default; ``inplace=`` is dropped (same value). Random in
training, so the execution cases compare training=False (identity) and p=0
exactly, and training with p>0 structurally (scaling by 1/(1-p), channels,
share of zeros).
"""

from __future__ import annotations

from rewrite_rules.cases import call_cases
from rewrite_rules.nn_dropout import scaling_check
from rewrite_rules.nn_shared import INPLACE, P, bool_literal, fn_cases
from rewrite_rules.spec import ApiRule, Example, Unconvertible


_ONES = {"dropout": "ones(2000)", "dropout1d": "ones(4, 20, 25)", "dropout2d": "ones(4, 20, 5, 5)",
         "dropout3d": "ones(4, 20, 2, 5, 5)"}
_LAYER = {"dropout": "Dropout", "dropout1d": "Dropout1d", "dropout2d": "Dropout2d", "dropout3d": "Dropout3d"}


def _training(name: str) -> tuple[Example, ...]:
    """training=True (the default) with p>0: random in both, compared structurally."""
    cases = [Example(f"y = F.{name}(x, 0.3)\n" + scaling_check(_LAYER[name]), inputs={"x": _ONES[name]},
                     compare="structural",
                     notes="the dropped entries are not compared; compared: every output is 0 or 1/(1-p) "
                           "(whole channels for dropout1d/2d/3d) and some are dropped")]
    if name == "dropout":
        cases.append(Example("y = F.dropout(x, p=0.3, training=True)\nresult = (y == 0).float().mean().item()",
                             inputs={"x": "ones(20000)"}, atol=0.02, compare="structural",
                             notes="the dropped entries are not compared; compared: the share of zeros "
                                   "(20000 entries), within 4 standard errors"))
    return tuple(cases)


def _dropout(name: str, x: str, extra=()) -> ApiRule:
    inputs = {"x": x}
    return ApiRule(
        f"torch.nn.functional.{name}",
        f"mindspore.ops.{name}",
        signature="input, p=0.5, training=True, inplace=False",
        args={"inplace": INPLACE},
        positional=3,
        examples=(
            *extra,
            *fn_cases(name, [P("input", "x"), P("p", "0.3"), P("training", "False"),
                             P("inplace", "False", default=True)], inputs, notes="training=False: identity"),
            *fn_cases(name, [P("input", "x"), P("p", "0.0"), P("training", "True", default=True)], inputs,
                      shapes=("positional", "keywords", "defaults"), notes="p=0: identity"),
            # p means "drop": with p=0.9 most entries are zeroed
            *call_cases(f"result = (F.{name}({{args}}) == 0).sum().item() > 0.5 * x.numel()",
                        [P("input", "x"), P("p", "0.9")], {"x": _ONES[name]}, shapes=("positional",), notes="drop rate"),
            *_training(name),
        ),
    )


def _alpha_dropout(call, ctx):
    """Only the identity case (training=False, torch's default) has a MindSpore form."""
    known, training = bool_literal(call, "training")
    if not known or training:
        raise Unconvertible("MindSpore has no alpha dropout; only training=False (identity) converts")
    call.result = call.get("input")


def _alpha(name: str) -> ApiRule:
    return ApiRule(
        f"torch.nn.functional.{name}",
        None,
        signature="input, p=0.5, training=False, inplace=False",
        hook=_alpha_dropout,
        notes="with training=False (the default) the call is the identity; MindSpore has no alpha dropout",
        examples=(
            *fn_cases(name, [P("input", "x"), P("p", "0.2", default=True), P("training", "False", default=True)],
                      {"x": "randn(3, 4)"}, shapes=("positional", "keywords", "reordered", "defaults")),
            Example(f"y = F.{name}(x, 0.2, True)", marked="no alpha dropout"),
            Example(f"y = F.{name}(x, 0.2, training)", marked="no alpha dropout"),
        ),
    )


RULES = [
    _dropout("dropout", "randn(4, 5)",
             extra=(Example("y = F.dropout(x, 0.1, self.training)", "y = ops.dropout(x, 0.1, self.training)"),)),
    _dropout("dropout1d", "randn(2, 3, 5)"),
    _dropout("dropout2d", "randn(2, 3, 4, 5)"),
    _dropout("dropout3d", "randn(2, 3, 2, 4, 5)"),
    _alpha("alpha_dropout"),
    _alpha("feature_alpha_dropout"),
]
