"""The supported-API table, generated from the rule data (``ms-migrate rules``).

One row per torch API: its MindSpore form, how many execution cases prove it,
and notes on argument differences derived from the rule's argument mapping and
notes. The same data drives conversion, so the table cannot drift from it.

How each converting API is proven (``Entry.proof``), strongest first:

- ``exact``: an execution case of its rule compares values with torch's
  (``Example.compare == "values"``, run by tests/rules/test_execution.py);
- ``tests``: execution tests outside the example harness (``ApiRule.proven_by``);
- ``reference``: torch cannot run the API on this machine (CUDA only): an
  execution case compares the converted code with what torch documents the
  call to give, computed by torch (``Example.torch_reference``; the notes
  quote torch's error);
- ``structural``: only cases of a random operation whose draws are not
  replayed, compared on what both frameworks must agree on;
- ``shape``: only cases that compare shapes and dtypes;
- ``none``: no execution case (tests/rules/test_rule_catalog.py fails on these).
"""

from __future__ import annotations

from dataclasses import dataclass

from rewrite_rules import helpers
from rewrite_rules.registry import RuleSet, converts
from rewrite_rules.spec import ApiRule, Arg, AttributeRule, Drop, MethodRule, Unsupported

# Arguments nearly every factory/function has; described once in the header.
_COMMON = {id(helpers.OUT), id(helpers.DEVICE), id(helpers.LAYOUT), id(helpers.PIN_MEMORY), id(helpers.REQUIRES_GRAD)}
_SPELLINGS = (("mindspore.ops.", "ops."), ("mindspore.nn.", "nn."), ("mindspore.", "mindspore."))


EXACT_MODES = ("values",)  # Example.compare modes that compare values with torch's
PROOFS = ("exact", "tests", "reference", "structural", "shape", "none")


@dataclass(frozen=True)
class Entry:
    api: str
    target: str
    cases: int  # execution cases (run in both frameworks)
    marked: int  # cases that must carry a marker
    notes: str
    converts: bool = True
    proof: str = "none"  # one of PROOFS
    proven_by: tuple[str, ...] = ()  # tests outside the example harness
    uncompared: str = ""  # what the structural cases leave uncompared (their notes)
    unrunnable: str = ""  # why torch cannot run the API here (the notes of its torch_reference cases)


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


def proof_of(rules: list) -> str:
    """How the rules of one API are proven (see the module docstring)."""
    modes = [e.compare for rule in rules for e in rule.examples if e.runs and e.torch_reference is None]
    if any(mode in EXACT_MODES for mode in modes):
        return "exact"
    if any(getattr(rule, "proven_by", ()) for rule in rules):
        return "tests"
    if any(e.runs and e.torch_reference is not None and e.compare in EXACT_MODES for rule in rules for e in rule.examples):
        return "reference"
    if "structural" in modes:
        return "structural"
    return "shape" if modes else "none"


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
    proven_by = tuple(dict.fromkeys(t for rule in rules for t in getattr(rule, "proven_by", ())))
    uncompared = "; ".join(
        dict.fromkeys(e.notes for rule in rules for e in rule.examples if e.runs and e.compare == "structural")
    )
    unrunnable = "; ".join(
        dict.fromkeys(e.notes for rule in rules for e in rule.examples if e.runs and e.torch_reference is not None)
    )
    return Entry(api, " / ".join(targets), cases, marked, "; ".join(notes), any(converts(r) for r in rules),
                 proof_of(rules), proven_by, uncompared, unrunnable)


def catalog(rules: RuleSet) -> list[Entry]:
    return [_entry(api, rs) for api, rs in sorted(rules.api_names().items())]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def proof_counts(entries: list[Entry]) -> dict[str, int]:
    """Converting APIs per proof status."""
    counts = dict.fromkeys(PROOFS, 0)
    for entry in entries:
        if entry.converts:
            counts[entry.proof] += 1
    return counts


def proof_summary(entries: list[Entry]) -> str:
    """Two lines: how many converting APIs are proven by execution, and how many are not."""
    n = proof_counts(entries)
    proven = n["exact"] + n["tests"] + n["reference"]
    unproven = n["structural"] + n["shape"] + n["none"]
    return (
        f"{proven} proven by execution ({n['exact']} by execution cases of their rules compared with torch, "
        f"{n['tests']} by tests outside the example harness, {n['reference']} compared with torch's documented "
        "result because torch cannot run them here)\n"
        f"{unproven} not proven exactly ({n['structural']} compared structurally: random draws not replayed; "
        f"{n['shape']} by shape and dtype only; {n['none']} without an execution case)"
    )


_SECTIONS = {
    "none": "no execution case",
    "shape": "compared by shape and dtype only",
    "structural": "compared structurally (random draws not replayed)",
    "tests": "proven by tests outside the example harness",
    "reference": "compared with torch's documented result (torch cannot run them here)",
}


def unproven_listing(entries: list[Entry]) -> str:
    """Every converting API not proven by an exact execution case of its rule, by status."""
    lines = []
    for proof, title in _SECTIONS.items():
        chosen = [e for e in entries if e.converts and e.proof == proof]
        if not chosen:
            continue
        lines.append(f"{title} ({len(chosen)}):")
        for e in chosen:
            detail = {"tests": ", ".join(e.proven_by), "structural": e.uncompared, "reference": e.unrunnable}.get(proof, "")
            lines.append(f"  {e.api}" + (f"  -- {detail}" if detail else ""))
    return "\n".join(lines) + "\n" if lines else "every converting API is proven by an exact execution case\n"


def _cases_cell(e: Entry) -> str:
    text = str(e.cases)
    if e.converts and e.proof in ("structural", "shape"):
        text += f" ({e.proof} only)"
    elif e.converts and e.proof == "reference":
        text += " (against torch's documented result: torch cannot run it here)"
    elif e.converts and e.proof == "tests":
        text += " + " + ", ".join(f"`{t}`" for t in e.proven_by)
    return text + (f" (+{e.marked} marked)" if e.marked else "")


def markdown(rules: RuleSet) -> str:
    entries = catalog(rules)
    converting = rules.api_count()
    total_cases = sum(e.cases for e in entries)
    lines = [
        "# Supported torch APIs",
        "",
        "Generated from the rule data by `ms-migrate rules --markdown -o rewrite_rules/SUPPORTED_APIS.md`;",
        "do not edit by hand (`tests/rules/test_rule_catalog.py` keeps it in sync).",
        "",
        f"{converting} torch APIs convert; {len(entries) - converting} more are recognised and marked. "
        f"{total_cases} execution cases run each rule in both frameworks and compare the results "
        "(`python -m transpiler.proof.harness`).",
        "",
        "Of the converting APIs:",
        *(f"- {line}." for line in proof_summary(entries).splitlines()),
        "",
        "Not repeated per row: `out=` is never carried (assign the result), `device=`/`layout=`/`pin_memory=` "
        "are dropped (placement is global in MindSpore), `requires_grad=True` is marked. "
        "`(hook)` means the call is rewritten by code, not only renamed; see the notes.",
        "",
        "| torch API | MindSpore | cases | notes |",
        "|---|---|---:|---|",
    ]
    for e in entries:
        lines.append(f"| `{e.api}` | {_cell(e.target) and '`' + _cell(e.target) + '`'} | {_cases_cell(e)} | {_cell(e.notes)} |")
    return "\n".join(lines) + "\n"
