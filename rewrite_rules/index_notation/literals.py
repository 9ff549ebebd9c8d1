"""Reading literal strings and operand lists out of bound calls."""

from __future__ import annotations

import ast

import libcst as cst

from rewrite_rules.api import Unconvertible, code_of


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
