"""Collects the rules of every module in this package (pyupgrade style: a
feature per file, found by walking the package) into lookup tables, with the
rules of installed packages (entry point group ``ms_migrate.rules``) and of a
project's own rule files (``[tool.ms-migrate] rules``, ``--rules``)."""

from __future__ import annotations

import hashlib
import importlib
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import MutableMapping

from rewrite_rules.rule_index import LazyTable, Pending, rule_index, tree_digest
from rewrite_rules.spec import ApiRule, AttributeRule, MethodRule, PropertyRule


@dataclass
class RuleSet:
    """Rules by API name. ms-migrate's own are looked up in an index and their
    modules imported on first use (``rule_index``): ``calls``, ``attributes``
    and ``methods`` behave as dicts whose values load when read."""

    calls: MutableMapping[str, ApiRule] = field(default_factory=dict)
    attributes: MutableMapping[str, AttributeRule] = field(default_factory=dict)
    methods: MutableMapping[str, list[MethodRule]] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)  # rule -> defining module
    extra_digest: str = ""  # of the rules loaded from outside this package
    files: tuple[str, ...] = ()  # the project rule files loaded (see load_rules)

    def method_rule(self, name: str, n_positional: int, receiver_kinds=None) -> MethodRule | None:
        for rule in self.methods.get(name, ()):
            if isinstance(rule, PropertyRule):
                continue
            lo, hi = rule.arity
            if lo <= n_positional <= hi and (receiver_kinds is None or rule.receiver in receiver_kinds):
                return rule
        return None

    def property_rule(self, name: str) -> PropertyRule | None:
        """The rule for reading tensor attribute ``name`` (``x.real``), if any."""
        return next((r for r in self.methods.get(name, ()) if isinstance(r, PropertyRule)), None)

    @cached_property
    def property_names(self) -> frozenset[str]:
        return frozenset(name for name in self.methods if _facts_or(self.methods, name, _has_property))

    @cached_property
    def attribute_read_names(self) -> frozenset[str]:
        """The attributes some layer's rule maps (``ApiRule.attribute_reads``)."""
        names: set[str] = set()
        for name in self.calls:
            names.update(_facts_or(self.calls, name, lambda rule: rule.attribute_reads) or ())
        return frozenset(names)

    @property
    def version(self) -> str:
        """A digest of the rule set, for cache invalidation."""
        return _rules_digest() + self.extra_digest

    @cached_property
    def rule_names(self) -> frozenset[str]:
        """Names outside torch that rules convert (a project's own or third-party layers)."""
        from rewrite_rules.api import is_torch_name  # lazily: the API imports the engine, which imports the registry

        return frozenset(name for name in (*self.calls, *self.attributes) if not is_torch_name(name))

    @cached_property
    def rule_roots(self) -> frozenset[str]:
        """The top-level packages of ``rule_names``: a file that mentions none of
        them nor torch has nothing to convert."""
        return frozenset(name.split(".", 1)[0] for name in self.rule_names)

    def api_names(self) -> dict[str, list]:
        """Every torch API a rule handles -> its rules (a method name may have
        several, by arity). Methods are named by receiver: torch.Tensor.X,
        torch.nn.Module.X, torch.optim.Optimizer.X, or ``X()`` for any receiver."""
        names: dict[str, list] = {}
        for table in (self.calls, self.attributes):
            for name, rule in table.items():
                if name != rule.torch and name.startswith("torch.nn.modules."):
                    continue  # a layer's module path (torch.nn.modules.activation.ReLU): torch.nn.ReLU itself
                names.setdefault(name, []).append(rule)
        for rules in self.methods.values():
            for rule in rules:
                names.setdefault(method_api_name(rule), []).append(rule)
        return names

    def api_count(self, include_marked: bool = False) -> int:
        """Distinct torch APIs that convert (rules that only ever mark, such as a
        target-less ApiRule without a hook, count only with include_marked)."""
        return sum(1 for rules in self.api_names().values() if include_marked or any(converts(r) for r in rules))


def method_api_name(rule: MethodRule) -> str:
    if isinstance(rule, PropertyRule) and rule.api:
        return rule.api
    if rule.owner:
        return rule.torch
    prefix = {"tensor": "torch.Tensor", "cell": "torch.nn.Module", "optimizer": "torch.optim.Optimizer"}
    if rule.receiver in prefix:
        return f"{prefix[rule.receiver]}.{rule.name}"
    return f"{rule.name}()"


def converts(rule) -> bool:
    """False for rules that can only mark (no target and no hook)."""
    if isinstance(rule, MethodRule):
        return rule.hook is not None or rule.rename is not None
    if isinstance(rule, ApiRule):
        return rule.target is not None or rule.hook is not None
    return rule.target is not None


def _facts_or(table, name: str, fact):
    """What the index knows of an entry not loaded yet, else ``fact(value)``."""
    pending = table.pending(name) if isinstance(table, LazyTable) else None
    return pending.facts if pending is not None else fact(table[name])


def _has_property(rules) -> bool:
    return any(isinstance(r, PropertyRule) for r in rules)


def load_rules(files: tuple[str, ...] = ()) -> RuleSet:
    """ms-migrate's rules, those of installed packages (entry points) and those
    of the project rule ``files``; raises RuleLoadError naming a file that
    cannot be used. A user rule for an API ms-migrate has a rule for replaces it.
    Loaded once per process and set of files, again when a file changes."""
    if not files:
        return _with_plugins()
    from rewrite_rules.user_rules import file_stamp

    return _load_rules(tuple((path, file_stamp(path)) for path in files))


@lru_cache(maxsize=8)
def _load_rules(stamped: tuple[tuple[str, object], ...]) -> RuleSet:
    from rewrite_rules.user_rules import load_rule_file

    files = [path for path, _ in stamped]

    rules = _copy(_with_plugins())
    digest = hashlib.sha256(rules.extra_digest.encode())
    own: dict[str, str] = {}
    for path in files:
        module, content = load_rule_file(path)
        digest.update(content)
        _add_user_rules(rules, module, path, own)
    rules.extra_digest = digest.hexdigest()[:16]
    rules.files = tuple(files)
    return rules


@lru_cache(maxsize=1)
def _builtin() -> RuleSet:
    """ms-migrate's own rules, each module imported when one of its rules is first read."""
    index = rule_index()
    modules = index.modules

    def where(positions) -> tuple[str, ...]:
        return tuple(modules[p] for p in positions)

    calls = {name: Pending(where((p,)), index.attribute_reads.get(name, ())) for name, p in index.calls.items()}
    attributes = {name: Pending(where((p,))) for name, p in index.attributes.items()}
    properties = set(index.properties)
    methods = {name: Pending(where(ps), name in properties) for name, ps in index.methods.items()}
    return RuleSet(LazyTable(calls, _load_call), LazyTable(attributes, _load_attribute),
                   LazyTable(methods, _load_methods), {key: modules[p] for key, p in index.origins.items()})


def _load_call(name: str, where: tuple[str, ...]) -> ApiRule:
    return _rules_by_name(where[0])[0][name]


def _load_attribute(name: str, where: tuple[str, ...]) -> AttributeRule:
    return _rules_by_name(where[0])[1][name]


def _load_methods(name: str, where: tuple[str, ...]) -> list[MethodRule]:
    return [rule for module in where for rule in _rules_by_name(module)[2][name]]


@lru_cache(maxsize=None)
def _rules_by_name(module_name: str) -> tuple[dict, dict, dict]:
    """The RULES of a rule module by name: (calls, attributes, methods)."""
    calls, attributes, methods = {}, {}, {}
    for rule in importlib.import_module(module_name).RULES:
        if isinstance(rule, ApiRule):
            calls.update(dict.fromkeys(rule.all_names(), rule))
        elif isinstance(rule, AttributeRule):
            attributes.update(dict.fromkeys(rule.all_names(), rule))
        else:
            methods.setdefault(rule.name, []).append(rule)
    return calls, attributes, methods


@lru_cache(maxsize=1)
def _with_plugins() -> RuleSet:
    """The built-in rules plus those installed packages ship (entry points)."""
    from rewrite_rules.user_rules import plugin_modules

    plugins = plugin_modules()
    if not plugins:
        return _builtin()
    rules = _copy(_builtin())
    digest = hashlib.sha256()
    own: dict[str, str] = {}
    for module, origin, content in plugins:
        digest.update(content)
        _add_user_rules(rules, module, origin, own)
    rules.extra_digest = digest.hexdigest()[:16]
    return rules


def _copy(rules: RuleSet) -> RuleSet:
    return RuleSet(rules.calls.copy(), rules.attributes.copy(), rules.methods.copy(), dict(rules.modules),
                   rules.extra_digest)


def _add_user_rules(rules: RuleSet, module, origin: str, own: dict[str, str]) -> None:
    """Add the RULES of a module from outside this package: each replaces ms-migrate's
    rule for the same API; two such modules declaring the same API are an error."""
    from rewrite_rules.user_rules import RuleLoadError, rules_of

    for rule in rules_of(module, origin):
        names = rule.all_names() if isinstance(rule, (ApiRule, AttributeRule)) else (f"method:{rule.name}:{rule.receiver}",)
        for name in names:
            if name in own:
                raise RuleLoadError(f"{origin}: a second rule for {name.removeprefix('method:')} (also in {own[name]})")
            own[name] = origin
            if isinstance(rule, ApiRule):
                rules.calls.pop(name, None)
            elif isinstance(rule, AttributeRule):
                rules.attributes.pop(name, None)
            else:
                rules.methods[rule.name] = [r for r in rules.methods.get(rule.name, ()) if r.receiver != rule.receiver]
        _add(rules, rule, origin)


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


def _rules_digest() -> str:
    import rewrite_rules

    return tree_digest(rewrite_rules)
