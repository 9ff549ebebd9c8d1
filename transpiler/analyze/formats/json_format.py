"""``--format json``: everything, for tools."""

from __future__ import annotations

import json

from transpiler.analyze.formats import summary
from transpiler.analyze.model import ProjectAnalysis

NAME = "json"


def to_data(project: ProjectAnalysis) -> dict:
    return {
        "tool": "ms-migrate analyze",
        "source": project.source,
        "summary": summary(project),
        "files": [{"path": f.path, "status": f.status, "error": f.error} for f in project.files],
        "apis": [row.to_dict() for row in project.api_rows()],
        "uses": [u.to_dict() for u in project.uses],
        "ecosystem": [e.to_dict() for e in project.ecosystem],
        "findings": [f.to_dict() for f in project.findings],
        "checklist": [c.to_dict() for c in project.checklist],
        "parameter_counts": project.parameter_counts,
    }


def render(project: ProjectAnalysis, color: bool = False) -> str:
    return json.dumps(to_data(project), indent=2) + "\n"
