"""Training patterns that cannot be rewritten faithfully: they are marked with
a reason that names the pattern (custom autograd Functions, functional
torch.autograd calls). The training step itself is structural
(transpiler/convert/structural/training_loop.py); AMP is in amp.py."""

from __future__ import annotations

from rewrite_rules.api import ApiRule, AttributeRule, Example, Unconvertible

_FUNCTION = (
    "custom autograd Function used other than as a base class (classes deriving from it become Cells "
    "with a bprop, see transpiler/convert/structural/autograd_function.py); convert by hand"
)

def _variable(call, ctx):
    """A Variable is its tensor since torch 0.4; requires_grad=True asks for
    gradients with respect to it, which MindSpore takes with grad/value_and_grad."""
    if call.literal("requires_grad", False) is not False:
        raise Unconvertible("requires_grad=True: MindSpore takes gradients with respect to inputs with "
                            "mindspore.grad(fn, grad_position=...); convert by hand")
    call.result = call.get("data")


RULES = [
    ApiRule("torch.autograd.Variable", None, signature="data, requires_grad=False, volatile=False",
            aliases=("torch.autograd.variable.Variable",), hook=_variable,
            notes="the tensor itself (Variable and Tensor merged in torch 0.4); requires_grad=True is marked",
            examples=(Example("x = torch.autograd.Variable(torch.ones(2))", "x = ops.ones(2)"),
                      Example("result = torch.autograd.Variable(x) * 2", inputs={"x": "randn(3)"}),
                      Example("result = torch.autograd.Variable(x, volatile=True).sum()", inputs={"x": "randn(3)"}),
                      Example("v = torch.autograd.Variable(x, requires_grad=True)", marked="requires_grad=True"))),
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
