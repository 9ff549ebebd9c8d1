"""torch.nn.functional dropout -> mindspore.ops dropout.

Same parameter meaning (p = drop probability, measured) and the same
``training=True`` default; ``inplace=`` is dropped (same value); ``p`` is
written as a float (``ops.dropout`` and ``ops.dropout1d`` refuse an int). The
execution cases compare training=False (identity), p=0, and training with
p>0, where the harness replays torch's mask to MindSpore.
"""

from __future__ import annotations

from rewrite_rules.cases import call_cases
from rewrite_rules.nn.float_args import as_float
from rewrite_rules.nn.shared import INPLACE, P, bool_literal, fn_cases
from rewrite_rules.api import ApiRule, Arg, Example, Unconvertible


_ONES = {"dropout": "ones(2000)", "dropout1d": "ones(4, 20, 25)", "dropout2d": "ones(4, 20, 5, 5)",
         "dropout3d": "ones(4, 20, 2, 5, 5)"}


def _dropout(name: str, x: str, extra=()) -> ApiRule:
    inputs = {"x": x}
    return ApiRule(
        f"torch.nn.functional.{name}",
        f"mindspore.ops.{name}",
        signature="input, p=0.5, training=True, inplace=False",
        args={"p": Arg(value=as_float), "inplace": INPLACE},
        positional=3,
        examples=(
            *extra,
            *fn_cases(name, [P("input", "x"), P("p", "0.3"), P("training", "False"),
                             P("inplace", "False", default=True)], inputs, notes="training=False: identity"),
            *fn_cases(name, [P("input", "x"), P("p", "0.0"), P("training", "True", default=True)], inputs,
                      shapes=("positional", "keywords", "defaults"), notes="p=0: identity"),
            # an int p, as research code writes it (F.dropout(x, 0)), and one held in a variable
            *fn_cases(name, [P("input", "x"), P("p", "0")], inputs, shapes=("positional", "variables"), notes="int_p"),
            # p means "drop": with p=0.9 most entries are zeroed
            *call_cases(f"result = (F.{name}({{args}}) == 0).sum().item() > 0.5 * x.numel()",
                        [P("input", "x"), P("p", "0.9")], {"x": _ONES[name]}, shapes=("positional",), notes="drop rate"),
            # training with p>0: torch's mask is replayed, so the kept entries and their 1/(1-p) scaling compare
            *fn_cases(name, [P("input", "x"), P("p", "0.3"), P("training", "True", default=True)], inputs,
                      shapes=("positional", "keywords", "defaults"), notes="training: mask replayed"),
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
