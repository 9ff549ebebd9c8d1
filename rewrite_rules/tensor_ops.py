"""torch.cat/stack/flatten/matmul: dim-taking tensor functions."""

from __future__ import annotations

from rewrite_rules.helpers import OUT
from rewrite_rules.spec import ApiRule, Arg, Example

RULES = [
    ApiRule(
        "torch.cat",
        "mindspore.ops.cat",
        signature="tensors, dim=0, *, out=None",
        args={"dim": "axis", "out": OUT},
        positional=2,
        aliases=("torch.concat", "torch.concatenate"),
        examples=(
            Example("y = torch.cat([a, b], dim=1)", "y = ops.cat([a, b], axis=1)"),
            Example("y = torch.cat([a, torch.zeros(2, 3)])", "y = ops.cat([a, ops.zeros((2, 3))])"),
        ),
    ),
    ApiRule(
        "torch.stack",
        "mindspore.ops.stack",
        signature="tensors, dim=0, *, out=None",
        args={"dim": "axis", "out": OUT},
        positional=2,
        examples=(Example("y = torch.stack((a, b), 0)", "y = ops.stack((a, b), 0)"),),
    ),
    ApiRule(
        "torch.flatten",
        "mindspore.ops.flatten",
        signature="input, start_dim=0, end_dim=-1",
        args={"start_dim": Arg(explicit=True)},
        positional=1,
        notes="start_dim is keyword-only in MindSpore and defaults to 1 there (0 in torch).",
        examples=(Example("y = torch.flatten(x, 1)", "y = ops.flatten(x, start_dim=1)"),
                  Example("y = torch.flatten(x)", "y = ops.flatten(x, start_dim=0)")),
    ),
    ApiRule(
        "torch.matmul",
        "mindspore.ops.matmul",
        signature="input, other, *, out=None",
        args={"out": OUT},
        examples=(Example("y = torch.matmul(a, b)", "y = ops.matmul(a, b)"),),
    ),
]
