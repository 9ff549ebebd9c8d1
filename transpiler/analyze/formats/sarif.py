"""``--format sarif``: SARIF 2.1.0, so editors and code-review tools show each
finding and each API that needs attention at its line."""

from __future__ import annotations

import json
import os
from urllib.parse import quote

from transpiler import __version__
from transpiler.analyze.findings import all_checkers
from transpiler.analyze.model import Category, ProjectAnalysis

NAME = "sarif"
SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

# API categories worth a result (as-is conversions are not).
_API_RULES = {
    Category.ARGUMENTS: ("api-argument-differences", "note", "Converted with argument differences"),
    Category.STRUCTURAL: ("api-structural-rewrite", "warning", "Needs a structural rewrite"),
    Category.MARKED: ("api-no-equivalent", "warning", "No MindSpore equivalent; ms-migrate marks it"),
    Category.UNKNOWN: ("api-unknown", "note", "Not recognised by any ms-migrate rule"),
}


def _uri(path: str) -> str:
    return quote(path.replace(os.sep, "/"))


def _location(path: str, line: int, col: int) -> dict:
    region = {"startLine": max(line, 1)}
    if col > 0:
        region["startColumn"] = col
    if os.path.isabs(path):
        artifact = {"uri": "file://" + _uri(path)}
    else:
        artifact = {"uri": _uri(path), "uriBaseId": "SRCROOT"}
    return {"physicalLocation": {"artifactLocation": artifact, "region": region}}


def _rules() -> list[dict]:
    rules = []
    for checker in all_checkers():
        rules.append({
            "id": checker.kind,
            "name": checker.kind.title().replace("-", ""),
            "shortDescription": {"text": f"{checker.family}: {checker.kind}"},
            "fullDescription": {"text": checker.why},
            "help": {"text": checker.fix},
            "defaultConfiguration": {"level": "warning"},
            "properties": {"family": checker.family},
        })
    for rule_id, level, text in _API_RULES.values():
        rules.append({"id": rule_id, "shortDescription": {"text": text}, "defaultConfiguration": {"level": level}})
    return rules


def to_sarif(project: ProjectAnalysis) -> dict:
    rules = _rules()
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    results = []
    for f in project.findings:
        results.append({
            "ruleId": f.kind, "ruleIndex": index[f.kind], "level": "warning",
            "message": {"text": f"{f.code}: {f.why} Fix: {f.fix}"},
            "locations": [_location(f.path, f.line, f.col)],
        })
    for use in project.uses:
        if use.category not in _API_RULES:
            continue
        rule_id, level, _ = _API_RULES[use.category]
        details = "; ".join(f"{a.name}: {a.action}" for a in use.arguments) or use.message
        results.append({
            "ruleId": rule_id, "ruleIndex": index[rule_id], "level": level,
            "message": {"text": f"{use.api}: {details}"},
            "locations": [_location(use.path, use.line, use.col)],
        })
    root = os.path.abspath(project.source if os.path.isdir(project.source) else os.getcwd())
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "ms-migrate", "version": __version__, "informationUri":
                                "https://www.mindspore.cn/docs/en/master/migration_guide/overview.html",
                                "rules": rules}},
            "originalUriBaseIds": {"SRCROOT": {"uri": "file://" + quote(os.getcwd().replace(os.sep, "/")) + "/"}},
            "results": results,
            "properties": {"analysedRoot": root},
        }],
    }


def render(project: ProjectAnalysis, color: bool = False) -> str:
    return json.dumps(to_sarif(project), indent=2) + "\n"
