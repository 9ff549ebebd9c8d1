"""Groupings shared by the human-readable formats."""

from __future__ import annotations

from collections import Counter, defaultdict

from transpiler.analyze.model import ApiRow, Finding, ProjectAnalysis

MAX_LOCATIONS = 6


def locations_text(locations: list[str], limit: int = MAX_LOCATIONS) -> str:
    shown = ", ".join(locations[:limit])
    return shown + (f" (+{len(locations) - limit} more)" if len(locations) > limit else "")


def row_detail(row: ApiRow) -> str:
    """Arguments and what ms-migrate does about them, or the reason/message."""
    if row.arguments:
        return "; ".join(f"{name}: {action}" for name, action in row.arguments.items())
    if row.category.key in ("as_is",):
        return ""
    text = " / ".join(row.messages[:2])
    if row.category.key == "structural":
        text += f" [convert today: {', '.join(row.outcomes)}]"
    return text


def findings_by_kind(project: ProjectAnalysis) -> dict[str, list[Finding]]:
    grouped: dict[str, list[Finding]] = defaultdict(list)
    for finding in project.findings:
        grouped[finding.kind].append(finding)
    return dict(sorted(grouped.items()))


def ecosystem_rows(project: ProjectAnalysis) -> list[tuple[str, str, int, list[str]]]:
    """(package, module, import count, locations)."""
    counts: Counter = Counter()
    where: dict[tuple[str, str], list[str]] = defaultdict(list)
    for entry in project.ecosystem:
        counts[(entry.package, entry.module)] += 1
        where[(entry.package, entry.module)].append(entry.where)
    return [(p, m, n, where[(p, m)]) for (p, m), n in sorted(counts.items())]
