"""Rules from outside ms-migrate: a project's rule files and installed packages.

A rule file is a Python module with a ``RULES`` list, written with
``rewrite_rules.api`` exactly like ms-migrate's own rule modules. It is named
in ``[tool.ms-migrate] rules = [...]`` or with ``--rules FILE``. A package
ships rules through an entry point in the group ``ms_migrate.rules`` naming a
module with a ``RULES`` list (or the list itself)::

    [project.entry-points."ms_migrate.rules"]
    mylib = "mylib.ms_migrate_rules"

Anything wrong with such a file is one line naming it (``RuleLoadError``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import traceback
from importlib.metadata import entry_points

from rewrite_rules.spec import ApiRule, AttributeRule, MethodRule

ENTRY_POINT_GROUP = "ms_migrate.rules"


class RuleLoadError(Exception):
    """A rule file or rule package that cannot be used: one line, naming it."""


def load_rule_file(path: str):
    """(the module, its bytes) of the rule file at ``path``. Its directory is
    put on ``sys.path`` so that it can import its own helper modules."""
    path = os.path.abspath(path)
    try:
        with open(path, "rb") as handle:
            content = handle.read()
    except OSError as exc:
        raise RuleLoadError(f"{path}: cannot read the rule file: {exc.strerror or exc}") from None
    digest = hashlib.blake2b(path.encode("utf-8", "surrogateescape") + content, digest_size=6).hexdigest()
    name = f"ms_migrate_user_rules.{_identifier(os.path.splitext(os.path.basename(path))[0])}_{digest}"
    if name in sys.modules:
        return sys.modules[name], content
    directory = os.path.dirname(path)
    if directory not in sys.path:
        sys.path.append(directory)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise RuleLoadError(f"{path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:  # noqa: BLE001 - any failure of user code is reported, not raised
        del sys.modules[name]
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise RuleLoadError(f"{_where(path, exc)}: cannot load the rules: {_one_line(exc)}") from None
    return module, content


def file_stamp(path: str):
    """What tells an edited rule file from the one loaded before."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


def plugin_modules() -> list[tuple[object, str, bytes]]:
    """(module or rule list, origin, bytes for the cache key) of every installed
    package's entry point in ``ms_migrate.rules``."""
    found = []
    for point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda p: p.name):
        origin = f"entry point {point.name} = {point.value} ({ENTRY_POINT_GROUP})"
        try:
            loaded = point.load()
        except Exception as exc:  # noqa: BLE001
            raise RuleLoadError(f"{origin}: cannot load the rules: {_one_line(exc)}") from None
        source = getattr(loaded, "__file__", None)
        content = origin.encode()
        if source:
            try:
                with open(source, "rb") as handle:
                    content += handle.read()
            except OSError:
                pass
        found.append((loaded, origin, content))
    return found


def rules_of(module, origin: str) -> list:
    """The rules a module (or an entry point's list) declares, checked."""
    rules = getattr(module, "RULES", None) if not isinstance(module, (list, tuple)) else module
    if rules is None:
        raise RuleLoadError(f"{origin}: defines no RULES list (RULES = [ApiRule(...), ...])")
    if not isinstance(rules, (list, tuple)):
        raise RuleLoadError(f"{origin}: RULES must be a list of rules, not {type(rules).__name__}")
    for index, rule in enumerate(rules):
        if not isinstance(rule, (ApiRule, AttributeRule, MethodRule)):
            raise RuleLoadError(f"{origin}: RULES[{index}] is not a rule (ApiRule, AttributeRule or MethodRule) "
                                f"but {type(rule).__name__}")
        if isinstance(rule, ApiRule):
            try:
                rule.params  # noqa: B018 - the signature must parse
            except SyntaxError:
                raise RuleLoadError(f"{origin}: RULES[{index}] ({rule.torch}): signature is not Python parameter "
                                    f"text: {rule.signature!r}") from None
    return list(rules)


def _where(path: str, exc: BaseException) -> str:
    """``path:line`` of the failure inside the rule file, when it has one."""
    if isinstance(exc, SyntaxError) and exc.filename == path and exc.lineno:
        return f"{path}:{exc.lineno}"
    lines = [frame.lineno for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == path]
    return f"{path}:{lines[-1]}" if lines else path


def _one_line(exc: BaseException) -> str:
    message = exc.msg if isinstance(exc, SyntaxError) else str(exc)
    return " ".join(f"{type(exc).__name__}: {message}".split())


def _identifier(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text) or "rules"
