"""A generated tensor expression and the axes it holds, in order.

Every step of a lowering (permute, insert or drop axes, diagonal, sum,
flatten) returns a new ``Arranged``: the expression with one more method call
and its new layout. A layout may hold ``ELLIPSIS``, a block of axes whose
number is only known at run time; axes after it are addressed from the end
(negative axis numbers), so the generated code works for any rank.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import libcst as cst

from rewrite_rules.index_notation.build import FULL, NEW, REST, axes, index_with, int_tuple, method

ELLIPSIS = "..."


@dataclass(frozen=True)
class Arranged:
    node: cst.BaseExpression
    layout: tuple[str, ...]

    @property
    def has_rest(self) -> bool:
        return ELLIPSIS in self.layout

    def index(self, position: int) -> int:
        """The axis number of a layout position (from the end after ``...``)."""
        if self.has_rest and position > self.layout.index(ELLIPSIS):
            return position - len(self.layout)
        return position

    def axis(self, label: str) -> int:
        return self.index(self.layout.index(label))

    def _then(self, node: cst.BaseExpression, layout) -> "Arranged":
        return Arranged(node, tuple(layout))

    # -- moving axes ----------------------------------------------------------
    def arranged(self, order) -> "Arranged":
        """The same axes in ``order``: swapaxes, permute, or movedim around ``...``."""
        order = tuple(order)
        if order == self.layout:
            return self
        assert sorted(order) == sorted(self.layout), (order, self.layout)
        if not self.has_rest:
            perm = [self.layout.index(label) for label in order]
            moved = [i for i, p in enumerate(perm) if p != i]
            if len(moved) == 2:
                first, second = moved
                if second == len(perm) - 1 and first == second - 1:
                    first, second = -2, -1  # the matrix transpose idiom
                return self._then(method(self.node, "swapaxes", first, second), order)
            return self._then(method(self.node, "permute", *perm), order)
        target = Arranged(self.node, order)
        named = [label for label in order if label != ELLIPSIS]
        # the fewest axes to name (movedim keeps the others in order around them)
        moving = next(list(subset) for count in range(1, len(named) + 1)
                      for subset in combinations(named, count) if _movedim_gives(self, target, list(subset)))
        source = [self.axis(label) for label in moving]
        destination = [target.axis(label) for label in moving]
        if len(moving) == 1:
            node = method(self.node, "movedim", source[0], destination[0])
        else:
            node = method(self.node, "movedim", int_tuple(source), int_tuple(destination))
        return self._then(node, order)

    # -- adding and removing axes -------------------------------------------
    def with_new_axes(self, layout, implicit_leading: bool = False, keep_last: int = 0) -> "Arranged":
        """Insert length-1 axes so the layout becomes ``layout`` (which keeps
        the present axes in their order). ``implicit_leading``: leading new
        axes may be left to broadcasting, except among the last ``keep_last``
        (matmul needs both matrix axes)."""
        layout = tuple(layout)
        present = [label for label in layout if label in self.layout]
        assert present == list(self.layout), (layout, self.layout)
        items = [REST if label == ELLIPSIS else FULL if label in self.layout else NEW for label in layout]
        present = items.count(FULL)
        if REST not in items and present >= 2 and items[:present] == [FULL] * present and NEW in items:
            items = [REST] + items[present:]  # new axes only at the end: x[..., None]
        # trailing `:` are implicit, unless a `...` before them fixes their place
        while items and (items[-1] == REST or (items[-1] == FULL and REST not in items)):
            items.pop()
        dropped = 0
        if implicit_leading and REST not in items:
            droppable = len(layout) - keep_last
            while items and items[0] == NEW and dropped < droppable:
                items.pop(0)
                dropped += 1
        layout = layout[dropped:]  # left to broadcasting: not axes of this tensor
        if NEW not in items:
            return self._then(self.node, layout)
        return self._then(index_with(self.node, items), layout)

    def squeezed(self, labels) -> "Arranged":
        if not labels:
            return self
        numbers = sorted(self.axis(label) for label in labels)
        node = method(self.node, "squeeze", axes(numbers))
        return self._then(node, [label for label in self.layout if label not in labels])

    def diagonal(self, label: str) -> "Arranged":
        """The diagonal of the first two ``label`` axes, as a last axis (torch's and MindSpore's rule)."""
        first = self.layout.index(label)
        second = self.layout.index(label, first + 1)
        node = method(self.node, "diagonal", axis1=self.index(first), axis2=self.index(second))
        layout = [item for i, item in enumerate(self.layout) if i not in (first, second)]
        return self._then(node, [*layout, label])

    def summed(self, labels) -> "Arranged":
        return self.reduced("sum", labels)

    def reduced(self, how: str, labels) -> "Arranged":
        """Reduce ``labels`` away with sum/mean/amax/amin/prod/any/all."""
        if not labels:
            return self
        if how == "prod" and len(labels) > 1:  # MindSpore's prod takes one axis
            state = self
            for label in sorted(labels, key=self.layout.index, reverse=True):
                state = state.reduced("prod", [label])
            return state
        numbers = sorted(self.axis(label) for label in labels)
        layout = [label for label in self.layout if label not in labels]
        if how in ("amax", "amin"):
            return self._then(method(self.node, how, axis=axes(numbers)), layout)
        return self._then(method(self.node, how, axes(numbers)), layout)

    def flattened(self, labels, name: str) -> "Arranged":
        """Merge the adjacent axes ``labels`` (in layout order; ``...`` may be
        one of them) into one axis ``name``."""
        start = self.layout.index(labels[0])
        stop = start + len(labels) - 1
        assert tuple(self.layout[start : stop + 1]) == tuple(labels), (labels, self.layout)
        layout = [*self.layout[:start], name, *self.layout[stop + 1 :]]
        if len(labels) == 1 and labels[0] != ELLIPSIS:
            return self._then(self.node, layout)
        # `...` spans from its position (counted from the start) to the axis
        # before the ones after it (counted from the end)
        last = stop - len(self.layout) if self.layout[stop] == ELLIPSIS else self.index(stop)
        node = method(self.node, "flatten", self.index(start), last)
        return self._then(node, layout)

    def tiled(self, repeats: dict[str, cst.BaseExpression]) -> "Arranged":
        """Repeat length-1 axes ``repeats`` times (whole-tensor tiling: the
        multiples cover the axes after ``...``, MindSpore prepends ones)."""
        start = self.layout.index(ELLIPSIS) + 1 if self.has_rest else 0
        multiples = [repeats.get(label, 1) for label in self.layout[start:]]
        return self._then(method(self.node, "tile", int_tuple(multiples)), self.layout)


def _movedim_gives(current: Arranged, target: Arranged, moving: list[str]) -> bool:
    """Whether ``movedim`` of just ``moving`` yields ``target`` for every
    length of the ``...`` block (checked for 0, 1 and 2 axes)."""
    for rest in range(3):
        before = _expand(current.layout, rest)
        after = _expand(target.layout, rest)
        size = len(before)
        placed: list[str | None] = [None] * size
        for label in moving:
            placed[target.axis(label) % size] = label
        others = iter(label for label in before if label not in moving)
        result = [label if label is not None else next(others) for label in placed]
        if result != after:
            return False
    return True


def _expand(layout, rest: int) -> list[str]:
    expanded = []
    for label in layout:
        expanded += [f"...{i}" for i in range(rest)] if label == ELLIPSIS else [label]
    return expanded
