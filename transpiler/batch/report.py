"""Run summaries and reports (JSON for tools, Markdown for people).

Counts are honest: every torch API use is either converted, marked, or
unknown (looked like torch, no rule recognised it), and the conversion rate
divides by all three and by the uses in files that failed to convert
(counted from their text), so a run with a failed file is never at 100%.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field

from transpiler import __version__
from transpiler.convert.diagnostics import Diagnostic, Outcome, Severity
from transpiler.convert.requirements import NEW_REQUIREMENT
from transpiler.batch.written import CONFLICTED, MERGED, REFUSED

MARKERS_SHOWN = 20  # marker locations listed on the terminal; the report has them all


@dataclass
class RunReport:
    files: Counter = field(default_factory=Counter)  # status -> count
    diagnostics: list[Diagnostic] = field(default_factory=list)
    elapsed: float = 0.0
    failed_uses: int = 0  # torch uses in files that failed (counted from their text)
    written: Counter = field(default_factory=Counter)  # what happened to output files: merged, conflicted ...
    not_written: list[tuple[str, str]] = field(default_factory=list)  # (file, reason)
    conflicted: list[str] = field(default_factory=list)  # output files holding both sides of a merge

    def add(self, summary) -> None:
        self.files[summary.status] += 1
        self.diagnostics.extend(summary.diagnostics)
        self.failed_uses += summary.failed_uses
        if summary.written:
            self.written[summary.written] += 1
        if summary.status == "failed":
            error = next((d for d in summary.diagnostics if d.severity is Severity.ERROR), None)
            reason = f"{error.message} (at {error.location})" if error else "failed to convert"
            self.not_written.append((summary.display, reason))
        elif summary.written == REFUSED:
            self.not_written.append((summary.target or summary.display, summary.note))
        elif summary.written == CONFLICTED:
            self.conflicted.append(summary.target or summary.display)

    @property
    def uses(self) -> Counter:
        return Counter(d.outcome for d in self.diagnostics if d.outcome is not Outcome.NONE)

    @property
    def rate(self) -> float:
        uses = self.uses
        total = uses[Outcome.CONVERTED] + uses[Outcome.MARKED] + uses[Outcome.UNKNOWN] + self.failed_uses
        return uses[Outcome.CONVERTED] / total if total else 1.0

    @property
    def failed(self) -> int:
        return self.files["failed"]

    @property
    def refused(self) -> int:
        return self.written[REFUSED]

    def marker_lines(self, limit: int = MARKERS_SHOWN) -> tuple[list[str], int]:
        """Where the markers are, ``path:line:col: <api>: <reason>``: the
        first ``limit``, and how many more there are."""
        marked = [d for d in self.diagnostics if d.outcome is Outcome.MARKED]
        lines = [f"{d.location}: {d.message}" if d.message.startswith(f"{d.rule}:")
                 else f"{d.location}: {d.rule}: {d.message}" for d in marked[:limit]]
        return lines, max(0, len(marked) - limit)

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
        failed = f"{files['failed']} failed" + (" (not converted)" if files["failed"] else "")
        lines = [
            f"files: {files['converted']} converted, {files['unchanged']} unchanged, "
            f"{failed}, {files['copied']} copied",
            f"torch API uses: {total} found, {uses[Outcome.CONVERTED]} converted, "
            f"{uses[Outcome.MARKED]} marked, {uses[Outcome.UNKNOWN]} unrecognised",
        ]
        if self.failed_uses:
            s = "s" * (files["failed"] != 1)
            lines.append(f"conversion rate: {self.rate:.1%} (unrecognised uses and the {self.failed_uses} torch "
                         f"use{'s' * (self.failed_uses != 1)} seen in the {files['failed']} file{s} that failed "
                         "count against it)")
        else:
            lines.append(f"conversion rate: {self.rate:.1%} (unrecognised uses count against it)")
        if self.written[MERGED] or self.written[CONFLICTED]:
            lines.append(f"your edits: merged into {self.written[MERGED]} file{'s' * (self.written[MERGED] != 1)}, "
                         f"{self.written[CONFLICTED]} conflicted"
                         + (f" (resolve the markers in: {', '.join(self.conflicted)})" if self.conflicted else ""))
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
                "in_failed_files": self.failed_uses,
            },
            "conversion_rate": round(self.rate, 4),
            "new_requirements": self.new_requirements(),
            "outputs": dict(self.written),
            "not_written": [{"path": path, "reason": reason} for path, reason in self.not_written],
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
        converted = Counter(api for api in map(_table_api, (d.rule for d in done)) if api)
        lines += ["", f"## Converted APIs ({sum(converted.values())} uses)", "", "| API | uses |", "|---|---|"]
        lines += [f"| `{rule}` | {count} |" for rule, count in sorted(converted.items(), key=lambda kv: (-kv[1], kv[0]))]
        others = len(done) - sum(converted.values())
        if others:
            lines += ["", f"And {others} rewrite{'s' * (others != 1)} of code that is not a torch API call "
                          "(forward as construct, statements MindSpore does without ...): listed below."]
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


def _table_api(name: str) -> str | None:
    """The torch API a conversion is counted under in the converted-API table,
    or None for a rewrite that names no torch API (``forward``, ``statement``,
    ``getattr`` ...). A method matched by name on any receiver (``cuda``, a
    SummaryWriter's ``add_scalar``) is named ``X()`` as in SUPPORTED_APIS.md,
    not as a method of torch.nn.Module it is not."""
    if not name.startswith("torch."):
        return None
    owner, _, method = name.rpartition(".")
    if owner == "torch.nn.Module":
        from rewrite_rules.registry import load_rules

        rules = load_rules().methods.get(method, ())
        if rules and all(rule.receiver == "any" for rule in rules):
            return f"{method}()"
    return name
