"""Training patterns that cannot be rewritten faithfully: they are marked with
a reason that names the pattern (AMP, custom autograd Functions, functional
torch.autograd calls). The training step itself is structural
(transpiler/structural/training_loop.py)."""

from __future__ import annotations

from rewrite_rules.spec import ApiRule, AttributeRule, Example

_AUTOCAST = (
    "AMP autocast: MindSpore sets mixed precision on the network (mindspore.amp.auto_mixed_precision) "
    "instead of a context; convert by hand"
)
_SCALER = (
    "AMP GradScaler: MindSpore scales the loss with mindspore.amp.DynamicLossScaler inside the training step; "
    "convert by hand"
)
_FUNCTION = (
    "custom autograd Function (forward/backward): write a Cell with a bprop method or use ops.custom_vjp; "
    "convert by hand"
)

RULES = [
    ApiRule("torch.autocast", None, notes=_AUTOCAST,
            aliases=("torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast",
                     "torch.amp.autocast_mode.autocast"),
            examples=(Example('with torch.autocast("cuda"):\n    y = model(x)', marked="AMP autocast"),)),
    ApiRule("torch.amp.GradScaler", None, notes=_SCALER, aliases=("torch.cuda.amp.GradScaler",),
            examples=(Example("scaler = torch.cuda.amp.GradScaler()", marked="AMP GradScaler"),)),
    AttributeRule("torch.autograd.Function", None, reason=_FUNCTION,
                  examples=(Example("class Square(torch.autograd.Function):\n    pass", marked="custom autograd Function"),)),
    ApiRule("torch.autograd.grad", None,
            notes="torch.autograd.grad: use mindspore.grad / mindspore.value_and_grad on a function; convert by hand"),
    ApiRule("torch.autograd.backward", None,
            notes="torch.autograd.backward: use mindspore.value_and_grad on a function; convert by hand"),
]
