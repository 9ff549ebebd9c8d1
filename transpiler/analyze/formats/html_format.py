"""``--format html``: one self-contained page (no external files or network):
summary, API table, ecosystem imports, findings, checklist and, when the
converted output is given, each file's side-by-side diff with the ms-migrate
markers highlighted."""

from __future__ import annotations

from html import escape

from transpiler.analyze.formats import summary, summary_lines
from transpiler.analyze.formats._shared import ecosystem_rows, findings_by_kind, locations_text, row_detail
from transpiler.analyze.formats.side_by_side import diff_rows
from transpiler.analyze.model import Category, FileDiff, ProjectAnalysis

NAME = "html"

_CSS = """
:root { --fg:#1f2328; --muted:#59636e; --line:#d1d9e0; --bg:#ffffff; --soft:#f6f8fa;
  --as_is:#1a7f37; --arguments:#0969da; --structural:#8250df; --marked:#cf222e; --unknown:#9a6700; }
* { box-sizing: border-box; }
body { font: 14px/1.45 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: var(--fg);
  background: var(--bg); margin: 0; }
header { padding: 20px 32px 8px; border-bottom: 1px solid var(--line); }
h1 { font-size: 22px; margin: 0 0 6px; } h2 { font-size: 18px; margin: 28px 0 10px; }
h3 { font-size: 15px; margin: 14px 0 6px; }
main { padding: 0 32px 40px; max-width: 1600px; }
nav a { margin-right: 14px; color: var(--arguments); text-decoration: none; }
.muted { color: var(--muted); }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 14px 0; }
.card { border: 1px solid var(--line); border-left-width: 5px; border-radius: 6px; padding: 8px 14px; min-width: 150px; }
.card b { display: block; font-size: 22px; }
.cat-as_is { border-left-color: var(--as_is); } .cat-arguments { border-left-color: var(--arguments); }
.cat-structural { border-left-color: var(--structural); } .cat-marked { border-left-color: var(--marked); }
.cat-unknown { border-left-color: var(--unknown); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff; font-size: 12px; white-space: nowrap; }
.badge.as_is { background: var(--as_is); } .badge.arguments { background: var(--arguments); }
.badge.structural { background: var(--structural); } .badge.marked { background: var(--marked); }
.badge.unknown { background: var(--unknown); }
table { border-collapse: collapse; width: 100%; }
th, td { border: 1px solid var(--line); padding: 5px 8px; vertical-align: top; text-align: left; }
th { background: var(--soft); position: sticky; top: 0; }
td.num { text-align: right; } code { font: 12.5px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.finding { border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; margin: 10px 0; }
.finding h3 { margin-top: 0; } .finding ul { margin: 6px 0 0; padding-left: 20px; }
.why { margin: 4px 0; } .fix { margin: 4px 0; padding: 6px 10px; background: #dafbe1; border-radius: 4px; }
#filter { padding: 5px 8px; width: 320px; border: 1px solid var(--line); border-radius: 4px; margin-bottom: 8px; }
details.file { border: 1px solid var(--line); border-radius: 6px; margin: 12px 0; }
details.file > summary { padding: 8px 12px; background: var(--soft); cursor: pointer; font-weight: 600; }
table.diff { table-layout: fixed; font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
table.diff td { border: none; padding: 0 6px; white-space: pre-wrap; word-break: break-all; }
table.diff td.no { width: 48px; color: var(--muted); text-align: right; user-select: none; background: var(--soft); }
table.diff th { font-family: inherit; }
tr.delete td.old, tr.replace td.old { background: #ffebe9; }
tr.insert td.new, tr.replace td.new { background: #dafbe1; }
tr.skip td { background: #eef4ff; color: var(--muted); text-align: center; font-style: italic; }
td.new.marker { background: #fff1c2 !important; border-left: 4px solid #d4a72c; font-weight: 600; }
.legend span { margin-right: 14px; padding: 1px 6px; border-radius: 3px; }
"""

_SCRIPT = """
(function () {
  var box = document.getElementById('filter');
  var rows = Array.prototype.slice.call(document.querySelectorAll('#api-table tbody tr'));
  var shown = document.getElementById('api-shown');
  function apply() {
    var q = (box.value || '').toLowerCase(), n = 0;
    rows.forEach(function (r) { var ok = r.textContent.toLowerCase().indexOf(q) >= 0;
      r.style.display = ok ? '' : 'none'; if (ok) n++; });
    shown.textContent = n + ' of ' + rows.length + ' rows';
  }
  if (box) { box.addEventListener('input', apply); apply(); }
  document.body.setAttribute('data-ready', '1');
})();
"""


def render(project: ProjectAnalysis, color: bool = False) -> str:
    title = f"ms-migrate analysis: {project.source}"
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<header><h1>{escape(title)}</h1>",
        '<nav><a href="#summary">Summary</a><a href="#apis">API compliance</a><a href="#ecosystem">Ecosystem</a>'
        '<a href="#findings">Function compliance</a><a href="#checklist">Checklist</a>'
        + ('<a href="#diffs">Converted files</a>' if project.diffs else "") + "</nav></header><main>",
        _summary(project), _apis(project), _ecosystem(project), _findings(project), _checklist(project),
        _diffs(project.diffs) if project.diffs else "",
        f"</main><script>{_SCRIPT}</script></body></html>",
    ]
    return "\n".join(p for p in parts if p) + "\n"


def _summary(project: ProjectAnalysis) -> str:
    data = summary(project)
    counts = project.category_counts()
    cards = [f'<div class="card"><b>{data["api_uses"]}</b>torch API uses ({data["apis"]} APIs)</div>']
    cards += [f'<div class="card cat-{c.key}"><b>{counts[c]}</b>{escape(c.value)}</div>' for c in Category]
    cards.append(f'<div class="card"><b>{data["findings"]}</b>function-compliance findings</div>')
    cards.append(f'<div class="card"><b>{data["ecosystem_imports"]}</b>ecosystem imports</div>')
    lines = "".join(f"<li>{escape(line.strip())}</li>" for line in summary_lines(project)[:2])
    failed = [f for f in project.files if f.status == "failed"]
    failures = ""
    if failed:
        items = "".join(f"<li><code>{escape(f.path)}</code>: {escape(f.error)}</li>" for f in failed)
        failures = f"<h3>Files that could not be analysed</h3><ul>{items}</ul>"
    return f'<section id="summary"><h2>Summary</h2><div class="cards">{"".join(cards)}</div><ul>{lines}</ul>' \
        f"{failures}</section>"


def _apis(project: ProjectAnalysis) -> str:
    rows = []
    for row in project.api_rows():
        rows.append(
            f'<tr data-category="{row.category.key}"><td><span class="badge {row.category.key}">'
            f"{escape(row.category.value)}</span></td><td><code>{escape(row.api)}</code></td>"
            f'<td class="num">{row.count}</td><td>{escape(locations_text(row.locations))}</td>'
            f"<td>{escape(row_detail(row))}</td></tr>"
        )
    body = "".join(rows) or '<tr><td colspan="5">No torch API uses.</td></tr>'
    return (
        '<section id="apis"><h2>API compliance</h2>'
        '<input id="filter" type="search" placeholder="Filter APIs, classes, files..."> '
        '<span id="api-shown" class="muted"></span>'
        '<table id="api-table"><thead><tr><th>class</th><th>torch API</th><th>uses</th><th>locations</th>'
        f"<th>arguments: what ms-migrate does / reason</th></tr></thead><tbody>{body}</tbody></table></section>"
    )


def _ecosystem(project: ProjectAnalysis) -> str:
    rows = "".join(
        f"<tr><td>{escape(p)}</td><td><code>{escape(m)}</code></td><td class=\"num\">{n}</td>"
        f"<td>{escape(locations_text(w))}</td></tr>"
        for p, m, n, w in ecosystem_rows(project)
    )
    if not rows:
        return '<section id="ecosystem"><h2>Third-party torch ecosystem imports</h2><p>None.</p></section>'
    return (
        '<section id="ecosystem"><h2>Third-party torch ecosystem imports</h2>'
        '<table id="ecosystem-table"><thead><tr><th>package</th><th>import</th><th>count</th><th>locations</th>'
        f"</tr></thead><tbody>{rows}</tbody></table></section>"
    )


def _findings(project: ProjectAnalysis) -> str:
    blocks = []
    for kind, items in findings_by_kind(project).items():
        where = "".join(f"<li><code>{escape(f.where)}:{f.col}</code> <code>{escape(f.code)}</code></li>"
                        for f in items)
        blocks.append(
            f'<div class="finding" data-kind="{escape(kind)}"><h3><code>{escape(kind)}</code> '
            f'<span class="muted">{escape(items[0].family)} &middot; {len(items)}</span></h3>'
            f'<p class="why"><b>Why it matters:</b> {escape(items[0].why)}</p>'
            f'<p class="fix"><b>Suggested fix:</b> {escape(items[0].fix)}</p><ul>{where}</ul></div>'
        )
    body = "".join(blocks) or "<p>No findings.</p>"
    return f'<section id="findings"><h2>Function compliance</h2>{body}</section>'


def _checklist(project: ProjectAnalysis) -> str:
    rows = "".join(
        f"<tr><td>{escape(c.topic)}</td><td><code>{escape(c.name)}</code></td><td>{escape(c.detail)}</td>"
        f"<td><code>{escape(c.where)}</code></td></tr>"
        for c in project.checklist
    )
    if not rows:
        return '<section id="checklist"><h2>Training-tricks checklist</h2><p>Nothing found.</p></section>'
    return (
        '<section id="checklist"><h2>Training-tricks checklist</h2><table id="checklist-table"><thead><tr>'
        f"<th>topic</th><th>item</th><th>details</th><th>where</th></tr></thead><tbody>{rows}</tbody></table></section>"
    )


def _diffs(diffs: list[FileDiff]) -> str:
    blocks = []
    for diff in diffs:
        if diff.converted is None:
            blocks.append(f'<details class="file"><summary>{escape(diff.path)}</summary>'
                          "<p class=\"muted\">&nbsp;No converted file found.</p></details>")
            continue
        rows = diff_rows(diff.original, diff.converted)
        changed = sum(1 for r in rows if r.kind in ("replace", "insert", "delete"))
        markers = sum(1 for r in rows if r.right_is_marker)
        body = "".join(_diff_row(r) for r in rows)
        blocks.append(
            f'<details class="file" open><summary>{escape(diff.path)} '
            f'<span class="muted">{changed} changed lines, {markers} markers</span></summary>'
            '<table class="diff"><colgroup><col style="width:48px"><col><col style="width:48px"><col></colgroup>'
            f"<thead><tr><th></th><th>PyTorch (original)</th><th></th><th>MindSpore (converted)</th></tr></thead>"
            f"<tbody>{body}</tbody></table></details>"
        )
    legend = ('<p class="legend"><span style="background:#ffebe9">removed</span>'
              '<span style="background:#dafbe1">added</span>'
              '<span style="background:#fff1c2;border-left:4px solid #d4a72c">ms-migrate marker: convert by hand</span></p>')
    return f'<section id="diffs"><h2>Converted files</h2>{legend}{"".join(blocks)}</section>'


def _diff_row(row) -> str:
    if row.kind == "skip":
        return f'<tr class="skip"><td colspan="4">&hellip; {row.skipped} unchanged lines &hellip;</td></tr>'
    marker = " marker" if row.right_is_marker else ""
    left_no = "" if row.left_no is None else row.left_no
    right_no = "" if row.right_no is None else row.right_no
    return (f'<tr class="{row.kind}"><td class="no">{left_no}</td><td class="old">{escape(row.left)}</td>'
            f'<td class="no">{right_no}</td><td class="new{marker}">{escape(row.right)}</td></tr>')
