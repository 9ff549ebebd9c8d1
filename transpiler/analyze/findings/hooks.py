"""Forward/backward hooks on modules and tensors."""

from __future__ import annotations

from typing import Iterator

from transpiler.analyze.facts import Site
from transpiler.analyze.findings import CheckContext, Checker


class Hook(Checker):
    kind = "hook"
    family = "hooks"
    why = "MindSpore runs Cell hooks (register_forward_hook, register_backward_hook ...) and tensor hooks only " \
        "in PyNative mode; in graph mode they are ignored or rejected, and backward-hook arguments differ."
    fix = "Keep the hook for PyNative debugging only, or return the intermediate values from construct; for " \
        "gradient hooks use mindspore.ops.HookBackward or a Cell bprop."
    triggers = (
        "h = model.register_forward_hook(fn)",
        "x = torch.randn(2)\nx.register_hook(lambda g: g * 2)",
        "handle = layer.register_full_backward_hook(fn)",
        "torch.nn.modules.module.register_module_forward_hook(fn)",
    )
    passes = (
        "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('b', torch.zeros(1))",
        "self.register_parameter('p', None)",
    )

    _METHODS = {"register_forward_hook", "register_forward_pre_hook", "register_backward_hook",
                "register_full_backward_hook", "register_full_backward_pre_hook", "register_hook",
                "register_post_accumulate_grad_hook", "register_state_dict_pre_hook", "register_load_state_dict_post_hook"}
    _FUNCTIONS = ("torch.nn.modules.module.register_module_forward_hook",
                  "torch.nn.modules.module.register_module_forward_pre_hook",
                  "torch.nn.modules.module.register_module_backward_hook",
                  "torch.nn.modules.module.register_module_full_backward_hook")

    def check(self, ctx: CheckContext) -> Iterator[Site]:
        for site, _ in ctx.method_calls(self._METHODS):
            yield site
        for site, _ in ctx.references(self._FUNCTIONS):
            yield site
