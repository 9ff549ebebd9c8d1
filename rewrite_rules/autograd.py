"""Training patterns that cannot be rewritten faithfully: they are marked with
a reason that names the pattern (custom autograd Functions, functional
torch.autograd calls). The training step itself is structural
(transpiler/structural/training_loop.py); AMP is in amp.py."""

from __future__ import annotations

from rewrite_rules.api import ApiRule, AttributeRule, Example

_FUNCTION = (
    "custom autograd Function used other than as a base class (classes deriving from it become Cells "
    "with a bprop, see transpiler/structural/autograd_function.py); convert by hand"
)

RULES = [
    AttributeRule("torch.autograd.Function", None, reason=_FUNCTION, examples=(
        Example("class Square(torch.autograd.Function):\n    pass", marked="without both forward and backward"),
        Example("ok = isinstance(f, torch.autograd.Function)", marked="custom autograd Function"),
        Example("class Square(torch.autograd.Function):\n"
                "    @staticmethod\n    def forward(ctx, x):\n        ctx.save_for_backward(x)\n        return x * x\n\n"
                "    @staticmethod\n    def backward(ctx, grad):\n        (x,) = ctx.saved_tensors\n        return 2 * x * grad\n"
                "result = Square.apply(x)",
                "class Square(nn.Cell):\n"
                "    def construct(self, x):\n        self.saved_tensors = (x,)\n        return x * x\n\n"
                "    def bprop(self, x, out, grad):\n        (x,) = self.saved_tensors\n        return (2 * x * grad,)\n"
                "result = Square()(x)", inputs={"x": "randn(3)"}),
    )),
    ApiRule("torch.autograd.grad", None,
            notes="torch.autograd.grad: use mindspore.grad / mindspore.value_and_grad on a function; convert by hand"),
    ApiRule("torch.autograd.backward", None,
            notes="torch.autograd.backward: use mindspore.value_and_grad on a function; convert by hand"),
]
