"""The supported-API table, generated from the rule data (``ms-migrate rules``).

One row per torch API: its MindSpore form, how many execution cases prove it,
and notes on argument differences derived from the rule's argument mapping and
notes. The same data drives conversion, so the table cannot drift from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from rewrite_rules import helpers
from rewrite_rules.registry import RuleSet, converts
from rewrite_rules.spec import ApiRule, Arg, AttributeRule, Drop, MethodRule, Unsupported

# Arguments nearly every factory/function has; described once in the header.
_COMMON = {id(helpers.OUT), id(helpers.DEVICE), id(helpers.LAYOUT), id(helpers.PIN_MEMORY), id(helpers.REQUIRES_GRAD)}
_SPELLINGS = (("mindspore.ops.", "ops."), ("mindspore.nn.", "nn."), ("mindspore.", "mindspore."))


@dataclass(frozen=True)
class Entry:
    api: str
    target: str
    cases: int  # execution cases (run in both frameworks)
    marked: int  # cases that must carry a marker
    notes: str


def short(qualified: str | None) -> str:
    if qualified is None:
        return ""
    for prefix, spelled in _SPELLINGS:
        if qualified.startswith(prefix):
            return spelled + qualified[len(prefix):]
    return qualified


def argument_notes(rule: ApiRule) -> list[str]:
    notes = []
    for param in rule.params:
        spec = rule.args.get(param.name)
        if spec is None or id(spec) in _COMMON:
            continue
        if isinstance(spec, str):
            notes.append(f"`{param.name}`→`{spec}`")
        elif isinstance(spec, Arg):
            parts = []
            if spec.to:
                parts.append(f"→`{spec.to}`")
            if spec.explicit:
                parts.append("always written (default differs)")
            if spec.value is not None:
                parts.append("value converted")
            notes.append(f"`{param.name}` " + ", ".join(parts))
        elif isinstance(spec, Drop):
            notes.append(f"`{param.name}` dropped" + (f" ({spec.why})" if spec.why else ""))
        elif isinstance(spec, Unsupported):
            notes.append(f"`{param.name}` only at its default ({spec.reason})")
    return notes


def _target(rule) -> str:
    if isinstance(rule, MethodRule):
        if rule.rename:
            return f"Tensor.{rule.rename}" if rule.receiver == "tensor" else f".{rule.rename}()"
        return "rewritten" if rule.hook is not None else ""
    target = short(rule.target)
    if isinstance(rule, ApiRule) and rule.hook is not None and target:
        return f"{target} (hook)"
    return target


def _entry(api: str, rules: list) -> Entry:
    targets, notes, cases, marked = [], [], 0, 0
    for rule in rules:
        target = _target(rule) if converts(rule) else "— (marked)"
        if target and target not in targets:
            targets.append(target)
        if isinstance(rule, ApiRule):
            notes += argument_notes(rule)
        text = getattr(rule, "notes", "") or getattr(rule, "reason", "")
        if text and text not in notes:
            notes.append(text)
        cases += sum(1 for e in rule.examples if e.runs)
        marked += sum(1 for e in rule.examples if e.marked is not None)
    return Entry(api, " / ".join(targets), cases, marked, "; ".join(notes))


def catalog(rules: RuleSet) -> list[Entry]:
    return [_entry(api, rs) for api, rs in sorted(rules.api_names().items())]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(rules: RuleSet) -> str:
    entries = catalog(rules)
    converting = rules.api_count()
    total_cases = sum(e.cases for e in entries)
    lines = [
        "# Supported torch APIs",
        "",
        "Generated from the rule data by `ms-migrate rules --markdown -o rewrite_rules/SUPPORTED_APIS.md`;",
        "do not edit by hand (`tests/test_rule_catalog.py` keeps it in sync).",
        "",
        f"{converting} torch APIs convert; {len(entries) - converting} more are recognised and marked. "
        f"{total_cases} execution cases run each rule in both frameworks and compare the results "
        "(`python -m tests.harness`).",
        "",
        "Not repeated per row: `out=` is never carried (assign the result), `device=`/`layout=`/`pin_memory=` "
        "are dropped (placement is global in MindSpore), `requires_grad=True` is marked. "
        "`(hook)` means the call is rewritten by code, not only renamed; see the notes.",
        "",
        "| torch API | MindSpore | cases | notes |",
        "|---|---|---:|---|",
    ]
    for e in entries:
        cases = str(e.cases) + (f" (+{e.marked} marked)" if e.marked else "")
        lines.append(f"| `{e.api}` | {_cell(e.target) and '`' + _cell(e.target) + '`'} | {cases} | {_cell(e.notes)} |")
    return "\n".join(lines) + "\n"
