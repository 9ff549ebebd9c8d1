"""Mixed precision and exponential moving averages of weights."""

from __future__ import annotations

import re

import libcst as cst

from transpiler.analyze.checklist import arguments_text, item
from transpiler.analyze.facts import FileFacts, method_name

_AMP = ("torch.autocast", "torch.cuda.amp.", "torch.amp.", "torch.cpu.amp.", "apex.amp")
_HALF_DTYPES = {"torch.float16", "torch.half", "torch.bfloat16"}
_EMA_APIS = ("torch.optim.swa_utils.AveragedModel", "timm.utils.ModelEma", "timm.utils.ModelEmaV2",
             "timm.utils.ModelEmaV3", "timm.utils.model_ema.")
_EMA_NAME = re.compile(r"(^|[._])ema($|[._])|exponential_moving_average|moving_average", re.IGNORECASE)


def extract(facts: FileFacts):
    for site in facts.references:
        qualified = facts.qualified_of[id(site.node)]
        if qualified.startswith(_AMP):
            yield item(facts, "mixed precision", qualified, facts.code(site.node), site.line)
        elif qualified in _HALF_DTYPES:
            yield item(facts, "mixed precision", qualified, "half-precision dtype used", site.line)
        elif qualified.startswith(_EMA_APIS):
            yield item(facts, "EMA", qualified, "weight averaging", site.line)
    for site in facts.calls:
        if method_name(site.node) in ("half", "bfloat16") and not site.node.args:
            yield item(facts, "mixed precision", f".{method_name(site.node)}()", facts.code(site.node), site.line)
    for site in facts.assigns:
        node = site.node
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        for target in targets:
            if isinstance(target, (cst.Name, cst.Attribute)) and _EMA_NAME.search(facts.code(target)):
                value = facts.code(node.value) if node.value is not None else ""
                yield item(facts, "EMA", facts.code(target), f"= {value}", site.line)
    for site in facts.functions + facts.classes:
        if _EMA_NAME.search(site.node.name.value):
            yield item(facts, "EMA", site.node.name.value, "EMA helper defined here", site.line)
