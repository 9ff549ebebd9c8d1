"""Which conversion rule turned a torch layer into a given MindSpore Cell class.

The weight converter reads the weight declarations (``ApiRule.weights``) of
the rule that produced each Cell, so a rule that renames a layer also says how
its weights move. Rule names are resolved to classes by importing the module
part and reading attributes (no eval).
"""

from __future__ import annotations

import importlib

from rewrite_rules.registry import RuleSet, load_rules
from rewrite_rules.spec import ApiRule

_INDEXES: dict[int, tuple[RuleSet, tuple]] = {}


def resolve(qualified: str):
    """``"mindspore.nn.Conv1d"`` -> the object, or None if it does not exist."""
    parts = qualified.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def _is_class_name(qualified: str | None, package: str) -> bool:
    return bool(qualified) and qualified.startswith(package) and qualified.rsplit(".", 1)[-1][:1].isupper()


def _layer_rules(rules: RuleSet | None = None) -> tuple[dict[type, list[ApiRule]], dict[type, ApiRule]]:
    """(MindSpore Cell class -> rules targeting it, torch Module class -> rule),
    built once per rule set."""
    rules = rules or load_rules()
    cached = _INDEXES.get(id(rules))
    if cached is None or cached[0] is not rules:
        cached = _INDEXES[id(rules)] = (rules, _build_index(rules))
    return cached[1]


def _build_index(rules: RuleSet):
    import mindspore.nn

    try:
        import torch.nn
    except ImportError:  # converting numpy weights on a machine without torch
        torch = None

    by_target: dict[type, list[ApiRule]] = {}
    by_torch: dict[type, ApiRule] = {}
    seen: set[int] = set()
    for name, rule in rules.calls.items():
        # a project's own rules (rule files, packages) map its own layers: any package on either side
        own = not rules.modules.get(name, "").startswith("rewrite_rules.")
        if id(rule) in seen or not _is_class_name(rule.target, "" if own else "mindspore."):
            continue
        seen.add(id(rule))
        target = resolve(rule.target)
        if not (isinstance(target, type) and issubclass(target, mindspore.nn.Cell)):
            continue
        by_target.setdefault(target, []).append(rule)
        for alias in rule.all_names() if torch is not None else ():
            source = resolve(alias) if _is_class_name(alias, "" if own else "torch.") else None
            if isinstance(source, type) and issubclass(source, torch.nn.Module):
                by_torch[source] = rule
    return by_target, by_torch


def rules_for_cell(cell_class: type, rules: RuleSet | None = None) -> list[ApiRule]:
    """The rules whose target is ``cell_class`` or its nearest ancestor that is
    a rule target (a user class subclassing ``nn.Dense`` keeps Dense's weights)."""
    by_target, _ = _layer_rules(rules)
    for klass in cell_class.__mro__:
        if klass in by_target:
            return by_target[klass]
    return []


def rule_for_module(module_class: type, rules: RuleSet | None = None) -> ApiRule | None:
    """The rule that converts ``module_class`` (or its nearest torch ancestor)."""
    _, by_torch = _layer_rules(rules)
    for klass in module_class.__mro__:
        if klass in by_torch:
            return by_torch[klass]
    return None
