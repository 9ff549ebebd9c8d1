"""One public rule API (issue 14 item 8): a rule module, ours or a user's,
imports ``rewrite_rules.api`` (and spec, and other rule modules' data), never
``transpiler`` itself; ``rewrite_rules/api.py`` is the one bridge, and
everything it offers is documented in its docstring."""

from __future__ import annotations

import ast
import pathlib

import rewrite_rules
import rewrite_rules.api as api

PACKAGE = pathlib.Path(rewrite_rules.__file__).parent
BRIDGE = PACKAGE / "api.py"


def _imported_modules(path: pathlib.Path) -> set[str]:
    """Every module a file imports, at any depth (function-level imports too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


def _reaches_into_the_pipeline(path: pathlib.Path) -> list[str]:
    return sorted(m for m in _imported_modules(path) if m == "transpiler" or m.startswith("transpiler."))


def test_rule_modules_import_the_public_api_not_transpiler():
    modules = [p for p in PACKAGE.rglob("*.py") if p != BRIDGE]
    assert len(modules) > 50  # the walk sees the rule modules (also in family subpackages)
    reaches = {str(p.relative_to(PACKAGE)): found for p in modules if (found := _reaches_into_the_pipeline(p))}
    assert not reaches, f"rule modules import transpiler internals, use rewrite_rules.api: {reaches}"


def test_the_check_sees_a_reach(tmp_path):
    rule = tmp_path / "rule.py"
    rule.write_text("from rewrite_rules.api import ApiRule\n\ndef hook(call, ctx):\n"
                    "    from transpiler.convert.structural.provenance import origin_of\n")
    assert _reaches_into_the_pipeline(rule) == ["transpiler.convert.structural.provenance"]
    rule.write_text("import transpiler.convert.names as names\n")
    assert _reaches_into_the_pipeline(rule) == ["transpiler.convert.names"]


def test_every_public_name_exists_and_is_documented():
    for name in api.__all__:
        assert getattr(api, name) is not None
        assert f"``{name}" in api.__doc__, f"{name} is not in rewrite_rules.api's docstring"
    own = [getattr(api, n) for n in api.__all__]
    functions = [f for f in own if callable(f) and getattr(f, "__module__", None) == api.__name__]
    assert functions and all(f.__doc__ for f in functions)
