"""Small libcst builders for the generated shape code (no text templates)."""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from rewrite_rules.api import keyword_arg

# Expressions that can take a method call or a subscript without parentheses.
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.Integer, cst.Float, cst.SimpleString,
          cst.ConcatenatedString, cst.List, cst.Tuple, cst.Dict, cst.Set)


def atom(node: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` parenthesised unless it already binds tighter than ``.``/``[]``/``*``."""
    if isinstance(node, _ATOMS) or node.lpar:
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def integer(value: int) -> cst.BaseExpression:
    if value < 0:
        return cst.UnaryOperation(cst.Minus(), cst.Integer(str(-value)))
    return cst.Integer(str(value))


def value(item) -> cst.BaseExpression:
    """An int becomes a literal; a node stays as it is."""
    return integer(item) if isinstance(item, int) else item


def int_tuple(values: Iterable) -> cst.Tuple:
    elements = [cst.Element(value(v)) for v in values]
    if len(elements) == 1:
        elements = [elements[0].with_changes(comma=cst.Comma())]
    return cst.Tuple(elements)


def axes(values: list[int]) -> cst.BaseExpression:
    """One axis as an int, several as a tuple (never an empty tuple: MindSpore
    reduces every axis for ``()``)."""
    assert values, "no axes"
    return integer(values[0]) if len(values) == 1 else int_tuple(values)


def method(receiver: cst.BaseExpression, name: str, *args, **keywords) -> cst.Call:
    arguments = [cst.Arg(value(a)) for a in args]
    arguments += [keyword_arg(k, value(v)) for k, v in keywords.items()]
    return cst.Call(cst.Attribute(atom(receiver), cst.Name(name)), arguments)


def call(func: cst.BaseExpression, *args) -> cst.Call:
    return cst.Call(func, [cst.Arg(value(a)) for a in args])


def multiply(left: cst.BaseExpression, right: cst.BaseExpression) -> cst.BinaryOperation:
    return cst.BinaryOperation(atom(left), cst.Multiply(), atom(right))


def floor_divide(left: cst.BaseExpression, right: cst.BaseExpression) -> cst.BinaryOperation:
    return cst.BinaryOperation(atom(left), cst.FloorDivide(), atom(right))


def product(factors: list[cst.BaseExpression]) -> cst.BaseExpression:
    result = factors[0]
    for factor in factors[1:]:
        result = multiply(result, factor)
    return result


def shape_at(tensor: cst.BaseExpression, index: int) -> cst.Subscript:
    """``x.shape[i]``."""
    shape = cst.Attribute(atom(tensor), cst.Name("shape"))
    return cst.Subscript(shape, [cst.SubscriptElement(cst.Index(integer(index)))])


def shape_slice(tensor: cst.BaseExpression, start: int, stop: int | None) -> cst.Subscript:
    """``x.shape[start:stop]``."""
    shape = cst.Attribute(atom(tensor), cst.Name("shape"))
    bounds = cst.Slice(lower=integer(start) if start else None, upper=integer(stop) if stop is not None else None)
    return cst.Subscript(shape, [cst.SubscriptElement(bounds)])


FULL = "full"  # a `:` slice
NEW = "new"  # None: a new axis of length 1
REST = "rest"  # `...`


def index_with(tensor: cst.BaseExpression, items: list[str]) -> cst.BaseExpression:
    """``x[:, None, ...]`` from FULL/NEW/REST items."""
    elements = []
    for item in items:
        if item == FULL:
            index = cst.Slice(lower=None, upper=None)
        elif item == NEW:
            index = cst.Index(cst.Name("None"))
        else:
            index = cst.Index(cst.Ellipsis())
        elements.append(cst.SubscriptElement(index))
    return cst.Subscript(atom(tensor), elements)


def lambda_of(params: list[tuple[str, cst.BaseExpression | None]], body: cst.BaseExpression) -> cst.Lambda:
    """``lambda a, b=default: body``."""
    parameters = []
    for name, default in params:
        if default is None:
            parameters.append(cst.Param(cst.Name(name)))
        else:
            parameters.append(cst.Param(cst.Name(name), default=default, equal=cst.AssignEqual(
                whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))))
    return cst.Lambda(cst.Parameters(params=parameters), body)
