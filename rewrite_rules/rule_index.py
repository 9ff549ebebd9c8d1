"""An index of ms-migrate's rules by name, so that a conversion imports only
the rule modules that define the APIs its file uses.

The index says, for every API name, which module defines its rule, plus the
few facts about rules that code reading *all* rules needs (which method names
are tensor properties, which attributes a layer's rule maps). It is built by
importing every rule module once, and kept where the converter says
(``store_index_in``: ms-migrate's user cache directory) under a digest of the
source of ``rewrite_rules`` and of the converter's code the rules use, so an
edited rule, a new module or a new release never reads a stale index. Where no
place is set or it cannot be written, the index is built in memory on each run.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import pkgutil
import tempfile
import time
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from functools import lru_cache

from rewrite_rules.spec import ApiRule, AttributeRule, MethodRule, PropertyRule

_FORMAT = 1  # bump when the index's layout changes
_UNUSED_FOR = 24 * 3600  # seconds after which the index of other sources is removed
# modules of the package that hold the rule model and shared helpers, not rules (names below the package)
_NOT_RULE_MODULES = {"spec", "api", "registry", "rule_index", "user_rules", "helpers", "cases", "tensor.methods_data"}


def rule_module_names() -> list[str]:
    """Every module of this package that may declare RULES, in the order the
    registry adds them (in subpackages too: the walk is recursive)."""
    import rewrite_rules

    names = []
    for info in pkgutil.walk_packages(rewrite_rules.__path__, "rewrite_rules."):
        inner = info.name.removeprefix("rewrite_rules.")
        if not (inner.rsplit(".", 1)[-1].startswith("_") or inner in _NOT_RULE_MODULES):
            names.append(info.name)
    return names


@dataclass
class RuleIndex:
    """Where each rule is defined (module names by position in ``modules``)."""

    modules: list[str] = field(default_factory=list)  # in the order the registry adds them
    calls: dict[str, int] = field(default_factory=dict)  # ApiRule name (or alias) -> module
    attributes: dict[str, int] = field(default_factory=dict)  # AttributeRule name (or alias) -> module
    methods: dict[str, list[int]] = field(default_factory=dict)  # method name -> modules with a rule for it
    origins: dict[str, int] = field(default_factory=dict)  # RuleSet.modules keys -> module
    properties: list[str] = field(default_factory=list)  # method names that have a PropertyRule
    attribute_reads: dict[str, list[str]] = field(default_factory=dict)  # ApiRule name -> its attribute_reads


def build_index(modules) -> RuleIndex:
    """The index of the rules of ``modules`` (imported), checking that no two
    rules claim the same API as the registry always has."""
    index = RuleIndex()
    for module in modules:
        rules = getattr(module, "RULES", ())
        if not rules:
            continue
        origin = module.__name__
        position = len(index.modules)
        index.modules.append(origin)
        for rule in rules:
            if isinstance(rule, ApiRule):
                for name in rule.all_names():
                    if name in index.calls:
                        raise ValueError(f"duplicate rule for {name} in {origin} and {index.modules[index.calls[name]]}")
                    index.calls[name] = index.origins[name] = position
                    if rule.attribute_reads:
                        index.attribute_reads[name] = list(rule.attribute_reads)
            elif isinstance(rule, AttributeRule):
                for name in rule.all_names():
                    if name in index.attributes:
                        raise ValueError(f"duplicate attribute rule for {name} in {origin}")
                    index.attributes[name] = index.origins[name] = position
            elif isinstance(rule, MethodRule):
                where = index.methods.setdefault(rule.name, [])
                if position not in where:
                    where.append(position)
                if isinstance(rule, PropertyRule) and rule.name not in index.properties:
                    index.properties.append(rule.name)
                index.origins[f"method:{rule.name}:{rule.receiver}"] = position
            else:
                raise TypeError(f"{origin}: not a rule: {rule!r}")
    return index


@lru_cache(maxsize=1)
def rule_index() -> RuleIndex:
    """The index of ms-migrate's own rules: read from the cache, else built and stored."""
    path = _index_path()
    if path is not None:
        try:
            with open(path, encoding="utf-8") as handle:
                stored = json.load(handle)
            if stored.keys() == RuleIndex.__dataclass_fields__.keys():
                return RuleIndex(**stored)
        except (OSError, ValueError, AttributeError):
            pass  # not there yet (or unreadable): build it
    index = build_index(importlib.import_module(name) for name in rule_module_names())
    if path is not None:
        _store(index, path)
    return index


# () -> (directory, digest of the converter's code): set by the converter (the
# dependency runs that way: this package never imports the pipeline)
_location = None


def store_index_in(location) -> None:
    """Keep the index in a file: ``location()`` gives the directory and a digest
    of the code outside this package that the rules use."""
    global _location
    _location = location
    rule_index.cache_clear()


def _index_path() -> str | None:
    if _location is None:
        return None
    try:
        directory, code_digest = _location()
    except Exception:  # noqa: BLE001 - no cache directory: build the index in memory
        return None
    return os.path.join(directory, f"{_FORMAT}-{source_digest(code_digest)}.json")


def _store(index: RuleIndex, path: str) -> None:
    """Write the index atomically; remove the indexes of other sources not
    written for a day (other checkouts may share the cache directory)."""
    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=directory, suffix=".tmp", delete=False, encoding="utf-8") as handle:
            json.dump(index.__dict__, handle)
        os.replace(handle.name, path)  # atomically: readers see the old index or the whole new one
        for name in os.listdir(directory):
            other = os.path.join(directory, name)
            if name.endswith(".json") and other != path and time.time() - os.stat(other).st_mtime > _UNUSED_FOR:
                os.unlink(other)
    except OSError:
        pass  # a read-only cache: the next run builds it again


def source_digest(code_digest: str) -> str:
    """A digest of the Python source of ``rewrite_rules``, followed by the converter's."""
    import rewrite_rules

    return tree_digest(rewrite_rules) + code_digest


@lru_cache(maxsize=4)
def tree_digest(package) -> str:
    """A digest of the Python source files below the directories of ``package``."""
    digest = hashlib.sha256()
    for directory, path in source_files(package):
        digest.update(os.path.relpath(path, directory).encode())
        with open(path, "rb") as handle:
            digest.update(handle.read())
    return digest.hexdigest()[:16]


def source_files(package):
    """(the package directory, the path) of each Python source file below the
    directories of ``package``, in a fixed order."""
    for directory in package.__path__:
        for root, dirs, files in os.walk(directory):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith(".py"):
                    yield directory, os.path.join(root, name)


class Pending:
    """A table entry not loaded yet: the modules that define it and what the
    index knows about it (``facts``)."""

    __slots__ = ("where", "facts")

    def __init__(self, where: tuple[str, ...], facts=None):
        self.where, self.facts = where, facts


class LazyTable(MutableMapping):
    """A name -> rule(s) mapping whose values are loaded on first lookup (by
    ``load(name, where)``); names, order and membership need no loading.
    Iterating over values or items loads them all."""

    def __init__(self, entries: dict, load):
        self._entries = entries  # name -> value, or Pending
        self._load = load

    def __getitem__(self, name):
        value = self._entries[name]
        if type(value) is Pending:
            value = self._entries[name] = self._load(name, value.where)
        return value

    def get(self, name, default=None):
        value = self._entries.get(name, default)
        if type(value) is Pending:
            value = self._entries[name] = self._load(name, value.where)
        return value

    def __contains__(self, name) -> bool:
        return name in self._entries

    def __iter__(self):
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __setitem__(self, name, value) -> None:
        self._entries[name] = value

    def __delitem__(self, name) -> None:
        del self._entries[name]

    def pending(self, name) -> Pending | None:
        """The entry of ``name`` when it is not loaded yet."""
        value = self._entries.get(name)
        return value if type(value) is Pending else None

    def copy(self) -> LazyTable:
        """A table that shares the loaded rules, with lists of its own."""
        return LazyTable({k: list(v) if isinstance(v, list) else v for k, v in self._entries.items()}, self._load)

    def __repr__(self) -> str:
        return f"LazyTable({len(self._entries)} names)"
