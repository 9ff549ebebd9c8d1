"""TorchScript and torch.compile."""

from __future__ import annotations

from typing import Iterator

from transpiler.analyze.facts import Site
from transpiler.analyze.findings import CheckContext, Checker


class TorchJit(Checker):
    kind = "torch-jit"
    family = "jit"
    why = "TorchScript (torch.jit.script/trace, ScriptModule) and torch.compile have no MindSpore counterpart; " \
        "MindSpore compiles with GRAPH_MODE or @mindspore.jit, whose supported Python subset differs."
    fix = "Remove torch.jit / torch.compile; run in PyNative first, then enable mindspore.jit on construct (or " \
        "set_context(mode=GRAPH_MODE)); export deployable models with mindspore.export (MindIR)."
    triggers = (
        "@torch.jit.script\ndef f(x):\n    return x",
        "m = torch.jit.trace(model, x)",
        "m = torch.compile(model)",
        "class M(nn.Module):\n    @torch.jit.ignore\n    def helper(self):\n        pass",
    )
    passes = (
        "def f(x):\n    return x",
        "m = model",
    )

    def check(self, ctx: CheckContext) -> Iterator[Site]:
        for site, _ in ctx.references(("torch.jit", "torch.compile", "torch._dynamo")):
            yield site
