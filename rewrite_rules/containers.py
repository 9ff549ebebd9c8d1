"""Module containers and parameters: Sequential/ModuleList/ModuleDict -> their
Cell counterparts, nn.Parameter -> mindspore.Parameter."""

from __future__ import annotations

from rewrite_rules.spec import ApiRule, Example

RULES = [
    ApiRule(
        "torch.nn.Sequential",
        "mindspore.nn.SequentialCell",
        examples=(Example("net = nn.Sequential(nn.ReLU(), nn.Tanh())", "net = nn.SequentialCell(nn.ReLU(), nn.Tanh())"),),
    ),
    ApiRule("torch.nn.ModuleList", "mindspore.nn.CellList", signature="modules=None"),
    ApiRule("torch.nn.ModuleDict", "mindspore.nn.CellDict", signature="modules=None"),
    ApiRule(
        "torch.nn.Parameter",
        "mindspore.Parameter",
        signature="data=None, requires_grad=True",
        aliases=("torch.nn.parameter.Parameter",),
        examples=(
            Example("w = nn.Parameter(torch.zeros(3))", "w = mindspore.Parameter(ops.zeros(3))"),
        ),
    ),
]
