"""Reading literal strings and operand lists out of bound calls."""

from __future__ import annotations

import ast

import libcst as cst

from rewrite_rules.api import Unconvertible, assigned_values, code_of


def literal_string(node: cst.BaseExpression | None) -> str | None:
    """The value of a plain string literal (implicit concatenation included);
    None for anything else (names, f-strings, expressions)."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        try:
            value = ast.literal_eval(code_of(node))
        except (ValueError, SyntaxError):
            return None
        return value if isinstance(value, str) else None
    return None


def argument_string(call, name: str, position: int | None = None) -> str | None:
    """The string argument ``name`` of the call (or its positional argument
    ``position``, for a pattern among varargs): a literal, or what the file
    shows it to be (``known_string``)."""
    value = call.get(name) if position is None else call.varargs[position].value
    text = literal_string(value)
    if text is not None or call.source is None:
        return text
    return known_string(_source_argument(call, name, position), call.ctx)


def argument_choices(call, name: str) -> list[tuple[cst.BaseExpression | None, str]] | None:
    """The strings the argument ``name`` may hold, each with the test that picks it at run
    time: ``[(None, text)]`` when it is known (``argument_string``); else, when the string is
    made of known strings and one name that holds one of a few (x-transformers' ``kv_eq =
    'b j d' if k.ndim == 3 else 'b h j d'``, then ``f'b h i d, {kv_eq} -> b h i j'``), one
    ``(kv_eq == 'b j d', text)`` per value, the last one's test None (the remaining case).
    None when the file does not show it."""
    text = argument_string(call, name)
    if text is not None:
        return [(None, text)]
    if call.source is None:
        return None
    node = _source_argument(call, name, None)
    if isinstance(node, cst.Name):
        parts = [node]
    elif isinstance(node, cst.FormattedString):
        parts = [p.expression for p in node.parts if isinstance(p, cst.FormattedStringExpression)]
    else:
        return None
    unknown = [p for p in parts if not isinstance(p, cst.Integer) and known_string(p, call.ctx) is None]
    if not unknown or not all(isinstance(p, cst.Name) for p in unknown) or len({p.value for p in unknown}) != 1:
        return None  # the choices of one name only
    variable = unknown[0].value
    values = _choices(unknown[0], call.ctx)
    if values is None or not 1 < len(values) <= 4:
        return None
    choices = []
    for index, value in enumerate(values):
        text = known_string(node, call.ctx, given={variable: value})
        if text is None:
            return None
        test = None if index == len(values) - 1 else cst.Comparison(
            cst.Name(variable), [cst.ComparisonTarget(cst.Equal(), cst.SimpleString(repr(value)))])
        choices.append((test, text))
    return choices


def by_choice(choices, lower) -> cst.BaseExpression:
    """``lower(text)`` for each of ``argument_choices``, chained by their tests:
    ``a if eq == 'x' else b``, the last choice the remaining case."""
    result = None
    for test, text in reversed(choices):
        lowered = lower(text)
        result = lowered if test is None else cst.IfExp(test, lowered, result)
    return result


def _choices(node: cst.BaseExpression, ctx, depth: int = 0) -> list[str] | None:
    """The known strings a name may hold: every value assigned to it, each a known string or a
    conditional expression of them."""
    if depth > 4:
        return None
    if isinstance(node, cst.IfExp):
        body, orelse = _choices(node.body, ctx, depth + 1), _choices(node.orelse, ctx, depth + 1)
        return None if body is None or orelse is None else list(dict.fromkeys(body + orelse))
    text = known_string(node, ctx)
    if text is not None:
        return [text]
    if not isinstance(node, cst.Name):
        return None
    values = assigned_values(ctx, node)
    if not values:
        return None
    found: list[str] = []
    for value in values:
        more = _choices(value, ctx, depth + 1)
        if more is None:
            return None
        found += more
    return list(dict.fromkeys(found))


def known_string(node: cst.BaseExpression | None, ctx, depth: int = 0, given: dict | None = None) -> str | None:
    """The string ``node`` (torch source) holds as the file shows it: a literal;
    a name or ``self.attribute`` every assignment of which in the file gives the
    same known string (``eq = '... (n l) d -> ... n d'``); an f-string of known
    strings and integer literals. None when any part is not shown."""
    text = literal_string(node)
    if text is not None or node is None or depth > 8:
        return text
    if given and isinstance(node, cst.Name) and node.value in given:
        return given[node.value]
    if isinstance(node, (cst.Name, cst.Attribute)):
        values = assigned_values(ctx, node)
        if not values:
            return None
        texts = {known_string(value, ctx, depth + 1) for value in values}
        return texts.pop() if len(texts) == 1 and None not in texts else None
    if isinstance(node, cst.FormattedString):
        quote = "".join(c for c in node.start if c not in "fF")  # e.g. ', r", '''
        parts = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                try:  # the text as Python reads it ({{ and }} are braces)
                    text = ast.literal_eval(quote + part.value.replace("{{", "{").replace("}}", "}") + node.end)
                except (ValueError, SyntaxError):
                    return None
            elif part.conversion is not None or part.format_spec is not None or part.equal is not None:
                return None
            elif isinstance(part.expression, cst.Integer):
                text = str(ast.literal_eval(part.expression.value))
            else:
                text = known_string(part.expression, ctx, depth + 1, given)
            if text is None:
                return None
            parts.append(text)
        return "".join(parts)
    return None


def _source_argument(call, name: str, position: int | None) -> cst.BaseExpression | None:
    args = call.source.args
    if position is not None:
        positional = [a for a in args if a.keyword is None]
        return positional[position].value if position < len(positional) and not positional[position].star else None
    for arg in args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    names = [p.name for p in call.rule.params if p.kind == "positional"]
    index = names.index(name) if name in names else None
    positional = [a for a in args if a.keyword is None]
    if index is None or index >= len(positional) or any(a.star for a in positional[:index + 1]):
        return None
    return positional[index].value


def not_literal(what: str, node: cst.BaseExpression | None) -> Unconvertible:
    shown = code_of(node) if node is not None else "nothing"
    return Unconvertible(f"the {what} ({shown}) is not a string literal, so it cannot be lowered at conversion time; "
                         "write it as a literal or convert the call by hand")


def operand_list(args: list[cst.Arg]) -> list[cst.BaseExpression]:
    """Operands given one by one, or as one list/tuple display."""
    if any(arg.star for arg in args):
        raise Unconvertible("operands unpacked with *: their number is only known at run time")
    if len(args) == 1 and isinstance(args[0].value, (cst.List, cst.Tuple)):
        elements = args[0].value.elements
        if any(isinstance(e, cst.StarredElement) for e in elements):
            raise Unconvertible("operands unpacked with *: their number is only known at run time")
        return [e.value for e in elements]
    return [arg.value for arg in args]
