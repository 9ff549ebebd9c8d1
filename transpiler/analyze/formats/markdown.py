"""``--format markdown``: a migration plan document."""

from __future__ import annotations

from transpiler.analyze.formats import summary_lines
from transpiler.analyze.formats._shared import ecosystem_rows, findings_by_kind, locations_text, row_detail
from transpiler.analyze.model import Category, ProjectAnalysis

NAME = "markdown"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(project: ProjectAnalysis, color: bool = False) -> str:
    out = [f"# Migration analysis: `{project.source}`", "", "## Summary", ""]
    out += [f"- {line.strip()}" for line in summary_lines(project)]
    rows = project.api_rows()
    out += ["", "## API compliance", ""]
    for category in Category:
        selected = [r for r in rows if r.category is category]
        out += [f"### {category.value[:1].upper()}{category.value[1:]} ({sum(r.count for r in selected)} uses)", ""]
        if not selected:
            out += ["None.", ""]
            continue
        out += ["| API | uses | locations | details |", "|---|---:|---|---|"]
        out += [f"| `{r.api}` | {r.count} | {_cell(locations_text(r.locations))} | {_cell(row_detail(r))} |"
                for r in selected]
        out.append("")
    out += ["## Third-party torch ecosystem imports", ""]
    eco = ecosystem_rows(project)
    if eco:
        out += ["| package | import | count | locations |", "|---|---|---:|---|"]
        out += [f"| {p} | `{m}` | {n} | {_cell(locations_text(w))} |" for p, m, n, w in eco]
    else:
        out.append("None.")
    out += ["", "## Function compliance", ""]
    grouped = findings_by_kind(project)
    if not grouped:
        out.append("No findings.")
    for kind, items in grouped.items():
        first = items[0]
        out += [f"### `{kind}` ({first.family}, {len(items)})", "", f"**Why it matters:** {first.why}", "",
                f"**Suggested fix:** {first.fix}", ""]
        out += [f"- `{f.where}:{f.col}`: `{_cell(f.code)}`" for f in items]
        out.append("")
    out += ["", "## Training-tricks checklist", ""]
    if project.checklist:
        out += ["| topic | item | details | location |", "|---|---|---|---|"]
        out += [f"| {c.topic} | `{_cell(c.name)}` | {_cell(c.detail)} | `{c.where}` |"
                for c in project.checklist]
    else:
        out.append("Nothing found.")
    failed = [f for f in project.files if f.status == "failed"]
    if failed:
        out += ["", "## Files that could not be analysed", ""]
        out += [f"- `{f.path}`: {f.error}" for f in failed]
    return "\n".join(out).rstrip() + "\n"
