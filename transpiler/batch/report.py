"""Run summaries and reports (JSON for tools, Markdown for people).

Counts are honest: every torch API use is either converted, marked, or
unknown (looked like torch, no rule recognised it), and the conversion rate
divides by all three.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from transpiler import __version__
from transpiler.convert.diagnostics import Diagnostic, Outcome, Severity
from transpiler.convert.requirements import NEW_REQUIREMENT


@dataclass
class RunReport:
    files: Counter = field(default_factory=Counter)  # status -> count
    diagnostics: list[Diagnostic] = field(default_factory=list)
    elapsed: float = 0.0

    def add(self, summary) -> None:
        self.files[summary.status] += 1
        self.diagnostics.extend(summary.diagnostics)

    @property
    def uses(self) -> Counter:
        return Counter(d.outcome for d in self.diagnostics if d.outcome is not Outcome.NONE)

    @property
    def rate(self) -> float:
        uses = self.uses
        total = uses[Outcome.CONVERTED] + uses[Outcome.MARKED] + uses[Outcome.UNKNOWN]
        return uses[Outcome.CONVERTED] / total if total else 1.0

    @property
    def failed(self) -> int:
        return self.files["failed"]

    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]

    def new_requirements(self) -> dict[str, list[str]]:
        """Packages the converted code imports that the original did not need
        (transpiler.convert.requirements) -> the files that import them."""
        found: dict[str, list[str]] = {}
        for d in self.diagnostics:
            if d.rule == NEW_REQUIREMENT:
                found.setdefault(d.message.split(":")[0], []).append(d.path)
        return {package: sorted(set(paths)) for package, paths in sorted(found.items())}

    def summary_lines(self) -> list[str]:
        uses = self.uses
        total = sum(uses.values())
        files = self.files
        lines = [
            f"files: {files['converted']} converted, {files['unchanged']} unchanged, "
            f"{files['failed']} failed, {files['copied']} copied",
            f"torch API uses: {total} found, {uses[Outcome.CONVERTED]} converted, "
            f"{uses[Outcome.MARKED]} marked, {uses[Outcome.UNKNOWN]} unrecognised",
            f"conversion rate: {self.rate:.1%} (unrecognised uses count against it)",
        ]
        requirements = self.new_requirements()
        if requirements:
            lines.append("new requirements (the converted code imports them, the original did not): "
                         + ", ".join(f"{package} ({len(paths)} file{'s' * (len(paths) != 1)}; pip install {package})"
                                     for package, paths in requirements.items()))
        return lines

    def to_json(self) -> str:
        uses = self.uses
        data = {
            "tool": "ms-migrate",
            "version": __version__,
            "files": dict(self.files),
            "uses": {
                "found": sum(uses.values()),
                "converted": uses[Outcome.CONVERTED],
                "marked": uses[Outcome.MARKED],
                "unknown": uses[Outcome.UNKNOWN],
            },
            "conversion_rate": round(self.rate, 4),
            "new_requirements": self.new_requirements(),
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }
        return json.dumps(data, indent=2)

    def to_markdown(self) -> str:
        lines = ["# ms-migrate conversion report", ""]
        lines += [f"- {line}" for line in self.summary_lines()]
        marked = [d for d in self.diagnostics if d.outcome is Outcome.MARKED]
        unknown = [d for d in self.diagnostics if d.outcome is Outcome.UNKNOWN]
        errors = self.errors()
        warnings = [d for d in self.diagnostics if d.severity is Severity.WARNING and d.outcome is Outcome.NONE]
        for title, items in (
            ("Files that failed", errors),
            ("Marked for manual migration", marked),
            ("Unrecognised uses", unknown),
            ("Warnings", warnings),
        ):
            lines += ["", f"## {title} ({len(items)})", ""]
            if not items:
                lines.append("None.")
                continue
            lines += ["| location | API | message |", "|---|---|---|"]
            for d in items:
                lines.append(f"| `{d.location}` | `{d.rule}` | {_cell(d.message)} |")
        done = [d for d in self.diagnostics if d.outcome is Outcome.CONVERTED]
        converted = Counter(d.rule for d in done)
        lines += ["", f"## Converted APIs ({sum(converted.values())} uses)", "", "| API | uses |", "|---|---|"]
        lines += [f"| `{rule}` | {count} |" for rule, count in sorted(converted.items(), key=lambda kv: (-kv[1], kv[0]))]
        lines += ["", f"## What each conversion did ({len(done)})", ""]
        if done:
            lines += ["| location | API | what it became |", "|---|---|---|"]
            lines += [f"| `{d.location}` | `{d.rule}` | {_cell(d.message)} |" for d in done]
        else:
            lines.append("None.")
        return "\n".join(lines) + "\n"

    def write(self, path: str) -> None:
        from transpiler.batch.source_io import write_atomic

        text = self.to_markdown() if path.endswith((".md", ".markdown")) else self.to_json()
        write_atomic(path, text.encode("utf-8"))


def _cell(message: str) -> str:
    """A message as a Markdown table cell (code in it stays readable)."""
    return message.replace("|", "\\|")
