"""Optimizer with its hyperparameters, learning-rate schedule, gradient clipping
and gradient accumulation."""

from __future__ import annotations

import libcst as cst

from transpiler.analyze.checklist import arguments_text, item
from transpiler.analyze.facts import FileFacts, method_name

_SCHEDULE_PREFIXES = ("torch.optim.lr_scheduler.", "transformers.get_", "transformers.optimization.get_",
                      "timm.scheduler.")
_CLIPPING = {"torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_value_", "torch.nn.utils.clip_grad_norm",
             "torch.nn.utils.clip_grad.clip_grad_norm_"}


def extract(facts: FileFacts):
    for site in facts.calls:
        qualified = facts.callee(site.node) or ""
        short = qualified.rsplit(".", 1)[-1]
        if qualified.startswith(_SCHEDULE_PREFIXES):
            yield item(facts, "lr schedule", qualified, arguments_text(facts, site.node, 1), site.line)
        elif qualified.startswith("torch.optim.") and short[:1].isupper() and ".swa_utils." not in qualified:
            yield item(facts, "optimizer", qualified, arguments_text(facts, site.node, 1) or "defaults", site.line)
        elif qualified.startswith("transformers.") and short in ("AdamW", "Adafactor"):
            yield item(facts, "optimizer", qualified, arguments_text(facts, site.node, 1), site.line)
        elif qualified in _CLIPPING:
            yield item(facts, "gradient clipping", qualified, arguments_text(facts, site.node, 1), site.line)
    yield from _accumulation(facts)


def _accumulation(facts: FileFacts):
    """optimizer.step() under ``if (i + 1) % accum == 0``: gradients are accumulated."""
    for site in facts.calls:
        if method_name(site.node) != "step" or site.node.args:
            continue
        for branch in site.branches:
            if isinstance(branch, cst.If) and _has_modulo(branch.test):
                yield item(facts, "gradient accumulation", f"{facts.code(site.node)} every N batches",
                           f"if {facts.code(branch.test)}", site.line)
                break


def _has_modulo(expr: cst.CSTNode) -> bool:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Modulo):
        return True
    return any(_has_modulo(child) for child in expr.children)
