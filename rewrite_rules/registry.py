"""Collects the rules of every module in this package (pyupgrade style: a
feature per file, found by walking the package) into lookup tables."""

from __future__ import annotations

import hashlib
import importlib
import pkgutil
from dataclasses import dataclass, field
from functools import lru_cache

from rewrite_rules.spec import ApiRule, AttributeRule, MethodRule

_NOT_RULE_MODULES = {"spec", "registry", "helpers", "cases", "tensor_methods_data"}


@dataclass
class RuleSet:
    calls: dict[str, ApiRule] = field(default_factory=dict)
    attributes: dict[str, AttributeRule] = field(default_factory=dict)
    methods: dict[str, list[MethodRule]] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)  # rule -> defining module

    def method_rule(self, name: str, n_positional: int, receiver_kinds=None) -> MethodRule | None:
        for rule in self.methods.get(name, ()):
            lo, hi = rule.arity
            if lo <= n_positional <= hi and (receiver_kinds is None or rule.receiver in receiver_kinds):
                return rule
        return None

    @property
    def version(self) -> str:
        """A digest of the rule set, for cache invalidation."""
        return _rules_digest()

    def api_count(self) -> int:
        names = set(self.calls) | set(self.attributes)
        names |= {r.torch for rules in self.methods.values() for r in rules}
        return len(names)


def _rule_modules():
    import rewrite_rules

    for info in pkgutil.walk_packages(rewrite_rules.__path__, "rewrite_rules."):
        short = info.name.rsplit(".", 1)[-1]
        if short.startswith("_") or short in _NOT_RULE_MODULES:
            continue
        yield importlib.import_module(info.name)


@lru_cache(maxsize=1)
def load_rules() -> RuleSet:
    rules = RuleSet()
    for module in _rule_modules():
        for rule in getattr(module, "RULES", ()):
            _add(rules, rule, module.__name__)
    return rules


def _add(rules: RuleSet, rule, origin: str) -> None:
    if isinstance(rule, ApiRule):
        for name in rule.all_names():
            if name in rules.calls:
                raise ValueError(f"duplicate rule for {name} in {origin} and {rules.modules[name]}")
            rules.calls[name] = rule
            rules.modules[name] = origin
    elif isinstance(rule, AttributeRule):
        for name in rule.all_names():
            if name in rules.attributes:
                raise ValueError(f"duplicate attribute rule for {name} in {origin}")
            rules.attributes[name] = rule
            rules.modules[name] = origin
    elif isinstance(rule, MethodRule):
        rules.methods.setdefault(rule.name, []).append(rule)
        rules.modules[f"method:{rule.name}:{rule.receiver}"] = origin
    else:
        raise TypeError(f"{origin}: not a rule: {rule!r}")


@lru_cache(maxsize=1)
def _rules_digest() -> str:
    digest = hashlib.sha256()
    for module in sorted(_rule_modules(), key=lambda m: m.__name__):
        path = getattr(module, "__file__", None)
        if path:
            with open(path, "rb") as handle:
                digest.update(handle.read())
    import rewrite_rules.spec as spec

    with open(spec.__file__, "rb") as handle:
        digest.update(handle.read())
    return digest.hexdigest()[:16]
