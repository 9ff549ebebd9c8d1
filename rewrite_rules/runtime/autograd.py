"""torch.autograd outside the training step: custom autograd Functions (classes
deriving from ``torch.autograd.Function`` become Cells with a ``bprop``, see
transpiler/convert/structural/autograd_function.py; the Function used any other
way is marked), ``once_differentiable`` (dropped), ``Variable``, and the
functional calls (``torch.autograd.grad``), which are marked. The training step
itself is structural (transpiler/convert/structural/training_loop.py); AMP is in
amp.py; activation checkpointing in checkpoint.py."""

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
                "    def construct(self, x):\n        return x * x\n\n"
                "    def bprop(self, x, out, grad):\n        return (2 * x * grad,)\n"
                "result = Square()(x)", inputs={"x": "randn(3)"}),
        # what forward saves beyond its inputs and output stays on the Cell, for the same instance's bprop
        Example("class Exp(torch.autograd.Function):\n"
                "    @staticmethod\n    def forward(ctx, x, scale):\n        result = torch.exp(x) * scale\n"
                "        ctx.save_for_backward(result)\n        ctx.scale = scale\n        return result\n\n"
                "    @staticmethod\n    def backward(ctx, grad):\n        result, = ctx.saved_tensors\n"
                "        return grad * result, None\n"
                "class Norm(torch.autograd.Function):\n"
                "    @staticmethod\n    def forward(ctx, x):\n        norm = x.norm()\n"
                "        ctx.save_for_backward(x, norm)\n        return x / norm\n\n"
                "    @staticmethod\n    def backward(ctx, grad):\n        x, norm = ctx.saved_tensors\n"
                "        y = x / norm\n        return (grad - y * (grad * y).sum()) / norm\n"
                "result = Exp.apply(x, 2.0) + Norm.apply(x)",
                "class Exp(nn.Cell):\n"
                "    def construct(self, x, scale):\n        result = ops.exp(x) * scale\n        return result\n\n"
                "    def bprop(self, x, scale, out, grad):\n        result = out\n        return grad * result, None\n"
                "# graph mode cannot compile this Cell's bprop: it reads self.saved_tensors, set in construct "
                "(PyNative trains through it)\n"
                "class Norm(nn.Cell):\n"
                "    def construct(self, x):\n        norm = ops.vector_norm(x)\n        self.saved_tensors = (x, norm)\n"
                "        return x / norm\n\n"
                "    def bprop(self, x, out, grad):\n        x, norm = self.saved_tensors\n        y = x / norm\n"
                "        return ((grad - y * (grad * y).sum()) / norm,)\n"
                "result = Exp()(x, 2.0) + Norm()(x)", inputs={"x": "randn(3)"}),
        # *args on both sides, written as classmethods: bprop(self, *args) unpacks what it reads
        Example("class Scale(torch.autograd.Function):\n"
                "    @classmethod\n    def forward(cls, ctx, factor, *xs):\n        ctx.factor = factor\n"
                "        return tuple(x * factor for x in xs)\n\n"
                "    @classmethod\n    def backward(cls, ctx, *grads):\n"
                "        return (None, *[g * ctx.factor for g in grads])\n"
                "a, b = Scale.apply(3.0, x, x + 1)\nresult = a * b",
                "class Scale(nn.Cell):\n"
                "    def construct(self, factor, *xs):\n        return tuple(x * factor for x in xs)\n\n"
                "    def bprop(self, *args):\n        factor, grads = args[0], args[-1]\n"
                "        return (None, *[g * factor for g in grads])\n"
                "a, b = Scale()(3.0, x, x + 1)\nresult = a * b", inputs={"x": "randn(3)"}),
        Example("class Fn(torch.autograd.Function):\n"
                "    @staticmethod\n    def forward(ctx, x, **options):\n        return x\n\n"
                "    @staticmethod\n    def backward(ctx, grad):\n        return grad", marked="**kwargs"),
    )),
    ApiRule("torch.autograd.function.once_differentiable", None, no_op=True,
            notes="dropped: it only forbids differentiating the backward again; first-order gradients are the same",
            proven_by=("tests/rules/test_autograd_functions.py::test_values_and_gradients_match_torch",),
            examples=(Example("from torch.autograd.function import once_differentiable\n\n"
                              "class Double(torch.autograd.Function):\n"
                              "    @staticmethod\n    def forward(ctx, x):\n        return x * 2\n\n"
                              "    @staticmethod\n    @once_differentiable\n    def backward(ctx, grad):\n"
                              "        return grad * 2\nresult = Double.apply(x)",
                              "class Double(nn.Cell):\n"
                              "    def construct(self, x):\n        return x * 2\n\n"
                              "    def bprop(self, x, out, grad):\n        return (grad * 2,)\nresult = Double()(x)",
                              inputs={"x": "randn(3)"}),)),
    ApiRule("torch.autograd.grad", None,
            notes="torch.autograd.grad: use mindspore.grad / mindspore.value_and_grad on a function; convert by hand"),
    ApiRule("torch.autograd.backward", None,
            notes="torch.autograd.backward: use mindspore.value_and_grad on a function; convert by hand"),
]
