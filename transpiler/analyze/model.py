"""What `ms-migrate analyze` finds, as plain data (one shape for every output format)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from enum import Enum


def where(path: str, line: int, cell: int | None = None) -> str:
    """``path:line``; in a notebook ``path:cell N:line``, as convert's diagnostics write it."""
    return f"{path}:cell {cell}:{line}" if cell is not None else f"{path}:{line}"


def _without_cell(data: dict) -> dict:
    if data.get("cell", 0) is None:
        del data["cell"]
    return data


class _Located:
    """A dataclass with ``path``, ``line`` and ``cell``: where it is, and its dict
    (without ``cell`` outside notebooks)."""

    @property
    def where(self) -> str:
        return where(self.path, self.line, self.cell)

    def to_dict(self) -> dict:
        return _without_cell(asdict(self))


class Category(str, Enum):
    """How one use of a torch API migrates."""

    AS_IS = "converted as is"
    ARGUMENTS = "converted with argument differences"
    STRUCTURAL = "needs a structural rewrite"
    MARKED = "no MindSpore equivalent (marked)"
    UNKNOWN = "unknown"

    @property
    def key(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class ArgNote:
    """One argument whose handling differs from a plain rename of the call."""

    name: str  # the torch parameter
    action: str  # what ms-migrate does about it


@dataclass(frozen=True)
class ApiUse(_Located):
    api: str  # qualified torch name, e.g. torch.nn.Conv2d, or a transform name
    path: str
    line: int
    col: int
    category: Category
    outcome: str  # what convert does: converted / marked / unknown / not reported
    message: str  # convert's own message, or why the use is listed
    arguments: tuple[ArgNote, ...] = ()
    cell: int | None = None  # notebooks: the code cell (from 1) that ``line`` counts in

    def to_dict(self) -> dict:
        data = super().to_dict()
        data["category"] = self.category.key
        data["arguments"] = [asdict(a) for a in self.arguments]
        return data


@dataclass(frozen=True)
class EcosystemImport(_Located):
    package: str  # torchvision, timm, ...
    module: str  # the imported module or name
    path: str
    line: int
    cell: int | None = None


@dataclass(frozen=True)
class Finding(_Located):
    """A function-compliance finding: code MindSpore restricts or handles differently."""

    kind: str  # checker id, e.g. "dynamic-shape-op"
    family: str  # dynamic shapes, sparse, autograd, hooks, jit, distributed, amp
    path: str
    line: int
    col: int
    code: str  # the construct, as written
    why: str  # why it matters in MindSpore
    fix: str  # the suggested fix
    cell: int | None = None


@dataclass(frozen=True)
class ChecklistItem(_Located):
    """One training trick found in the code."""

    topic: str  # network, optimizer, lr schedule, loss, augmentation, ...
    name: str  # what was found, e.g. torch.optim.AdamW
    detail: str  # hyperparameters, submodules, values
    path: str
    line: int
    cell: int | None = None


@dataclass
class FileAnalysis:
    path: str
    status: str = "analysed"  # analysed / skipped (no torch) / failed
    error: str = ""
    uses: list[ApiUse] = field(default_factory=list)
    ecosystem: list[EcosystemImport] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    checklist: list[ChecklistItem] = field(default_factory=list)
    cell_classes: list[str] = field(default_factory=list)


@dataclass
class ProjectAnalysis:
    source: str
    files: list[FileAnalysis] = field(default_factory=list)
    diffs: list["FileDiff"] = field(default_factory=list)  # filled when --converted is given
    parameter_counts: dict[str, dict[str, int | str]] = field(default_factory=dict)  # path -> class -> count|reason

    # -- flattened views ------------------------------------------------------
    @property
    def uses(self) -> list[ApiUse]:
        return [u for f in self.files for u in f.uses]

    @property
    def findings(self) -> list[Finding]:
        return [x for f in self.files for x in f.findings]

    @property
    def checklist(self) -> list[ChecklistItem]:
        return [x for f in self.files for x in f.checklist]

    @property
    def ecosystem(self) -> list[EcosystemImport]:
        return [x for f in self.files for x in f.ecosystem]

    def under(self, root: str) -> "ProjectAnalysis":
        """A copy whose paths under the folder ``root`` are written from it (``models/unet.py``)."""

        def short(path: str) -> str:
            return path[len(root):] if path.startswith(root) else path

        def moved(items):
            return [replace(item, path=short(item.path)) for item in items]

        files = [replace(f, path=short(f.path), uses=moved(f.uses), ecosystem=moved(f.ecosystem),
                         findings=moved(f.findings), checklist=moved(f.checklist)) for f in self.files]
        return replace(self, files=files)

    def category_counts(self) -> dict[Category, int]:
        counts = {c: 0 for c in Category}
        for use in self.uses:
            counts[use.category] += 1
        return counts

    def api_rows(self) -> list["ApiRow"]:
        """Uses grouped by (API, category): the API table."""
        rows: dict[tuple[str, Category], ApiRow] = {}
        for use in self.uses:
            row = rows.setdefault((use.api, use.category), ApiRow(use.api, use.category))
            row.add(use)
        order = list(Category)
        return sorted(rows.values(), key=lambda r: (order.index(r.category), -r.count, r.api))


@dataclass
class ApiRow:
    api: str
    category: Category
    count: int = 0
    locations: list[str] = field(default_factory=list)
    arguments: dict[str, str] = field(default_factory=dict)  # torch param -> action
    messages: list[str] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)  # what convert does with these uses

    def add(self, use: ApiUse) -> None:
        self.count += 1
        if use.outcome not in self.outcomes:
            self.outcomes.append(use.outcome)
        self.locations.append(use.where)
        for note in use.arguments:
            self.arguments.setdefault(note.name, note.action)
        if use.message and use.message not in self.messages:
            self.messages.append(use.message)

    def to_dict(self) -> dict:
        return {
            "api": self.api,
            "category": self.category.key,
            "count": self.count,
            "locations": self.locations,
            "arguments": [{"name": k, "action": v} for k, v in self.arguments.items()],
            "messages": self.messages,
            "convert_outcomes": self.outcomes,
        }


@dataclass
class FileDiff:
    """A source file and its converted counterpart (for the HTML report)."""

    path: str
    original: str
    converted: str | None  # None: no converted file found
