"""Losses, data augmentation transforms and weight initialisation."""

from __future__ import annotations

import libcst as cst

from transpiler.analyze.checklist import arguments_text, item
from transpiler.analyze.facts import FileFacts, method_name

_FUNCTIONAL_LOSSES = {"cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
                      "kl_div", "ctc_loss", "triplet_margin_loss", "cosine_embedding_loss", "margin_ranking_loss",
                      "hinge_embedding_loss", "poisson_nll_loss", "gaussian_nll_loss", "multi_margin_loss"}
_TRANSFORM_PREFIXES = ("torchvision.transforms.", "timm.data.", "albumentations.")
_INIT_METHODS = {"normal_", "uniform_", "zero_", "fill_", "constant_", "xavier_uniform_", "kaiming_normal_"}


def _is_loss(qualified: str) -> bool:
    if not qualified.startswith("torch.nn."):
        return False
    short = qualified.rsplit(".", 1)[-1]
    if qualified.startswith("torch.nn.functional."):
        return short.endswith("_loss") or short in _FUNCTIONAL_LOSSES
    return short.endswith("Loss")


def extract(facts: FileFacts):
    for site in facts.calls:
        call = site.node
        qualified = facts.callee(call) or ""
        if _is_loss(qualified):
            yield item(facts, "loss", qualified, arguments_text(facts, call), site.line)
        elif qualified.startswith(_TRANSFORM_PREFIXES) and qualified.rsplit(".", 1)[-1][:1].isupper():
            if qualified.rsplit(".", 1)[-1] not in ("Compose",):
                yield item(facts, "augmentation", qualified, arguments_text(facts, call), site.line)
        elif qualified.startswith("torch.nn.init."):
            yield item(facts, "initialisation", qualified, arguments_text(facts, call), site.line)
        elif method_name(call) in _INIT_METHODS and _is_weight(call.func.value):
            yield item(facts, "initialisation", f"{facts.code(call.func)}()", arguments_text(facts, call), site.line)
        elif method_name(call) == "apply" and len(call.args) == 1 and "init" in facts.code(call.args[0].value).lower():
            yield item(facts, "initialisation", f"{facts.code(call)}", "custom init function applied to submodules",
                       site.line)


def _is_weight(receiver: cst.BaseExpression) -> bool:
    """``m.weight``, ``self.fc.bias``, ``layer.weight.data``."""
    while isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
        receiver = receiver.value
    return isinstance(receiver, cst.Attribute) and receiver.attr.value in ("weight", "bias") or \
        isinstance(receiver, cst.Attribute) and receiver.attr.value.endswith(("_weight", "_bias"))
