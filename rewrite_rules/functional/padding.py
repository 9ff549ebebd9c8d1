"""torch.nn.functional.pad -> mindspore.ops.pad: the same padding order and
modes ('constant', 'reflect', 'replicate', 'circular'; measured equal)."""

from __future__ import annotations

from rewrite_rules.nn.shared import P, fn_cases
from rewrite_rules.api import ApiRule

_X = {"x": "randn(2, 3, 4, 5)"}

RULES = [
    ApiRule(
        "torch.nn.functional.pad",
        "mindspore.ops.pad",
        signature="input, pad, mode='constant', value=None",
        args={"input": "input_x", "pad": "padding"},
        positional=4,
        examples=(
            *fn_cases("pad", [P("input", "x"), P("pad", "(1, 2, 0, 1)"), P("mode", "'constant'", default=True),
                              P("value", "0.5", default=True)], _X),
            *(
                case
                for mode in ("reflect", "replicate", "circular")
                for case in fn_cases("pad", [P("input", "x"), P("pad", "(1, 2, 2, 1)"), P("mode", f"'{mode}'")], _X,
                                     shapes=("positional", "keywords"))
            ),
            *fn_cases("pad", [P("input", "x"), P("pad", "(1, 0, 0, 1, 1, 1)")], _X, shapes=("positional",)),
        ),
    ),
]
