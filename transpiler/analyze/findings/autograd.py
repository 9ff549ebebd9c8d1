"""Higher-order gradients and custom autograd Functions."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from transpiler.analyze.facts import Site, keyword
from transpiler.analyze.findings import CheckContext, Checker


def _true(value: cst.BaseExpression | None) -> bool:
    return value is not None and not (isinstance(value, cst.Name) and value.value in ("False", "None"))


class SecondOrderGradient(Checker):
    kind = "second-order-grad"
    family = "autograd"
    why = "create_graph=True differentiates through a gradient (gradient penalty, meta-learning). MindSpore has " \
        "no tape: higher-order gradients are written as nested mindspore.grad calls on functions, and not every " \
        "op has a second derivative."
    fix = "Express the penalty as a function of the inputs, take the inner gradient with mindspore.grad inside " \
        "the forward function, and differentiate that function again with value_and_grad; test the ops you use."
    triggers = (
        "g = torch.autograd.grad(loss, x, create_graph=True)[0]\npenalty = ((g.norm(2, dim=1) - 1) ** 2).mean()",
        "loss.backward(create_graph=True)",
        "h = torch.autograd.functional.hessian(f, x)",
    )
    passes = (
        "g = torch.autograd.grad(loss, x)",
        "loss.backward()\nother.backward(create_graph=False)",
    )

    _HIGHER = {"torch.autograd.functional.hessian", "torch.autograd.functional.hvp", "torch.autograd.functional.vhp"}

    def check(self, ctx: CheckContext) -> Iterator[Site]:
        for site, qualified in ctx.torch_calls():
            if qualified in self._HIGHER:
                yield site
            elif qualified in ("torch.autograd.grad", "torch.autograd.backward"):
                if _true(keyword(site.node, "create_graph")):
                    yield site
        for site, _ in ctx.method_calls({"backward"}):
            if _true(keyword(site.node, "create_graph")):
                yield site


class CustomAutogradFunction(Checker):
    kind = "custom-autograd-function"
    family = "autograd"
    why = "torch.autograd.Function subclasses define forward/backward with ctx.save_for_backward; MindSpore has " \
        "no such class, so ms-migrate cannot convert them."
    fix = "Write a nn.Cell whose construct is the forward and whose bprop(self, *inputs, out, dout) returns the " \
        "input gradients (or use mindspore.ops.Custom with a registered bprop)."
    triggers = (
        "class Clip(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x\n"
        "    @staticmethod\n    def backward(ctx, g):\n        return g",
        "from torch.autograd import Function\nclass F2(Function):\n    pass",
    )
    passes = (
        "class M(nn.Module):\n    def forward(self, x):\n        return x",
        "class Function:\n    pass\nclass G(Function):\n    pass",
    )

    _BASES = {"torch.autograd.Function", "torch.autograd.function.Function", "torch.autograd.function.InplaceFunction"}

    def check(self, ctx: CheckContext) -> Iterator[Site]:
        for site in ctx.facts.classes:
            if any(ctx.facts.qualified(base.value) in self._BASES for base in site.node.bases):
                yield site
