"""Names for the variables and functions a structural transform writes."""

from __future__ import annotations


def fresh_name(name: str, taken: set[str]) -> str:
    """``name``, or ``name2``, ``name3`` ... whichever is not taken yet (and take it)."""
    candidate, number = name, 2
    while candidate in taken:
        candidate, number = f"{name}{number}", number + 1
    taken.add(candidate)
    return candidate
