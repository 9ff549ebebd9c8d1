"""Training patterns that cannot be rewritten faithfully: they are marked with
a reason that names the pattern (custom autograd Functions, functional
torch.autograd calls). The training step itself is structural
(transpiler/structural/training_loop.py); AMP is in amp.py."""

from __future__ import annotations

from rewrite_rules.spec import ApiRule, AttributeRule, Example

_FUNCTION = (
    "custom autograd Function (forward/backward): write a Cell with a bprop method or use ops.custom_vjp; "
    "convert by hand"
)

RULES = [
    AttributeRule("torch.autograd.Function", None, reason=_FUNCTION,
                  examples=(Example("class Square(torch.autograd.Function):\n    pass", marked="custom autograd Function"),)),
    ApiRule("torch.autograd.grad", None,
            notes="torch.autograd.grad: use mindspore.grad / mindspore.value_and_grad on a function; convert by hand"),
    ApiRule("torch.autograd.backward", None,
            notes="torch.autograd.backward: use mindspore.value_and_grad on a function; convert by hand"),
]
