"""Einsum equations, from torch's spelling (``"bhid,bhjd->bhij"``) or
einops' (``"b h i d, b h j d -> b h i j"``), as labels per operand."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from rewrite_rules.index_notation.layout import ELLIPSIS


class EquationError(ValueError):
    """The equation is not valid (the message says why)."""


@dataclass(frozen=True)
class Equation:
    inputs: tuple[tuple[str, ...], ...]  # labels per operand; ELLIPSIS at most once each
    output: tuple[str, ...]


def parse_torch_equation(text: str) -> Equation:
    """torch.einsum's grammar: letters, ``...``, commas, an optional ``->``;
    spaces are ignored. Without ``->`` the output is every label used once,
    sorted (upper case first), after ``...`` if any operand has it."""
    text = "".join(text.split())
    left, arrow, right = text.partition("->")
    if "->" in right:
        raise EquationError("more than one '->'")
    inputs = tuple(_torch_labels(part, f"operand {i}") for i, part in enumerate(left.split(",")))
    if arrow:
        output = _torch_labels(right, "output")
    else:
        counts = Counter(label for labels in inputs for label in labels if label != ELLIPSIS)
        rest = (ELLIPSIS,) if any(ELLIPSIS in labels for labels in inputs) else ()
        output = rest + tuple(sorted(label for label, n in counts.items() if n == 1))
    return _checked(Equation(inputs, output))


def _torch_labels(text: str, where: str) -> tuple[str, ...]:
    labels: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("...", i):
            labels.append(ELLIPSIS)
            i += 3
        elif text[i].isascii() and text[i].isalpha():
            labels.append(text[i])
            i += 1
        else:
            raise EquationError(f"invalid subscript {text[i]!r} in {where}")
    return tuple(labels)


def parse_einops_equation(pattern: str) -> Equation:
    """einops.einsum's grammar: axis names separated by spaces, operands by
    commas, ``->`` required; no parentheses or numbers."""
    left, arrow, right = pattern.partition("->")
    if not arrow:
        raise EquationError("einops.einsum needs '->' in the pattern")
    inputs = tuple(_einops_labels(part, f"operand {i}") for i, part in enumerate(left.split(",")))
    return _checked(Equation(inputs, _einops_labels(right, "output")))


def _einops_labels(text: str, where: str) -> tuple[str, ...]:
    labels = []
    for token in text.replace("…", " ... ").split():
        if token == ELLIPSIS:
            labels.append(ELLIPSIS)
        elif token.isidentifier():
            labels.append(token)
        else:
            raise EquationError(f"invalid axis name {token!r} in {where} (einops.einsum takes names only)")
    return tuple(labels)


def _checked(equation: Equation) -> Equation:
    for i, labels in enumerate(equation.inputs):
        if labels.count(ELLIPSIS) > 1:
            raise EquationError(f"more than one '...' in operand {i}")
    known = {label for labels in equation.inputs for label in labels}
    for label in equation.output:
        if equation.output.count(label) > 1:
            raise EquationError(f"output subscript {label!r} appears more than once")
        if label not in known:
            raise EquationError(f"output subscript {label!r} does not appear in any operand")
    return equation
