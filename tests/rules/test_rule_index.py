"""Rules load lazily through an index of rules by name (issue 13): the lazy
rule set holds exactly the rules of every rule module, a conversion imports
only the modules that define what its file uses, and the index, kept in the
cache directory under a digest of the source, is rebuilt when missing or
unreadable and never needed to be writable."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import types

from rewrite_rules import registry, rule_index
from rewrite_rules.spec import ApiRule, AttributeRule, PropertyRule
from transpiler.batch.cache import open_cache


def _every_rule_module():
    return [importlib.import_module(name) for name in rule_index.rule_module_names()]


def test_the_lazy_rule_set_has_the_rules_of_every_rule_module():
    calls, attributes, methods, origins = {}, {}, {}, {}
    for module in _every_rule_module():
        for rule in getattr(module, "RULES", ()):
            if isinstance(rule, ApiRule):
                calls.update(dict.fromkeys(rule.all_names(), rule))
                origins.update(dict.fromkeys(rule.all_names(), module.__name__))
            elif isinstance(rule, AttributeRule):
                attributes.update(dict.fromkeys(rule.all_names(), rule))
                origins.update(dict.fromkeys(rule.all_names(), module.__name__))
            else:
                methods.setdefault(rule.name, []).append(rule)
                origins[f"method:{rule.name}:{rule.receiver}"] = module.__name__
    lazy = registry._builtin()
    assert list(lazy.calls) == list(calls) and list(lazy.attributes) == list(attributes)
    assert list(lazy.methods) == list(methods) and lazy.modules == origins
    # read before the values load: from the index
    assert lazy.property_names == {n for n, rs in methods.items() if any(isinstance(r, PropertyRule) for r in rs)}
    assert lazy.attribute_read_names == {a for rule in calls.values() for a in rule.attribute_reads}
    assert all(lazy.calls[name] is rule for name, rule in calls.items())
    assert all(lazy.attributes[name] is rule for name, rule in attributes.items())
    assert all(lazy.methods[name] == rules for name, rules in methods.items())


def test_rule_modules_in_subpackages_are_indexed():
    assert any(name.count(".") > 1 for name in rule_index.rule_index().modules)


_IMPORTED = """
import io, sys
from transpiler.cli import main
sys.stdout = io.StringIO()
main(["convert", sys.argv[1], "--diff", "-q"])
print(" ".join(sorted(m for m in sys.modules if m.startswith("rewrite_rules."))), file=sys.stderr)
"""


def test_a_conversion_imports_only_the_rule_modules_it_uses(tmp_path):
    (tmp_path / "m.py").write_text("import torch\nlayer = torch.nn.Linear(2, 3)\n")
    env = {**os.environ, "MS_MIGRATE_CACHE_DIR": str(tmp_path / "cache")}
    runs = [subprocess.run([sys.executable, "-c", _IMPORTED, str(tmp_path / "m.py")], env=env, capture_output=True,
                           text=True, check=True) for _ in range(2)]
    first, second = (set(run.stderr.splitlines()[-1].split()) for run in runs)
    assert "rewrite_rules.nn.layers" in second and "rewrite_rules.nn.losses" in first  # the index was built first
    assert "rewrite_rules.nn.losses" not in second and "rewrite_rules.training.optim" not in second
    assert len(os.listdir(tmp_path / "cache" / "rule-index")) == 1


def test_an_unreadable_index_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("MS_MIGRATE_CACHE_DIR", str(tmp_path))
    rule_index.rule_index.cache_clear()
    try:
        built = rule_index.rule_index()
        (path,) = (tmp_path / "rule-index").iterdir()
        assert json.loads(path.read_text())["calls"] == built.calls
        for unreadable in ("{not json", "{}", "[]"):
            path.write_text(unreadable)
            rule_index.rule_index.cache_clear()
            assert rule_index.rule_index() == built
            assert json.loads(path.read_text())["calls"] == built.calls
    finally:
        rule_index.rule_index.cache_clear()


def test_an_unwritable_cache_directory_builds_the_index_in_memory(tmp_path, monkeypatch):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("MS_MIGRATE_CACHE_DIR", str(tmp_path / "a-file"))
    rule_index.rule_index.cache_clear()
    try:
        assert "torch.nn.Linear" in rule_index.rule_index().calls
    finally:
        rule_index.rule_index.cache_clear()


def test_the_index_is_kept_under_a_digest_of_the_source(tmp_path, monkeypatch):
    from transpiler.batch import cache  # the converter says where the index is kept

    monkeypatch.setenv("MS_MIGRATE_CACHE_DIR", str(tmp_path))
    expected = tmp_path / "rule-index" / f"1-{rule_index.source_digest(cache._code_digest())}.json"
    assert rule_index._index_path() == str(expected)
    (tmp_path / "rules.py").write_text("RULES = []\n")
    before = rule_index.tree_digest(_package(tmp_path))
    (tmp_path / "rules.py").write_text("RULES = [1]\n")
    assert rule_index.tree_digest(_package(tmp_path)) != before


def _package(directory) -> types.ModuleType:
    package = types.ModuleType("rules_of_a_test")
    package.__path__ = [str(directory)]
    return package


def test_the_conversion_cache_keeps_the_index_when_it_clears_old_versions(tmp_path):
    index = tmp_path / "rule-index"
    index.mkdir()
    os.utime(index, (0, 0))  # not touched for decades
    open_cache(str(tmp_path))
    assert index.is_dir()
