"""What a conversion did, in the user's words, for report lines.

Every line derives from the code itself: the call as written, what it
became, and each argument the rule changed (renamed, converted, written out,
dropped), with the reason the rule gives. For example::

    nn.Linear(16, 10, bias=False) -> nn.Dense(16, 10, has_bias=False): bias=False -> has_bias=False
    nn.init.kaiming_normal_(w) -> w.set_data(initializer(HeNormal(...), w.shape, w.dtype))
"""

from __future__ import annotations

from functools import lru_cache

import libcst as cst

from rewrite_rules.spec import Arg, Drop, Unsupported
from transpiler.convert.codegen import QuietCodegenState, code_for_node

LIMIT = 100  # characters of code shown for one side of a change
_VALUE_LIMIT = 40  # characters of an argument value shown in a change


def short(node: cst.CSTNode, limit: int = LIMIT) -> str:
    """The code of ``node`` on one line; when it does not fit in ``limit``, the
    arguments of the innermost calls show as ``...``, then those of the calls
    around them."""
    text = _one_line(_code(node))
    if isinstance(node, cst.BaseExpression):
        for depth in (2, 1):
            if len(text) <= limit:
                break
            text = _one_line(_ElidingCodegen.code(node, depth))
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def describe(before: cst.CSTNode, after: cst.CSTNode, changes=(), target: str | None = None,
             why: str = "") -> str:
    """``before -> after``, then the argument changes and the rule's reason
    (``why``); when the code reads the same (``nn.ReLU()`` in both), the
    MindSpore API it now names."""
    old, new = short(before), short(after)
    text = f"{old} -> {new}" if old != new or target is None else f"{old} -> {target} (the code reads the same)"
    details = "; ".join(change for _, change in changes)
    if details and why:
        return f"{text}: {details} ({why})"
    return f"{text}: {details or why}" if details or why else text


def same_arguments(before: cst.Call, after: cst.BaseExpression) -> bool:
    """``after`` is a call with the arguments of ``before``: only the callee changed."""
    return isinstance(after, cst.Call) and [_code(a) for a in before.args] == [_code(a) for a in after.args]


def argument_changes(bound, given: dict[str, cst.BaseExpression]) -> list[tuple[str, str]]:
    """(torch parameter, what happened to it) for each argument of a bound call
    (``transpiler.convert.engine.BoundCall``) the mapping or the hook changed; ``given``:
    the arguments as bound before any change."""
    rule = bound.rule
    params = {p.name: p for p in rule.params}
    kept = set(bound.positional[: rule.keep_positional])
    changes: list[tuple[str, str]] = []
    order = [*params, *(n for n in bound.values if n not in params)]
    for name in order:
        spec = rule.args.get(name)
        new = bound.values.get(name)
        old = given.get(name)
        if old is not None and new is None:
            changes.append((name, f"{_label(name, old)} dropped ({_dropped_why(spec, params.get(name), old)})"))
        elif old is None and new is not None:
            default = params[name].default if name in params else None
            why = "MindSpore's default differs" + (f" from torch's {name}={default}" if default else "")
            reason = _value_reason(spec)
            changes.append((name, f"{bound.ms_name(name)}={_value(new)} written out ({why}"
                                  + (f"; {reason}" if reason else "") + ")"))
        elif old is not None:
            ms_name = bound.ms_name(name)
            value_changed = _code(old) != _code(new)
            node = bound.arg_nodes.get(name)
            positional = node is not None and node.keyword is None
            renamed = ms_name != name and name not in kept
            by_keyword = positional and name not in kept  # MindSpore takes it at another place
            if not (value_changed or renamed or by_keyword):
                continue
            if not value_changed and len(_code(old)) > _VALUE_LIMIT:
                changes.append((name, f"argument {name} -> {ms_name}" + (" (by keyword)" if by_keyword else "")))
                continue
            before = f"{name} {_value(old)}" if positional else _label(name, old)
            after = f"{_value(new)}" if name in kept else f"{ms_name}={_value(new)}"
            reason = _value_reason(spec) if value_changed else ""
            changes.append((name, f"{before} -> {after}" + (f" ({reason})" if reason else "")))
    for name, added in [*((n, e) for items in bound.before.values() for n, e in items), *bound.appended]:
        changes.append((name, f"{name}={_value(added)} added"))
    if rule.pack_varargs and len(bound.varargs) > 1:
        changes.append(("*" + next((p.name for p in rule.params if p.kind == "varargs"), "args"),
                        "the sizes are passed as one tuple"))
    return changes


def _dropped_why(spec, param, value) -> str:
    if isinstance(spec, Drop):
        return spec.why or "no effect in MindSpore"
    if isinstance(spec, Unsupported):
        return "torch's default; MindSpore has no such argument"
    return "not needed by the MindSpore form"


def _value_reason(spec) -> str:
    """Why a value changes: the first sentence of the rule's value hook."""
    if not isinstance(spec, Arg) or spec.value is None:
        return ""
    doc = " ".join((spec.value.__doc__ or "").split("\n\n", 1)[0].split())
    return doc.split(". ")[0].rstrip(".")


def _label(name: str, value: cst.BaseExpression) -> str:
    return f"{name}={_value(value)}"


def _value(node: cst.CSTNode) -> str:
    return short(node, _VALUE_LIMIT)


def _code(node: cst.CSTNode) -> str:
    return code_for_node(node)


def _one_line(code: str) -> str:
    if "\n" not in code and "  " not in code:
        return code
    return _without_layout(code)


@lru_cache(maxsize=4096)
def _without_layout(code: str) -> str:
    """Cached: a layer written over several lines is often written the same way in many files."""
    try:  # drop the layout, keep the code: comments and line breaks go
        import ast

        return ast.unparse(ast.parse(code.strip(), mode="eval"))
    except SyntaxError:
        return " ".join(code.split())


class _ElidingCodegen(QuietCodegenState):
    """The code of a node whose calls nested ``depth`` or more calls deep have
    ``...`` for their arguments: the text of the node rewritten so, written
    without rewriting it (the argument tokens are dropped as they end)."""

    def __init__(self, depth: int) -> None:
        super().__init__(default_indent="    ", default_newline="\n")  # code_for_node's defaults
        self.elide_from = depth
        # the calls open, innermost last: [call, whether its arguments go, the token they start at]
        self.calls: list[list] = []

    @classmethod
    def code(cls, node: cst.CSTNode, depth: int) -> str:
        state = cls(depth)
        node._codegen(state)
        return "".join(state.tokens)

    def before_codegen(self, node: cst.CSTNode) -> None:
        if type(node) is cst.Call:
            self.calls.append([node, bool(node.args) and len(self.calls) >= self.elide_from, 0])
        elif type(node) is cst.Arg and self.calls:  # an argument of the innermost open call
            open_call = self.calls[-1]
            if open_call[1] and node is open_call[0].args[0]:
                open_call[2] = len(self.tokens)

    def after_codegen(self, node: cst.CSTNode) -> None:
        if type(node) is cst.Call:
            self.calls.pop()
        elif type(node) is cst.Arg and self.calls:
            call, elided, start = self.calls[-1]
            if elided and node is call.args[-1]:
                del self.tokens[start:]
                self.tokens.append("...")
