"""Output formats of ``ms-migrate analyze``: one module per format, each with
``NAME`` and ``render(project, color=False) -> str``; found by walking this package."""

from __future__ import annotations

import importlib
import pkgutil
from functools import lru_cache

from transpiler import __version__
from transpiler.analyze.model import Category, ProjectAnalysis


@lru_cache(maxsize=1)
def formats() -> dict[str, object]:
    import transpiler.analyze.formats as package

    found = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        if hasattr(module, "NAME") and hasattr(module, "render"):
            found[module.NAME] = module
    return found


def render(project: ProjectAnalysis, name: str, color: bool = False) -> str:
    return formats()[name].render(project, color=color)


def summary(project: ProjectAnalysis) -> dict:
    """The headline numbers every format shows."""
    statuses = [f.status for f in project.files]
    counts = project.category_counts()
    return {
        "files": len(project.files),
        "analysed": statuses.count("analysed"),
        "skipped": statuses.count("skipped"),
        "failed": statuses.count("failed"),
        "api_uses": sum(counts.values()),
        "apis": len({u.api for u in project.uses}),
        "categories": {c.key: counts[c] for c in Category},
        "findings": len(project.findings),
        "ecosystem_imports": len(project.ecosystem),
        "checklist_items": len(project.checklist),
        "version": __version__,
    }


def summary_lines(project: ProjectAnalysis) -> list[str]:
    data = summary(project)
    counts = project.category_counts()
    lines = [
        f"files: {data['files']} Python files, {data['analysed']} analysed, {data['skipped']} without torch, "
        f"{data['failed']} failed",
        f"torch API uses: {data['api_uses']} ({data['apis']} distinct APIs)",
    ]
    lines += [f"  {c.value}: {counts[c]}" for c in Category]
    lines.append(f"function-compliance findings: {data['findings']}; third-party torch ecosystem imports: "
                 f"{data['ecosystem_imports']}")
    return lines
