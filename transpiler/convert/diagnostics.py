"""Structured diagnostics: every decision the converter makes is one of these."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


# Written above every statement the converter could not convert.
MARKER_PREFIX = "# TODO(ms-migrate): "

class Severity(str, Enum):
    ERROR = "error"  # the file could not be converted at all
    MARKER = "marker"  # code left in place with a TODO marker
    WARNING = "warning"  # converted, but the user should look
    INFO = "info"  # converted; recorded for the report


class Outcome(str, Enum):
    """What happened to one use of a torch API (for honest counting)."""

    CONVERTED = "converted"
    MARKED = "marked"
    UNKNOWN = "unknown"  # looked like torch, no rule recognised it
    NONE = "none"  # not an API use (file-level notes, errors)


@dataclass(frozen=True)
class Diagnostic:
    path: str
    line: int
    col: int
    rule: str  # the torch API or transform that decided
    severity: Severity
    message: str
    outcome: Outcome = Outcome.NONE
    cell: int | None = None  # notebooks: the cell (from 1) that ``line`` counts in
    # converted calls: (torch parameter, what happened to it), e.g. ("bias", "bias=False -> has_bias=False"),
    # or ("the call", ...) when a rule's code rewrote the call as a whole
    changes: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        # Lines and columns count from 1, as every editor and SARIF count them. A diagnostic about a
        # whole line (an import that failed there, a file written) is at its first column; 0:0 stays
        # the position of a node the rewrite made, which no source position has.
        if self.line >= 1 and self.col < 1:
            object.__setattr__(self, "col", 1)

    @property
    def location(self) -> str:
        """``path:line:col``; in a notebook ``path:cell N:line:col``, as ruff writes it."""
        cell = f"cell {self.cell}:" if self.cell is not None else ""
        return f"{self.path}:{cell}{self.line}:{self.col}"

    def one_line(self) -> str:
        return f"{self.location}: {self.severity.value}: {self.message}"

    def to_dict(self) -> dict:
        # the fields in order, written out: dataclasses.asdict deep-copies every value (a run
        # report holds tens of thousands of these)
        data = {"path": self.path, "line": self.line, "col": self.col, "rule": self.rule,
                "severity": self.severity.value, "message": self.message, "outcome": self.outcome.value}
        if self.cell is not None:
            data["cell"] = self.cell
        if self.changes:
            data["changes"] = [{"name": name, "change": change} for name, change in self.changes]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "Diagnostic":
        changes = tuple((c["name"], c["change"]) for c in data.get("changes", ()))
        return cls(
            **{**data, "severity": Severity(data["severity"]), "outcome": Outcome(data["outcome"]), "changes": changes}
        )
