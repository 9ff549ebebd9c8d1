"""The dtype differences rules declare, for the APIs a file uses.

A rule declares that its MindSpore form gives another dtype than torch (for
example int32 indices where torch gives int64) through ``Example.dtype_map``,
with its reason in the example's or the rule's notes. ``verify`` accepts such
a difference in an output only when an API the original file uses declares
it, and names that API in its report; any other dtype difference fails.
"""

from __future__ import annotations

from pathlib import Path

from transpiler.convert.diagnostics import Outcome


def declared_dtype_differences(paths, rules=None) -> dict[tuple[str, str], str]:
    """(torch dtype, MindSpore dtype) -> "api (reason); api (reason)" for
    the APIs the files at ``paths`` use (``rules``: default ms-migrate's)."""
    from rewrite_rules.registry import load_rules
    from transpiler.convert.pipeline import convert_source

    rules = rules or load_rules()
    used: set[str] = set()
    for path in paths:
        result = convert_source(Path(path).read_text(encoding="utf-8"), str(path), rules)
        used |= {d.rule for d in result.diagnostics if d.outcome == Outcome.CONVERTED}
    declared: dict[tuple[str, str], list[str]] = {}
    for name in sorted(used):
        for rule in _rules_named(rules, name):
            for example in rule.examples:
                for torch_dtype, ms_dtype in example.dtype_map.items():
                    reason = example.notes if " " in example.notes else rule.notes
                    text = f"{name} ({reason.rstrip('.')})" if reason else name
                    entries = declared.setdefault((torch_dtype, ms_dtype), [])
                    if text not in entries:
                        entries.append(text)
    return {key: "; ".join(texts) for key, texts in declared.items()}


def _rules_named(rules, name: str) -> list:
    if name in rules.calls:
        return [rules.calls[name]]
    method = name.rpartition(".")[2]
    return [r for r in rules.methods.get(method, ()) if r.torch == name]


class DeclaredDtypes:
    """``declared_dtype_differences(paths, rules)``, read on the first lookup:
    reading it converts every file the original imported (a whole package when
    the original is a module of one), and only a dtype that differs needs it."""

    def __init__(self, paths, rules=None):
        self._paths, self._rules, self._table = paths, rules, None

    def get(self, key, default=None):
        if self._table is None:
            self._table = declared_dtype_differences(self._paths, self._rules)
        return self._table.get(key, default)
