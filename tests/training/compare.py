"""Per-step comparison of two training runs' logged values.

A run is ``{series: [[step, value], ...]}`` (or a plain list of values). Two
runs agree when they have the same series, the same steps, and at every step
``|mindspore - torch| <= atol + rtol * |torch|`` (numpy's isclose): every
step counts, not a summary of the last few.
"""

from __future__ import annotations


def as_series(run) -> dict[str, list[list]]:
    """Normalise a list of losses (one per step, or (D, G) pairs per step) to named series."""
    if isinstance(run, dict):
        return run
    if run and isinstance(run[0], (list, tuple)):
        return {f"loss{i}": [[step, pair[i]] for step, pair in enumerate(run)] for i in range(len(run[0]))}
    return {"loss": [[step, value] for step, value in enumerate(run)]}


def max_relative_difference(expected: list, actual: list) -> float:
    return max((abs(a[1] - e[1]) / max(abs(e[1]), 1e-12) for e, a in zip(expected, actual)), default=0.0)


def mismatches(expected, actual, rtol: float | dict, atol: float = 1e-8) -> list[str]:
    """What differs, one line per problem; empty when the runs agree step by step."""
    expected, actual = as_series(expected), as_series(actual)
    problems = []
    if set(expected) != set(actual):
        problems.append(f"series differ: torch {sorted(expected)}, mindspore {sorted(actual)}")
    for name in sorted(set(expected) & set(actual)):
        tolerance = rtol[name] if isinstance(rtol, dict) else rtol
        e, a = expected[name], actual[name]
        if [s for s, _ in e] != [s for s, _ in a]:
            problems.append(f"{name}: steps differ: torch {[s for s, _ in e]}, mindspore {[s for s, _ in a]}")
            continue
        for (step, want), (_, got) in zip(e, a):
            if abs(got - want) > atol + tolerance * abs(want):
                problems.append(f"{name} step {step}: torch {want!r}, mindspore {got!r} "
                                f"(relative difference {abs(got - want) / max(abs(want), 1e-12):.2e} > {tolerance:.0e})")
    return problems
