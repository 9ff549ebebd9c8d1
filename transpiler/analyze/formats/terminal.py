"""The default report: rich tables on the terminal (colour only on a tty)."""

from __future__ import annotations

import io
import os

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from transpiler.analyze.formats import summary_lines
from transpiler.analyze.formats._shared import ecosystem_rows, findings_by_kind, locations_text, row_detail
from transpiler.analyze.model import Category, ProjectAnalysis

NAME = "text"
_STYLES = {
    Category.AS_IS: "green",
    Category.ARGUMENTS: "cyan",
    Category.STRUCTURAL: "magenta",
    Category.MARKED: "red",
    Category.UNKNOWN: "yellow",
}


def render(project: ProjectAnalysis, color: bool = False, width: int = 160) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=color, no_color=not color, width=width, highlight=False,
                      color_system="standard" if color else None)
    console.rule(f"[bold]ms-migrate analyze: {escape(project.source)}")
    project = _under_root(project)
    for line in summary_lines(project):
        console.print(line, markup=False)
    _api_table(console, project)
    _ecosystem_table(console, project)
    _findings(console, project)
    _checklist(console, project)
    failed = [f for f in project.files if f.status == "failed"]
    if failed:
        console.print()
        console.print("[bold red]Files that could not be analysed")
        for f in failed:
            console.print(f"  {f.path}: {f.error}", markup=False)
    return buffer.getvalue()


def _under_root(project: ProjectAnalysis) -> ProjectAnalysis:
    """A tree's paths written from the analysed folder the heading names (``models/unet.py:12``),
    so a table column does not wrap a long absolute path."""
    return project.under(os.path.join(project.source, "")) if os.path.isdir(project.source) else project


def _api_table(console: Console, project: ProjectAnalysis) -> None:
    table = Table(title="API compliance", show_lines=False, expand=True, title_justify="left")
    table.add_column("class", no_wrap=True)
    table.add_column("torch API", overflow="fold", ratio=2)
    table.add_column("uses", justify="right")
    table.add_column("locations", overflow="fold", ratio=2)
    table.add_column("arguments / reason", overflow="fold", ratio=3)
    for row in project.api_rows():
        style = _STYLES[row.category]
        table.add_row(f"[{style}]{row.category.value}[/]", escape(row.api), str(row.count),
                      escape(locations_text(row.locations, 4)), escape(row_detail(row)))
    console.print()
    console.print(table)


def _ecosystem_table(console: Console, project: ProjectAnalysis) -> None:
    rows = ecosystem_rows(project)
    if not rows:
        return
    table = Table(title="Third-party torch ecosystem imports", expand=True, title_justify="left")
    for column, ratio in (("package", 1), ("import", 2), ("count", None), ("locations", 3)):
        table.add_column(column, overflow="fold", ratio=ratio)
    for package, module, count, where in rows:
        table.add_row(escape(package), escape(module), str(count), escape(locations_text(where, 4)))
    console.print()
    console.print(table)


def _findings(console: Console, project: ProjectAnalysis) -> None:
    grouped = findings_by_kind(project)
    table = Table(title=f"Function compliance ({len(project.findings)} findings)", expand=True, title_justify="left",
                  show_lines=True)
    table.add_column("finding", no_wrap=True, min_width=24)
    table.add_column("where", overflow="fold", ratio=2)
    table.add_column("why it matters / suggested fix", overflow="fold", ratio=3)
    for kind, items in grouped.items():
        where = "\n".join(escape(f"{f.where}  {f.code}") for f in items[:8])
        if len(items) > 8:
            where += f"\n(+{len(items) - 8} more)"
        table.add_row(f"[bold yellow]{kind}[/]\n{items[0].family}", where,
                      f"{escape(items[0].why)}\n[bold]Fix:[/] {escape(items[0].fix)}")
    console.print()
    if grouped:
        console.print(table)
    else:
        console.print("Function compliance: no findings.")


def _checklist(console: Console, project: ProjectAnalysis) -> None:
    table = Table(title="Training-tricks checklist", expand=True, title_justify="left")
    table.add_column("topic", no_wrap=True)
    table.add_column("item", overflow="fold", ratio=2)
    table.add_column("details", overflow="fold", ratio=3)
    table.add_column("where", overflow="fold", ratio=1)
    for entry in project.checklist:
        table.add_row(escape(entry.topic), escape(entry.name), escape(entry.detail), escape(entry.where))
    console.print()
    if project.checklist:
        console.print(table)
    else:
        console.print("Training-tricks checklist: nothing found.")
