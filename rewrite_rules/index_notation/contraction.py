"""An einsum equation lowered to operations MindSpore runs on CPU.

Like torch (without opt_einsum): each operand first takes the diagonal of
repeated labels and sums the labels no other operand or the output has; then
the operands are contracted pairwise, left to right. A pair contracts with

- a broadcast product when no label is summed (outer products, Hadamard);
- a product and ``sum`` when the two operands share all labels;
- ``ops.matmul`` otherwise: shared kept labels (and labels only one side
  has, beyond one per side) become batch axes (broadcast where one side lacks
  them), summed labels the inner axis (flattened when several), so no shape
  is ever spelled out and each operand expression is used once.

Among the layouts that do this, the one broadcasting least, then needing the
fewest permutes, is chosen: an attention score reads
``ops.matmul(q, k.swapaxes(-2, -1))``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations
from typing import Callable

import libcst as cst

from rewrite_rules.index_notation.build import call, multiply
from rewrite_rules.index_notation.equations import Equation, EquationError
from rewrite_rules.index_notation.layout import ELLIPSIS, Arranged

# Placeholder axes of length 1 (never a label: labels are letters or identifiers).
_ROW, _COLUMN, _INNER = "(row)", "(column)", "(inner)"


def lower_einsum(equation: Equation, operands: list[cst.BaseExpression], ref: Callable[[str], cst.BaseExpression]):
    """The MindSpore expression for ``einsum(equation, *operands)``.
    ``ref`` names a MindSpore function (``ctx.ref``). Raises EquationError."""
    if len(operands) != len(equation.inputs):
        raise EquationError(f"the equation has {len(equation.inputs)} operands, the call passes {len(operands)}")
    if ELLIPSIS not in equation.output and any(ELLIPSIS in labels for labels in equation.inputs):
        raise EquationError("'...' is summed away (it is missing from the output): not lowered")
    states = [_prepared(equation, i, node) for i, node in enumerate(operands)]
    result = states[0]
    for i in range(1, len(states)):
        later = set(equation.output).union(*equation.inputs[i + 1 :])
        final = equation.output if i == len(states) - 1 else None
        result = _contract(result, states[i], later, _ranking(equation, i), final, ref)
    return result.arranged(equation.output).node


def _prepared(equation: Equation, index: int, node: cst.BaseExpression) -> Arranged:
    """Diagonals of repeated labels, then sums of labels used nowhere else."""
    state = Arranged(node, equation.inputs[index])
    while True:
        repeated = [label for label in state.layout if label != ELLIPSIS and state.layout.count(label) > 1]
        if not repeated:
            break
        state = state.diagonal(repeated[0])
    elsewhere = set(equation.output).union(*(labels for i, labels in enumerate(equation.inputs) if i != index))
    return state.summed([label for label in state.layout if label not in elsewhere])


def _ranking(equation: Equation, step: int) -> dict[str, int]:
    """Preferred order of labels: ``...`` first, then output order, then the
    order in which later operands use them."""
    order = [ELLIPSIS, *equation.output]
    for labels in equation.inputs[step + 1 :]:
        order += labels
    rank: dict[str, int] = {}
    for label in order:
        rank.setdefault(label, len(rank))
    return rank


@dataclass(frozen=True)
class _Plan:
    left: tuple[str, ...]  # layout the left operand is brought to
    right: tuple[str, ...]
    result: tuple[str, ...]  # layout of the product (placeholders squeezed later)
    how: str  # "multiply", "multiply-sum" or "matmul"
    summed: tuple[str, ...] = ()
    swap: bool = False  # the second operand goes left


def _contract(a: Arranged, b: Arranged, keep: set[str], rank, final, ref) -> Arranged:
    shared = [label for label in a.layout if label in b.layout]
    summed = [label for label in shared if label not in keep]
    plans = list(_plans(a, b, summed, rank))
    plan = min(plans, key=lambda p: _cost(p, a, b, final))
    first, second = (b, a) if plan.swap else (a, b)
    if plan.how != "matmul":
        left, right = _brought(first, plan.left), _brought(second, plan.right)
    else:
        contracted = [label for label in plan.left if label in summed]
        left = _brought(first, plan.left, matrix=len(contracted) + 1)
        right = _brought(second, plan.right, matrix=len(contracted) + 1)
        if len(contracted) > 1:
            left = left.flattened(contracted, _INNER)
            right = right.flattened(contracted, _INNER)
        product = Arranged(call(ref("mindspore.ops.matmul"), left.node, right.node), plan.result)
        return product.squeezed([label for label in (_ROW, _COLUMN) if label in plan.result])
    product = Arranged(multiply(left.node, right.node), plan.left)
    return product.summed(list(plan.summed))


def _brought(state: Arranged, layout: tuple[str, ...], matrix: int = 0) -> Arranged:
    """Permute ``state`` into the order of ``layout`` and add the axes it
    lacks (a matmul operand keeps its last ``matrix`` axes explicit)."""
    if ELLIPSIS not in state.layout:
        layout = tuple(label for label in layout if label != ELLIPSIS)  # broadcasting adds it
    own = [label for label in layout if label in state.layout]
    return state.arranged(own).with_new_axes(layout, implicit_leading=True, keep_last=matrix)


def _plans(a: Arranged, b: Arranged, summed, rank):
    union = list(dict.fromkeys([*a.layout, *b.layout]))
    rest = [ELLIPSIS] if ELLIPSIS in union else []
    kept = [label for label in union if label not in summed and label != ELLIPSIS]
    if not summed:  # outer / elementwise product
        for order in _orders(kept, a, b, rank):
            layout = tuple(rest + order)
            yield _Plan(layout, layout, layout, "multiply")
        return
    if set(a.layout) == set(b.layout):
        for order in _orders(kept, a, b, rank):
            for inner in _orders(summed, a, b, rank):
                layout = tuple(rest + order + inner)
                yield _Plan(layout, layout, tuple(rest + order), "multiply-sum", tuple(inner))
        return
    for swap in (False, True):
        first, second = (b, a) if swap else (a, b)
        rows = [label for label in first.layout if label not in second.layout and label != ELLIPSIS]
        columns = [label for label in second.layout if label not in first.layout and label != ELLIPSIS]
        for row in [*rows, _ROW]:
            for column in [*columns, _COLUMN]:
                batch = [label for label in kept if label not in (row, column)]
                for order in _orders(batch, first, second, rank):
                    for inner in _orders(summed, first, second, rank):
                        left = tuple(rest + order + [row] + inner)
                        right = tuple(rest + order + inner + [column])
                        yield _Plan(left, right, tuple(rest + order + [row, column]), "matmul", swap=swap)


def _orders(labels, a: Arranged, b: Arranged, rank) -> list[list[str]]:
    """Candidate orders of ``labels``: preferred order, and each operand's own."""
    candidates = [sorted(labels, key=lambda label: rank.get(label, len(rank)))]
    for state in (a, b):
        candidates.append(sorted(labels, key=lambda label: state.layout.index(label) if label in state.layout else -1))
    if len(labels) <= 3:
        candidates += [list(p) for p in permutations(labels)]
    unique = []
    for order in candidates:
        if order not in unique:
            unique.append(order)
    return unique


def _cost(plan: _Plan, a: Arranged, b: Arranged, final) -> tuple:
    first, second = (b, a) if plan.swap else (a, b)
    moves = _moves(first, plan.left) + _moves(second, plan.right)
    result = [label for label in plan.result if label not in (_ROW, _COLUMN)]
    last = int(final is not None and tuple(result) != tuple(final))
    placeholders = sum(label in plan.result for label in (_ROW, _COLUMN))
    # a label only one side has, as a batch axis, makes matmul broadcast (copy) the other side
    broadcast = sum(1 for label in plan.result[:-2] if (label in first.layout) != (label in second.layout)
                    and label != ELLIPSIS) if plan.how == "matmul" else 0
    return (broadcast, moves + last, placeholders, plan.swap)


def _moves(state: Arranged, layout) -> int:
    own = [label for label in layout if label in state.layout]
    return int(tuple(own) != state.layout)
