"""The hover text over a torch API: its MindSpore form, the argument
differences (of this call, and of the rule), and how the rule is proven, from
the same rule catalog ``ms-migrate rules`` prints (``transpiler.rule_catalog``)."""

from __future__ import annotations

import threading

from transpiler.lsp.documents import CONVERTED, MARKER, UNKNOWN, WARNING, Item

_HOVERED = (CONVERTED, MARKER, UNKNOWN, WARNING)

_catalogs: dict[int, tuple[object, dict]] = {}  # id(rules) -> (rules, api -> Entry)
_lock = threading.Lock()


def catalog_of(rules) -> dict:
    """API -> rule_catalog.Entry for ``rules`` (built once per rule set: about 0.2 s)."""
    with _lock:
        cached = _catalogs.get(id(rules))
        if cached is not None and cached[0] is rules:
            return cached[1]
    from transpiler.rule_catalog import catalog

    try:
        entries = {entry.api: entry for entry in catalog(rules)}
    except Exception:  # noqa: BLE001 - one broken rule (a project's, say) must not take hover away from the rest
        entries = _one_by_one(rules)
    with _lock:
        if len(_catalogs) > 8:
            _catalogs.clear()
        _catalogs[id(rules)] = (rules, entries)
    return entries


def _one_by_one(rules) -> dict:
    from transpiler.rule_catalog import _entry  # the catalog's row for one API

    entries = {}
    for api, api_rules in rules.api_names().items():
        try:
            entries[api] = _entry(api, api_rules)
        except Exception:  # noqa: BLE001
            continue
    return entries


def hover_markdown(items: list[Item], catalog: dict) -> str | None:
    """Markdown for the innermost API use among ``items`` (innermost first), or None."""
    for item in items:
        if item.kind in _HOVERED:
            return describe(item, catalog.get(item.code))
    return None


def describe(item: Item, entry) -> str:
    api = item.code
    lines = []
    if entry is not None and entry.converts and entry.target:
        target = entry.target.replace(" (hook)", "")
        by_code = " (the rule's code rewrites the call)" if " (hook)" in entry.target else ""
        lines.append(f"**`{api}`** → MindSpore **`{target}`**{by_code}")
    elif entry is not None:
        lines.append(f"**`{api}`**: no MindSpore equivalent (the converter marks it)")
    else:
        lines.append(f"**`{api}`**")
    lines += ["", _here(item)]
    changes = [f"- `{name}`: {change}" for name, change in item.changes]
    if changes:
        lines += ["", "**Arguments of this call:**", *changes]
    if entry is not None and entry.notes:
        lines += ["", "**Argument differences (the rule):**", *(f"- {note.strip()}" for note in _notes(entry.notes))]
    if entry is not None:
        lines += ["", f"**Proof:** {proof_text(entry)}"]
    elif item.kind == CONVERTED:
        lines += ["", "**Proof:** a structural rewrite of the converter (see `ms-migrate rules` for the API rules)"]
    return "\n".join(lines)


def _here(item: Item) -> str:
    if item.kind == MARKER:
        return f"Here: {item.message} — the converted file keeps the statement under a `# TODO(ms-migrate)` marker."
    if item.kind == UNKNOWN:
        return f"Here: {item.message} (no rule recognises it; it is counted in the report)."
    return f"Here: {item.message}"


def _notes(notes: str) -> list[str]:
    """The catalog's notes cell, one note per bullet (they are joined with "; ")."""
    parts, depth, current = [], 0, ""
    for char in notes:
        depth += char == "("
        depth -= char == ")"
        if char == ";" and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return [part for part in parts if part.strip()]


def proof_text(entry) -> str:
    cases = f"{entry.cases} execution case{'s' if entry.cases != 1 else ''}"
    marked = f" ({entry.marked} of them check{'s' if entry.marked == 1 else ''} a marker)" if entry.marked else ""
    if not entry.converts:
        return f"marked, never converted; {cases}{marked} check the marker is written."
    text = {
        "exact": f"exact — {cases}{marked} run torch and the converted MindSpore code on the same inputs "
                 "and compare values, shapes and dtypes.",
        "tests": f"by tests outside the rule's examples: {', '.join(entry.proven_by)}.",
        "reference": "compared with torch's documented result (torch cannot run it here"
                     + (f": {entry.unrunnable}" if entry.unrunnable else "") + ").",
        "structural": f"structural — {cases} compared on what both frameworks must agree on; random draws not "
                      "replayed" + (f" ({entry.uncompared})" if entry.uncompared else "") + ".",
        "shape": f"shape and dtype only — {cases} compare shapes and dtypes, not values.",
        "none": "none — no execution case runs this rule.",
    }
    return text.get(entry.proof, entry.proof)
