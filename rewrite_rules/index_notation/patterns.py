"""einops patterns (``"b c (h p1) (w p2) -> b (h w) (p1 p2 c)"``), parsed
and checked with einops' own rules for rearrange, repeat and reduce."""

from __future__ import annotations

from dataclasses import dataclass

from rewrite_rules.index_notation.equations import EquationError
from rewrite_rules.index_notation.layout import ELLIPSIS

REDUCTIONS = ("mean", "sum", "max", "min", "prod", "any", "all")


@dataclass(frozen=True)
class Side:
    """One side of a pattern. Each group is the elementary axes of one
    dimension: ``(h d)`` -> ("h", "d"); ``1``/``()`` -> (); anonymous axes
    (``2``) get unique names like ``"2'0"`` with their length in ``lengths``."""

    groups: tuple[tuple[str, ...], ...]
    lengths: dict[str, int]
    rest_grouped: bool = False  # `(...)`: the `...` axes merge into one

    def merged(self, group: tuple[str, ...]) -> bool:
        """Whether ``group`` merges several axes (or may: ``(...)``)."""
        return len(group) > 1 or (group == (ELLIPSIS,) and self.rest_grouped)

    @property
    def axes(self) -> list[str]:
        return [axis for group in self.groups for axis in group]

    @property
    def names(self) -> set[str]:
        return {axis for axis in self.axes if axis != ELLIPSIS and axis not in self.lengths}

    @property
    def has_ellipsis(self) -> bool:
        return ELLIPSIS in self.axes


@dataclass(frozen=True)
class Pattern:
    left: Side
    right: Side


def parse_pattern(pattern: str, operation: str, sizes: set[str]) -> Pattern:
    """Parse and check ``pattern`` for ``operation`` (rearrange, repeat,
    reduce) given the names of the axis-length keywords. Raises EquationError
    with einops' reason."""
    left_text, arrow, right_text = pattern.partition("->")
    if not arrow or "->" in right_text:
        raise EquationError("a pattern needs exactly one '->'")
    counter = iter(range(1 << 30))
    left = _side(left_text, counter, "left")
    right = _side(right_text, counter, "right")
    _check(left, right, operation, sizes)
    return Pattern(left, right)


def _side(text: str, counter, where: str) -> Side:
    text = text.replace("…", "...")
    groups: list[tuple[str, ...]] = []
    lengths: dict[str, int] = {}
    current: list[str] | None = None
    seen: set[str] = set()
    rest_grouped = False
    for token in text.replace("(", " ( ").replace(")", " ) ").split():
        if token == "(":
            if current is not None:
                raise EquationError(f"nested parentheses on the {where} side")
            current = []
            continue
        if token == ")":
            if current is None:
                raise EquationError(f"unbalanced parentheses on the {where} side")
            groups.append(tuple(current))
            current = None
            continue
        if token == ELLIPSIS:
            axis = ELLIPSIS
            if current is not None and where == "left":
                raise EquationError("'...' inside parentheses on the left side")
            rest_grouped = current is not None
        elif token.isdecimal():
            if int(token) == 1:
                if current is None:
                    groups.append(())
                continue
            axis = f"{int(token)}'{next(counter)}"
            lengths[axis] = int(token)
        elif token.isidentifier() and not token.startswith("_") and not token.endswith("_"):
            axis = token
        else:
            raise EquationError(f"invalid axis {token!r} on the {where} side")
        if axis in seen:
            raise EquationError(f"axis {token!r} appears twice on the {where} side")
        seen.add(axis)
        if current is None:
            groups.append((axis,))
        else:
            current.append(axis)
    if current is not None:
        raise EquationError(f"unbalanced parentheses on the {where} side")
    return Side(tuple(groups), lengths, rest_grouped)


def _check(left: Side, right: Side, operation: str, sizes: set[str]) -> None:
    if operation in ("rearrange", "repeat") and left.has_ellipsis != right.has_ellipsis:
        raise EquationError("'...' must appear on both sides or neither")
    if operation == "reduce" and right.has_ellipsis and not left.has_ellipsis:
        raise EquationError("'...' on the right side only")
    if operation == "rearrange":
        if left.lengths or right.lengths:
            raise EquationError("non-unitary anonymous axes are not supported in rearrange")
        if left.names != right.names:
            raise EquationError(f"identifiers only on one side: {sorted(left.names ^ right.names)}")
    elif operation == "repeat":
        if left.lengths:
            raise EquationError("anonymous axes on the left side of repeat")
        if not left.names <= right.names:
            raise EquationError(f"identifiers missing on the right side: {sorted(left.names - right.names)}")
        missing = right.names - left.names - sizes
        if missing:
            raise EquationError(f"specify sizes for new axes in repeat: {sorted(missing)}")
    else:
        if right.lengths:
            raise EquationError("anonymous axes on the right side of reduce")
        if not right.names <= left.names:
            raise EquationError(f"identifiers missing on the left side: {sorted(right.names - left.names)}")
    unused = sizes - left.names - right.names
    if unused:
        raise EquationError(f"axis {sorted(unused)[0]} is not used in the pattern")
