"""einops ``rearrange``/``repeat``/``reduce`` patterns lowered to MindSpore
tensor methods, in einops' own order of steps:

1. split grouped input axes with one ``reshape`` (sizes from the axis-length
   keywords, ``-1`` for one unknown, the rest from ``x.shape``);
2. reduce the axes the output drops (reduce);
3. ``permute`` (or ``movedim`` around ``...``) into the output order;
4. add new axes: ``x[:, None]``, then ``tile`` the repeated ones (repeat);
5. merge output groups with ``flatten``.

Length-1 axes are reused rather than squeezed and added again, so
``repeat(cls, '() n d -> b n d', b=b)`` is ``cls.tile((b, 1, 1))`` and a
mean to ``b c () ()`` keeps its dims.
"""

from __future__ import annotations

from typing import Mapping

import libcst as cst

from rewrite_rules.index_notation.build import axes, floor_divide, integer, method, product, shape_at, shape_slice
from rewrite_rules.index_notation.equations import EquationError
from rewrite_rules.index_notation.layout import ELLIPSIS, Arranged
from rewrite_rules.index_notation.patterns import Pattern, Side

_REST = "(rest)"  # the `...` block merged into one axis, when reduce removes it
_UNIT = "(1)"  # prefix of length-1 axes
_METHOD = {"mean": "mean", "sum": "sum", "max": "amax", "min": "amin", "prod": "prod", "any": "any", "all": "all"}
_KEEPDIM = {"mean": "keepdim", "sum": "keepdim", "max": "keepdims", "min": "keepdims"}  # max, min: written by position


def lower_pattern(pattern: Pattern, tensor: cst.BaseExpression, sizes: Mapping[str, cst.BaseExpression],
                  reduction: str | None = None) -> cst.BaseExpression:
    """The MindSpore expression for one einops call. ``sizes``: the axis-length
    keywords; ``tensor`` may be used more than once (``x.shape[i]``).
    Raises EquationError for what einops rejects or what is not lowered."""
    left, right = pattern.left, pattern.right
    lengths = {**sizes, **{axis: integer(n) for axis, n in {**left.lengths, **right.lengths}.items()}}
    state = _split(left, tensor, lengths, merge_rest=left.has_ellipsis and not right.has_ellipsis)
    if reduction is not None:
        state = _reduce(state, right, reduction)
    target = _elementary(right, "R")
    # length-1 axes of the input serve as the new axes of the output
    units = [label for label in state.layout if label.startswith(_UNIT)]
    needed = [label for label in target if label not in state.layout and label != ELLIPSIS]
    renames = dict(zip(units, needed))
    state = Arranged(state.node, tuple(renames.get(label, label) for label in state.layout))
    state = state.squeezed([label for label in units if label not in renames])
    repeats = {label: lengths[label] for label in target if label in lengths and label not in left.axes}
    order = target
    if state.has_rest and any(target.index(label) < target.index(ELLIPSIS) for label in repeats):
        # tile's multiples cover the axes after `...`: tile there, then move
        order = [label for label in target if label not in repeats] + [label for label in target if label in repeats]
    state = state.arranged([label for label in order if label in state.layout]).with_new_axes(order)
    if repeats:
        state = state.tiled(repeats)
    state = state.arranged(target)
    for group in right.groups:
        if right.merged(group):
            state = state.flattened(list(group), f"({' '.join(group)})")
    return state.node


def _elementary(side: Side, tag: str) -> list[str]:
    """The axes of ``side`` one by one; ``()``/``1`` groups are unit axes."""
    axes_: list[str] = []
    for i, group in enumerate(side.groups):
        axes_ += list(group) if group else [f"{_UNIT}{tag}{i}"]
    return axes_


def _split(left: Side, tensor, lengths, merge_rest: bool) -> Arranged:
    """The input with one axis per elementary axis: a ``reshape`` when a group
    is composite or ``...`` merges into one axis."""
    groups = left.groups
    if not merge_rest and all(len(group) <= 1 for group in groups):
        return Arranged(tensor, tuple(_elementary(left, "L")))
    rest = groups.index((ELLIPSIS,)) if (ELLIPSIS,) in groups else None
    unknown = [axis for group in groups if len(group) > 1 for axis in group if axis not in lengths]
    minus_one = _REST if merge_rest else (unknown[0] if unknown else None)

    def dim(i: int) -> int:  # axis number of input dimension i (from the end after `...`)
        return i if rest is None or i < rest else i - len(groups)

    arguments: list[cst.Arg] = []
    layout: list[str] = []
    for i, group in enumerate(groups):
        if group == (ELLIPSIS,):
            if merge_rest:
                arguments.append(cst.Arg(integer(-1)))
                layout.append(_REST)
            else:
                stop = i - len(groups) + 1
                arguments.append(cst.Arg(shape_slice(tensor, i, stop or None), star="*"))
                layout.append(ELLIPSIS)
        elif len(group) == 1:
            arguments.append(cst.Arg(shape_at(tensor, dim(i))))
            layout.append(group[0])
        elif group:
            missing = [axis for axis in group if axis not in lengths]
            if len(missing) > 1:
                raise EquationError(f"could not infer sizes for {missing}")
            known = [lengths[axis] for axis in group if axis in lengths]
            for axis in group:
                if axis in lengths:
                    arguments.append(cst.Arg(lengths[axis]))
                elif axis == minus_one:
                    arguments.append(cst.Arg(integer(-1)))
                else:
                    arguments.append(cst.Arg(floor_divide(shape_at(tensor, dim(i)), product(known))))
                layout.append(axis)
    if any(argument.star for argument in arguments):
        arguments = [cst.Arg(_shape_tuple(arguments))]
    reshape = method(tensor, "reshape").with_changes(args=arguments)
    return Arranged(reshape, tuple(layout))


def _shape_tuple(arguments: list[cst.Arg]) -> cst.BaseExpression:
    """``x.shape[:-1] + (-1, 2)`` for the arguments ``*x.shape[:-1], -1, 2``: graph mode
    cannot unpack a slice of a shape it knows only when the graph runs into a call
    ("Invalid input args for unpack call", rotary-embedding-torch's rotate_half after
    a slice at a run-time dimension); it adds tuples (measured on MindSpore 2.10)."""
    parts: list[cst.BaseExpression] = []
    run: list[cst.Element] = []
    for argument in arguments:
        if argument.star:
            if run:
                parts.append(cst.Tuple(run))
                run = []
            parts.append(argument.value)
        else:
            run.append(cst.Element(argument.value))
    if run:
        parts.append(cst.Tuple(run))
    result = parts[0]
    for part in parts[1:]:
        result = cst.BinaryOperation(result, cst.Add(), part)
    return result


def _reduce(state: Arranged, right: Side, reduction: str) -> Arranged:
    gone = [label for label in state.layout
            if label not in right.axes and not label.startswith(_UNIT) and label != ELLIPSIS]
    if state.has_rest and not right.has_ellipsis:
        raise EquationError("internal: '...' was not merged")  # _split merges it
    if not gone:
        return state
    units = sum(1 for label in state.layout if label.startswith(_UNIT))
    keyword = _KEEPDIM.get(reduction)
    if keyword is None or sum(1 for group in right.groups if not group) != len(gone) + units:
        return state.reduced(_METHOD[reduction], gone)
    # keep the reduced axes with length 1: they become the output's unit axes
    numbers = sorted(state.axis(label) for label in gone)
    how = _METHOD[reduction]
    if how in ("amax", "amin"):  # graph mode's Tensor.amax takes no keepdims keyword: by position
        node = method(state.node, how, axes(numbers), cst.Name("True"))
    else:
        node = method(state.node, how, axes(numbers), **{keyword: cst.Name("True")})
    return Arranged(node, tuple(f"{_UNIT}{label}" if label in gone else label for label in state.layout))
