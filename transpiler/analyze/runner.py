"""Analyse a file or a tree: the per-file analysis is a pure function of the
source text (like conversion); the tree runner adds parameter counts from
importing the files and, when given, the converted output for diffs."""

from __future__ import annotations

import dataclasses
import os
import re
from concurrent.futures import ProcessPoolExecutor

import libcst as cst

from rewrite_rules.registry import RuleSet, load_rules
from transpiler.analyze.api_compliance import classify, ecosystem_imports
from transpiler.analyze.checklist import extract_checklist
from transpiler.analyze.facts import index_file
from transpiler.analyze.findings import run_checkers
from transpiler.analyze.model import ChecklistItem, FileAnalysis, FileDiff, ProjectAnalysis
from transpiler.analyze.param_probe import count_parameters
from transpiler.convert.pipeline import _method_names, convert_source
from transpiler.batch.discovery import Exclusions, discover
from transpiler.convert.names import ECOSYSTEM_ROOTS, analyse
from transpiler.batch.source_io import DecodeError, decode_source
from transpiler.convert.structural import is_module_base


def _mentions_library(text: str, rules: RuleSet) -> bool:
    return "torch" in text or any(root in text for root in ECOSYSTEM_ROOTS | rules.rule_roots)


def analyze_source(text: str, path: str = "<string>", rules: RuleSet | None = None) -> FileAnalysis:
    """Everything analysis reports about one file. Never raises."""
    result = FileAnalysis(path)
    rules = rules or load_rules()
    if not _mentions_library(text, rules):
        result.status = "skipped"
        return result
    try:
        module = cst.parse_module(text)
    except Exception as exc:  # noqa: BLE001 - a broken file is reported, the tree goes on
        result.status, result.error = "failed", _parse_error(text, path, rules, exc)
        return result
    try:
        conversion = convert_source(text, path, rules)
        analysis = analyse(module, _method_names(rules), is_module_base, rule_names=rules.rule_names)
        facts = index_file(path, module, analysis)
        result.uses = classify(conversion.diagnostics, facts, rules)
        result.ecosystem = ecosystem_imports(facts)
        result.findings = run_checkers(facts)
        result.checklist = extract_checklist(facts)
        result.cell_classes = sorted(analysis.cell_classes)
    except RecursionError:
        result.status, result.error = "failed", "file nests too deeply to analyse"
    except Exception as exc:  # noqa: BLE001
        result.status, result.error = "failed", f"internal error {type(exc).__name__}: {exc}; please report"
    return result


def _parse_error(text: str, path: str, rules: RuleSet, exc: Exception) -> str:
    """Why the file cannot be read, worded and placed as convert reports it
    (``syntax error: '(' was never closed (at m.py:2:16)``)."""
    failed = [d for d in convert_source(text, path, rules).diagnostics if d.severity.value == "error"]
    if failed:
        return f"{failed[0].message} (at {failed[0].location})"
    return " ".join(str(getattr(exc, "message", exc)).split())


def analyze_notebook(text: str, path: str, rules: RuleSet | None = None) -> FileAnalysis:
    """A notebook's code cells, read as convert reads them (transpiler/batch/notebooks.py:
    IPython lines masked, cells joined in order so that each knows the imports above it),
    analysed as one source; every position names its cell (``nb.ipynb:cell 3:2``)."""
    import nbformat

    from transpiler.batch.notebooks import in_cell, is_python, joined_code

    rules = rules or load_rules()
    try:
        notebook = nbformat.reads(text, as_version=4)
    except Exception as exc:  # noqa: BLE001 - nbformat raises many kinds for broken JSON or schema
        return FileAnalysis(path, "failed", " ".join(f"not a readable notebook: {exc}".split()))
    if not is_python(notebook):
        return FileAnalysis(path, "skipped")
    joined, cells, _, _ = joined_code(notebook, text)
    result = analyze_source(joined, path, rules)

    result.uses = [in_cell(u, cells) for u in result.uses]
    result.ecosystem = [in_cell(e, cells) for e in result.ecosystem]
    result.findings = [in_cell(f, cells) for f in result.findings]
    result.checklist = [in_cell(c, cells) for c in result.checklist]
    result.cell_classes = []  # a notebook is not imported to count parameters
    return result


def analyze_file(source: str, display: str, rule_files: tuple[str, ...] = ()) -> FileAnalysis:
    try:
        with open(source, "rb") as handle:
            raw = handle.read()
        text = raw.decode("utf-8") if source.endswith(".ipynb") else decode_source(raw).text
    except (OSError, DecodeError, UnicodeDecodeError) as exc:
        return FileAnalysis(display, "failed", f"cannot read: {exc}")
    if source.endswith(".ipynb"):
        return analyze_notebook(text, display, load_rules(rule_files))
    return analyze_source(text, display, load_rules(rule_files))


def _analyze_job(job) -> FileAnalysis:
    return analyze_file(job.source, job.display, job.rules)


def analyze_tree(source: str, *, jobs: int = 1, excludes: Exclusions | tuple[str, ...] = (),
                 converted: str | None = None,
                 import_timeout: float = 60.0, rules: tuple[str, ...] = ()) -> ProjectAnalysis:
    """``rules``: the project's rule files, applied with ms-migrate's."""
    python_jobs = [dataclasses.replace(j, rules=rules) for j in discover(source, None, excludes)
                   if j.kind in ("python", "notebook")]
    project = ProjectAnalysis(source)
    if jobs > 1 and len(python_jobs) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            project.files = list(pool.map(_analyze_job, python_jobs, chunksize=4))
    else:
        project.files = [_analyze_job(j) for j in python_jobs]
    _add_parameter_counts(project, python_jobs, import_timeout)
    if converted is not None:
        project.diffs = _diffs(source, converted, python_jobs, project)
    return project


def _add_parameter_counts(project: ProjectAnalysis, python_jobs, timeout: float) -> None:
    by_display = {j.display: j.source for j in python_jobs}
    requests = [{"path": by_display[f.path], "classes": f.cell_classes}
                for f in project.files if f.cell_classes and f.path in by_display]
    counts = count_parameters(requests, timeout)
    for f in project.files:
        found = counts.get(by_display.get(f.path, ""), {})
        if not found:
            continue
        project.parameter_counts[f.path] = found
        f.checklist = [_with_count(i, found.get(i.name)) if i.topic == "network" else i for i in f.checklist]


_ESTIMATE = re.compile(r"(; )?(at least )?[\d,]+ parameters \(from the code[^)]*\)")


def _with_count(entry: ChecklistItem, count) -> ChecklistItem:
    if count is None:
        return entry
    if isinstance(count, int):
        parts = [_ESTIMATE.sub("", entry.detail), f"{count:,} parameters (imported and counted)"]
    else:
        parts = [entry.detail, f"not counted by import: {count}"]
    return dataclasses.replace(entry, detail="; ".join(parts))


def _diffs(source: str, converted: str, python_jobs, project: ProjectAnalysis) -> list[FileDiff]:
    source_abs = os.path.abspath(source)
    diffs = []
    analysed = {f.path for f in project.files if f.status == "analysed"}
    for job in python_jobs:
        if job.display not in analysed or job.kind != "python":  # a notebook's diff would be its JSON
            continue
        if os.path.isfile(source_abs):
            target = converted if os.path.isfile(converted) else os.path.join(converted, os.path.basename(source_abs))
        else:
            target = os.path.join(converted, os.path.relpath(job.source, source_abs))
        original = _read(job.source)
        if original is None:
            continue
        diffs.append(FileDiff(job.display, original, _read(target)))
    return diffs


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return decode_source(handle.read()).text
    except (OSError, DecodeError):
        return None
