"""Putting a lowered expression in place of a call: each argument that the
expression uses more than once is evaluated once (through a lambda) unless
repeating it is harmless (a name, an attribute, a literal)."""

from __future__ import annotations

import keyword
from typing import Callable, Mapping

import libcst as cst

from rewrite_rules.index_notation.build import atom, call, lambda_of

Build = Callable[[cst.BaseExpression, Mapping[str, cst.BaseExpression]], cst.BaseExpression]


def repeatable(node: cst.BaseExpression) -> bool:
    """Evaluating ``node`` twice costs nothing and gives the same value."""
    if isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(node, cst.UnaryOperation):
        return repeatable(node.expression)
    if isinstance(node, cst.Attribute):
        return repeatable(node.value)
    if isinstance(node, cst.Subscript):
        return repeatable(node.value) and all(
            isinstance(element.slice, cst.Index) and repeatable(element.slice.value) for element in node.slice)
    return False


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[str, int] = {}

    def visit_Name(self, node: cst.Name) -> None:
        self.counts[node.value] = self.counts.get(node.value, 0) + 1


def names_in(*nodes: cst.CSTNode) -> dict[str, int]:
    collector = _Names()
    for node in nodes:
        node.visit(collector)
    return collector.counts


def fresh_name(preferred: tuple[str, ...], taken: set[str]) -> str:
    """The first preferred name that is free and not a keyword (einops axes may be called ``lambda``)."""
    for name in preferred:
        if name not in taken and not keyword.iskeyword(name):
            return name
    index = 1
    while f"{preferred[0]}{index}" in taken:
        index += 1
    return f"{preferred[0]}{index}"


def evaluated_once(build: Build, tensor: cst.BaseExpression, sizes: Mapping[str, cst.BaseExpression]):
    """``build(tensor, sizes)``; arguments used twice and not repeatable are
    passed through ``(lambda x, h: ...)(tensor, h_value)``."""
    probe = build(cst.Name("__tensor__"), {k: cst.Name(f"__size_{k}__") for k in sizes})
    uses = names_in(probe)
    once_tensor = uses.get("__tensor__", 0) > 1 and not repeatable(tensor)
    once_sizes = [k for k, v in sizes.items() if uses.get(f"__size_{k}__", 0) > 1 and not repeatable(v)]
    if not once_tensor and not once_sizes:
        return build(tensor, sizes)
    # parameters must not hide a name the expressions left inline refer to
    inline = [v for k, v in sizes.items() if k not in once_sizes] + ([] if once_tensor else [tensor])
    taken = set(names_in(*inline))
    params: list[tuple[str, None]] = []
    values: list[cst.BaseExpression] = []
    bound = dict(sizes)
    if once_tensor:
        name = fresh_name(("x", "t", "tensor"), taken)
        taken.add(name)
        params.append((name, None))
        values.append(tensor)
        tensor = cst.Name(name)
    for key in once_sizes:
        name = fresh_name((key, f"{key}_"), taken)
        taken.add(name)
        params.append((name, None))
        values.append(sizes[key])
        bound[key] = cst.Name(name)
    return call(atom(lambda_of(params, build(tensor, bound))), *values)
