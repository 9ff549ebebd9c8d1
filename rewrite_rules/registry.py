"""Collects the rules of every module in this package (pyupgrade style: a
feature per file, found by walking the package) into lookup tables, with the
rules of installed packages (entry point group ``ms_migrate.rules``) and of a
project's own rule files (``[tool.ms-migrate] rules``, ``--rules``)."""

from __future__ import annotations

import hashlib
import importlib
import pkgutil
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

from rewrite_rules.spec import ApiRule, AttributeRule, MethodRule, PropertyRule

# modules of the package that hold the rule model and shared helpers, not rules (names below the package)
_NOT_RULE_MODULES = {"spec", "api", "registry", "user_rules", "helpers", "cases", "tensor.methods_data"}


@dataclass
class RuleSet:
    calls: dict[str, ApiRule] = field(default_factory=dict)
    attributes: dict[str, AttributeRule] = field(default_factory=dict)
    methods: dict[str, list[MethodRule]] = field(default_factory=dict)
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

    def property_names(self) -> frozenset[str]:
        return frozenset(n for n, rs in self.methods.items() if any(isinstance(r, PropertyRule) for r in rs))

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
        for name, rule in self.calls.items():
            names.setdefault(name, []).append(rule)
        for name, rule in self.attributes.items():
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


def _rule_modules():
    import rewrite_rules

    for info in pkgutil.walk_packages(rewrite_rules.__path__, "rewrite_rules."):
        inner = info.name.removeprefix("rewrite_rules.")
        if inner.rsplit(".", 1)[-1].startswith("_") or inner in _NOT_RULE_MODULES:
            continue
        yield importlib.import_module(info.name)


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
    rules = RuleSet()
    for module in _rule_modules():
        for rule in getattr(module, "RULES", ()):
            _add(rules, rule, module.__name__)
    return rules


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
    return RuleSet(dict(rules.calls), dict(rules.attributes), {k: list(v) for k, v in rules.methods.items()},
                   dict(rules.modules), rules.extra_digest)


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
