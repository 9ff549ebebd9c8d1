"""torch.broadcast_tensors: MindSpore has no function for it. The call goes
through a function written above the code: ``ops.broadcast_to`` of each
tensor to the shape ``numpy.broadcast_shapes`` gives for theirs."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.api import ApiRule, Example, code_of, define

_BROADCAST_TENSORS = '''
def {name}(*tensors):
    """torch.broadcast_tensors (written by ms-migrate)."""
    shape = BROADCAST_SHAPES(*(tuple(t.shape) for t in tensors))
    return tuple(BROADCAST_TO(t, shape) for t in tensors)
'''


def _broadcast_tensors(call, ctx):
    source = _BROADCAST_TENSORS.replace("BROADCAST_SHAPES", code_of(ctx.ref("numpy.broadcast_shapes")))
    function = define(ctx, "broadcast_tensors", source.replace("BROADCAST_TO", code_of(ctx.ref("mindspore.ops.broadcast_to"))))
    call.result = cst.Call(function, list(call.varargs))


_INPUTS = {"x": "randn(3, 1)", "y": "randn(1, 4)", "z": "randn(4)"}

RULES = [
    ApiRule(
        "torch.broadcast_tensors",
        None,
        signature="*tensors",
        hook=_broadcast_tensors,
        notes="a function written above the code: ops.broadcast_to of each tensor to numpy.broadcast_shapes of "
              "their shapes.",
        examples=(
            Example("a, b = torch.broadcast_tensors(x, y)\nresult = (a, b)", inputs=_INPUTS),
            Example("result = torch.broadcast_tensors(x, y, z)", inputs=_INPUTS),
            Example("pair = [x, z]\nresult = torch.broadcast_tensors(*pair)", inputs=_INPUTS, notes="unpacked"),
            Example("a, b = torch.broadcast_tensors(x, y.long())\nresult = (a, b)", inputs=_INPUTS,
                    notes="each keeps its dtype"),
        ),
    ),
]
