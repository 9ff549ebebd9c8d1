"""Argument-level differences of one converted call, read from the same rule
data the converter applies (renames, explicit defaults, Drop, Unsupported,
value hooks, rule hooks)."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.spec import ApiRule, Arg, Drop, MethodRule, Unconvertible, Unsupported
from transpiler.analyze.model import ArgNote
from transpiler.engine import bind, literal_value
from transpiler.context import parse_expr


def _doc(function) -> str:
    doc = (getattr(function, "__doc__", None) or "").strip()
    return " ".join(doc.split("\n\n", 1)[0].split()) if doc else ""


def _is_default(value: cst.BaseExpression, default: str | None) -> bool:
    if default is None:
        return False
    try:
        return literal_value(value) == literal_value(parse_expr(default))
    except (ValueError, SyntaxError, TypeError):
        return False


def call_notes(rule: ApiRule, call: cst.Call) -> tuple[ArgNote, ...]:
    """What ms-migrate does about each argument of ``call`` that is not carried over as written."""
    try:
        bound = bind(rule, call, None)  # type: ignore[arg-type]  # binding never touches ctx
    except Unconvertible:
        return ()
    notes: list[ArgNote] = []
    # Leading positional arguments stay positional: a keyword rename does not touch them.
    stays_positional = set(bound.positional[: rule.keep_positional])
    for param in rule.params:
        spec = rule.args.get(param.name)
        present = param.name in bound.values
        if isinstance(spec, str):
            if present and param.name not in stays_positional:
                notes.append(ArgNote(param.name, f"renamed to {spec}"))
        elif isinstance(spec, Drop):
            if present:
                notes.append(ArgNote(param.name, f"dropped: {spec.why}" if spec.why else "dropped"))
        elif isinstance(spec, Unsupported):
            if present:
                if _is_default(bound.values[param.name], param.default):
                    notes.append(ArgNote(param.name, "dropped (the torch default)"))
                else:
                    notes.append(ArgNote(param.name, f"cannot be carried, call marked: {spec.reason}"))
        elif isinstance(spec, Arg):
            notes.extend(_arg_notes(param, spec, present, param.name in stays_positional))
    if rule.pack_varargs and len(bound.varargs) > 1:
        notes.append(ArgNote("*size", "packed into one tuple"))
    if rule.hook is not None:
        notes.append(ArgNote("(call)", rule.notes or _doc(rule.hook) or "rewritten by the rule's hook"))
    return tuple(notes)


def _arg_notes(param, spec: Arg, present: bool, positional: bool) -> list[ArgNote]:
    if not present and not (spec.explicit and param.default is not None):
        return []
    parts: list[str] = []
    if not present:
        parts.append(f"written explicitly as {param.default} (MindSpore's default differs)")
    if spec.to and not positional:
        parts.append(f"passed as {spec.to}")
    if spec.value is not None:
        parts.append(f"value converted ({_doc(spec.value) or spec.value.__name__})")
    return [ArgNote(param.name, "; ".join(parts))] if parts else []


def method_notes(rule: MethodRule, name: str) -> tuple[ArgNote, ...]:
    if rule.hook is not None:
        return (ArgNote(f".{name}()", rule.notes or _doc(rule.hook) or "rewritten to the MindSpore form"),)
    if rule.rename and rule.rename != name:
        return (ArgNote(f".{name}()", f"renamed to .{rule.rename}()"),)
    return ()
