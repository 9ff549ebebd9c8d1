"""torch.nn.functional -> mindspore.ops."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.helpers import INPLACE
from rewrite_rules.spec import ApiRule, Drop, Example, Unconvertible, Unsupported


def _need_dim(call, ctx):
    dim = call.get("dim")
    if dim is None or (isinstance(dim, cst.Name) and dim.value == "None"):
        raise Unconvertible("dim not given: torch picks a legacy implicit dim, MindSpore uses -1; pass dim explicitly")


RULES = [
    ApiRule(
        "torch.nn.functional.relu",
        "mindspore.ops.relu",
        signature="input, inplace=False",
        args={"inplace": INPLACE},
        examples=(Example("y = F.relu(x)", "y = ops.relu(x)"),),
    ),
    ApiRule(
        "torch.nn.functional.softmax",
        "mindspore.ops.softmax",
        signature="input, dim=None, _stacklevel=3, dtype=None",
        args={"dim": "axis", "_stacklevel": Drop()},
        positional=2,
        hook=_need_dim,
        examples=(Example("y = F.softmax(x, dim=-1)", "y = ops.softmax(x, axis=-1)"),),
    ),
    ApiRule(
        "torch.nn.functional.log_softmax",
        "mindspore.ops.log_softmax",
        signature="input, dim=None, _stacklevel=3, dtype=None",
        args={"dim": "axis", "_stacklevel": Drop(), "dtype": Unsupported("dtype= is not supported; cast the input first")},
        positional=2,
        hook=_need_dim,
        examples=(Example("y = F.log_softmax(x, 1)", "y = ops.log_softmax(x, 1)"),),
    ),
    ApiRule(
        "torch.nn.functional.dropout",
        "mindspore.ops.dropout",
        signature="input, p=0.5, training=True, inplace=False",
        args={"inplace": INPLACE},
        positional=3,
        examples=(Example("y = F.dropout(x, 0.1, self.training)", "y = ops.dropout(x, 0.1, self.training)"),),
    ),
]
