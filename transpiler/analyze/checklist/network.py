"""Network structure: the nn.Module classes, their submodules and parameter
counts (estimated from the code here; the runner replaces the estimate with
the real count when the file can be imported)."""

from __future__ import annotations

import libcst as cst

from transpiler.analyze.checklist import item
from transpiler.analyze.facts import FileFacts
from transpiler.analyze.param_estimate import Estimator, submodule_calls


def extract(facts: FileFacts):
    estimator = Estimator(facts)
    for site in facts.classes:
        cls = site.node
        if cls.name.value not in facts.analysis.cell_classes:
            continue
        parts = []
        for call in submodule_calls(facts, cls):
            target = _target_of(facts, cls, call)
            callee = facts.callee(call) or facts.code(call.func)
            parts.append(f"{target}={callee.rsplit('.', 1)[-1]}")
        count, complete = estimator.of_class(cls.name.value)
        estimate = f"{count:,} parameters (from the code)" if complete else \
            (f"at least {count:,} parameters (from the code; some sizes unknown)" if count else "")
        detail = "; ".join(p for p in (", ".join(parts) if parts else "no submodules in __init__", estimate) if p)
        yield item(facts, "network", cls.name.value, detail, site.line, limit=400)


def _target_of(facts: FileFacts, cls: cst.ClassDef, call: cst.Call) -> str:
    for site in facts.assigns:
        if site.cls is cls and getattr(site.node, "value", None) is call:
            targets = site.node.targets if isinstance(site.node, cst.Assign) else [site.node]
            return facts.code(targets[0].target).removeprefix("self.")
    return "?"
