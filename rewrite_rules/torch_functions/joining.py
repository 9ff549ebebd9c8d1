"""torch.cat/concat/concatenate/stack/flatten/matmul: dim-taking tensor functions."""

from __future__ import annotations

from rewrite_rules.cases import P
from rewrite_rules.helpers import OUT
from rewrite_rules.api import Arg, Example
from rewrite_rules.torch_functions.builders import IN, case, fn, ms

AB = {"a": "randn(2, 3)", "b": "randn(2, 3)"}
_TENSORS = P("tensors", "[a, b]")


def _joined(name, target, dim_name="dim", examples=()):
    return fn(
        f"torch.{name}",
        ms(target),
        f"tensors, {dim_name}=0, *, out=None",
        args={dim_name: "axis", "out": OUT},
        params=[_TENSORS, P(dim_name, "1", default=True)],
        inputs=AB,
        positional=2,
        extra=(*examples, case(f"result = torch.{name}((a, b), -1)", AB)),
    )


RULES = [
    _joined(
        "cat",
        "cat",
        examples=(
            Example("y = torch.cat([a, b], dim=1)", "y = ops.cat([a, b], axis=1)"),
            Example("y = torch.cat([a, torch.zeros(2, 3)])", "y = ops.cat([a, ops.zeros((2, 3))])"),
            case("result = torch.cat([a, torch.zeros(2, 3)])", AB),
        ),
    ),
    _joined("concat", "cat"),
    _joined("concatenate", "cat", dim_name="axis"),
    _joined("stack", "stack", examples=(Example("y = torch.stack((a, b), 0)", "y = ops.stack((a, b), 0)"),)),
    fn(
        "torch.flatten",
        signature="input, start_dim=0, end_dim=-1",
        args={"start_dim": Arg(explicit=True)},
        positional=1,
        params=[IN, P("start_dim", "1", default=True), P("end_dim", "2", default=True)],
        inputs={"x": "randn(2, 3, 4, 5)"},
        notes="start_dim is keyword-only in MindSpore and defaults to 1 there (0 in torch).",
        extra=(
            Example("y = torch.flatten(x, 1)", "y = ops.flatten(x, start_dim=1)"),
            Example("y = torch.flatten(x)", "y = ops.flatten(x, start_dim=0)"),
        ),
    ),
    fn(
        "torch.matmul",
        signature="input, other, *, out=None",
        params=[IN, P("other", "y")],
        inputs={"x": "randn(2, 3, 4)", "y": "randn(4, 5)"},
        rtol=1e-4,
        atol=1e-5,
        extra=(
            Example("y = torch.matmul(a, b)", "y = ops.matmul(a, b)"),
            case("result = torch.matmul(u, v)", {"u": "randn(4)", "v": "randn(4)"}, rtol=1e-4, atol=1e-5),
        ),
    ),
]
