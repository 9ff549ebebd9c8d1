"""Tensor creation: torch.zeros/ones/randn/arange/tensor."""

from __future__ import annotations

from rewrite_rules.helpers import FACTORY_ARGS, GENERATOR
from rewrite_rules.spec import ApiRule, Example

_FACTORY = "*size, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False"

RULES = [
    ApiRule(
        "torch.zeros",
        "mindspore.ops.zeros",
        signature=_FACTORY,
        args=FACTORY_ARGS,
        pack_varargs=True,
        examples=(
            Example("z = torch.zeros(2, 3)", "z = ops.zeros((2, 3))"),
            Example("z = torch.zeros((2, 3), dtype=torch.long)", "z = ops.zeros((2, 3), dtype=mindspore.int64)"),
        ),
    ),
    ApiRule(
        "torch.ones",
        "mindspore.ops.ones",
        signature=_FACTORY,
        args=FACTORY_ARGS,
        pack_varargs=True,
        examples=(Example("o = torch.ones(4)", "o = ops.ones(4)"),),
    ),
    ApiRule(
        "torch.randn",
        "mindspore.ops.randn",
        signature="*size, generator=None, out=None, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False",
        args={**FACTORY_ARGS, "generator": GENERATOR},
        examples=(Example("r = torch.randn(2, 3)", "r = ops.randn(2, 3)"),),
    ),
    ApiRule(
        "torch.arange",
        "mindspore.ops.arange",
        signature="start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None, requires_grad=False",
        args=FACTORY_ARGS,
        examples=(Example("a = torch.arange(10)", "a = ops.arange(10)"),),
    ),
    ApiRule(
        "torch.tensor",
        "mindspore.Tensor",
        signature="data, dtype=None, device=None, requires_grad=False, pin_memory=False",
        args=FACTORY_ARGS,
        positional=1,
        examples=(Example("t = torch.tensor([1.0, 2.0])", "t = mindspore.Tensor([1.0, 2.0])"),),
    ),
]
