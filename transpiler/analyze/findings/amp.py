"""Automatic mixed precision."""

from __future__ import annotations

from typing import Iterator

from transpiler.analyze.facts import Site
from transpiler.analyze.findings import CheckContext, Checker


class MixedPrecision(Checker):
    kind = "amp"
    family = "amp"
    why = "torch.autocast / GradScaler change precision per op at run time; MindSpore casts the network " \
        "(mindspore.amp.auto_mixed_precision with levels O1/O2/O3) and scales losses with its own loss scalers."
    fix = "Wrap the network with mindspore.amp.auto_mixed_precision(net, 'O2') (or build_train_network); replace " \
        "GradScaler with mindspore.amp.DynamicLossScaler: scale the loss in the forward function, unscale the " \
        "grads, and skip the step when mindspore.amp.all_finite(grads) is False."
    triggers = (
        "scaler = torch.cuda.amp.GradScaler()",
        "with torch.autocast('cuda'):\n    y = x",
        "with torch.cuda.amp.autocast():\n    y = x",
        "from apex import amp\nmodel, opt = amp.initialize(model, opt)",
    )
    passes = (
        "y = x.float()",
        "with torch.no_grad():\n    y = x",
    )

    _NAMES = ("torch.cuda.amp", "torch.amp", "torch.autocast", "torch.cpu.amp", "apex.amp")

    def check(self, ctx: CheckContext) -> Iterator[Site]:
        for site, _ in ctx.references(self._NAMES):
            yield site
