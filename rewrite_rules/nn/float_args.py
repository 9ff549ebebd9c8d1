"""Float-only MindSpore arguments that torch also takes as ints.

Measured on MindSpore 2.10: ``nn.LSTM/GRU/RNN(dropout=0)``, ``nn.Dropout1d/2d/3d(p=0)``,
``ops.dropout(x, p=0)`` / ``ops.dropout1d``, the ``eps`` of BatchNorm, LayerNorm,
GroupNorm (and their ops) refuse a Python int ("the type of 'dropout' must be
'float', but got 'int'", "Failed calling BatchNorm with ... epsilon=int"), where
torch takes ``0`` or ``1`` as readily as ``0.0``. An int literal is written as a
float literal, any other expression goes through ``float()``. (``nn.Dropout``
itself takes an int ``p``.) This module declares no rules.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.api import literal_value

RULES: list = []


def as_float(expr: cst.BaseExpression, ctx=None) -> cst.BaseExpression:
    """``expr`` as MindSpore's float parameters need it: ``0`` -> ``0.0``, ``v`` -> ``float(v)``."""
    try:
        value = literal_value(expr)
    except (ValueError, SyntaxError, TypeError):
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "float":
            return expr
        return cst.Call(cst.Name("float"), [cst.Arg(expr.with_changes(lpar=[], rpar=[]))])
    if isinstance(value, int) and not isinstance(value, bool):
        return cst.parse_expression(repr(float(value)))
    return expr


def int_literal_as_float(expr: cst.BaseExpression, ctx=None) -> cst.BaseExpression:
    """An int literal as a float literal; anything else (which may be a tensor) as it is."""
    try:
        value = literal_value(expr)
    except (ValueError, SyntaxError, TypeError):
        return expr
    if isinstance(value, int) and not isinstance(value, bool):
        return cst.parse_expression(repr(float(value)))
    return expr
