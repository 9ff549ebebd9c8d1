"""Epochs and batch size: literals, argparse defaults and loop bounds."""

from __future__ import annotations

import re

import libcst as cst

from transpiler.analyze.checklist import item
from transpiler.analyze.facts import FileFacts, keyword, method_name, positional
from transpiler.convert.engine import is_literal

_PATTERNS = {
    "epochs": re.compile(r"(^|_|-)(num_|n_|max_|total_)?epochs?$", re.IGNORECASE),
    "batch size": re.compile(r"(^|_|-)(batch_?size|bs|train_batch_size)$", re.IGNORECASE),
}


def _topic(name: str) -> str | None:
    name = name.lstrip("-").replace("-", "_").rsplit(".", 1)[-1]
    for topic, pattern in _PATTERNS.items():
        if pattern.search(name):
            return topic
    return None


def extract(facts: FileFacts):
    yield from _argparse(facts)
    yield from _assignments(facts)
    yield from _keywords(facts)
    yield from _loops(facts)
    yield from _parameter_defaults(facts)


def _parameter_defaults(facts: FileFacts):
    """``def train(epochs=10, batch_size=32)``."""
    for site in facts.functions:
        params = site.node.params
        for param in [*params.params, *params.kwonly_params]:
            if param.default is None or not is_literal(param.default):
                continue
            topic = _topic(param.name.value)
            if topic:
                yield item(facts, topic, f"{site.node.name.value}({param.name.value}=...)",
                           f"parameter default {facts.code(param.default)}", site.line)


def _argparse(facts: FileFacts):
    for site in facts.calls:
        call = site.node
        if method_name(call) != "add_argument":
            continue
        flags = [facts.code(a)[1:-1] for a in positional(call) if isinstance(a, cst.SimpleString)]
        topic = next((t for t in map(_topic, flags) if t), None)
        default = keyword(call, "default")
        if topic and default is not None:
            yield item(facts, topic, " / ".join(flags), f"argparse default {facts.code(default)}", site.line)


def _assignments(facts: FileFacts):
    for site in facts.assigns:
        node = site.node
        if node.value is None or not is_literal(node.value):
            continue
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        for target in targets:
            if isinstance(target, (cst.Name, cst.Attribute)):
                topic = _topic(facts.code(target))
                if topic:
                    yield item(facts, topic, facts.code(target), f"= {facts.code(node.value)}", site.line)


def _keywords(facts: FileFacts):
    for site in facts.calls:
        for arg in site.node.args:
            if arg.keyword is not None and is_literal(arg.value):
                topic = _topic(arg.keyword.value)
                if topic:
                    callee = facts.callee(site.node) or facts.code(site.node.func)
                    yield item(facts, topic, f"{callee}({arg.keyword.value}=...)",
                               f"{arg.keyword.value}={facts.code(arg.value)}", site.line)


def _loops(facts: FileFacts):
    """``for epoch in range(10)``."""
    for site in facts.loops:
        loop = site.node
        if not isinstance(loop.target, cst.Name) or "epoch" not in loop.target.value.lower():
            continue
        it = loop.iter
        if isinstance(it, cst.Call) and isinstance(it.func, cst.Name) and it.func.value == "range":
            bound = positional(it)[-1] if positional(it) else None
            if bound is not None:
                yield item(facts, "epochs", f"for {loop.target.value} in {facts.code(it)}",
                           f"loop bound {facts.code(bound)}", site.line)
