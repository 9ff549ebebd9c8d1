"""``ms-migrate analyze`` prints its report in every format, on samples/ and on a
project tree; the SARIF validates against the 2.1.0 schema."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import jsonschema
import pytest

from transpiler.analyze.formats import render
from transpiler.analyze.runner import analyze_tree

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROJECT = ROOT / "tests" / "analyze_fixtures" / "project"
SCHEMA = ROOT / "tests" / "analyze_fixtures" / "sarif-schema-2.1.0.json"  # copy of the OASIS 2.1.0 schema
FORMATS = ("text", "json", "markdown", "sarif", "html")


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "GLOG_v": "3"}
    return subprocess.run([sys.executable, "-m", "transpiler", "analyze", *args], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=600)


@pytest.fixture(scope="module")
def project():
    return analyze_tree(str(PROJECT), import_timeout=0)


@pytest.mark.parametrize("source", ["samples", "tests/analyze_fixtures/project"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_cli_prints_every_format(source, fmt):
    done = _cli(source, "--format", fmt, "--import-timeout", "0")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "\x1b[" not in out  # no colour when stdout is not a terminal
    if fmt == "text":
        assert "API compliance" in out and "Training-tricks checklist" in out
    elif fmt in ("json", "sarif"):
        json.loads(out)
    elif fmt == "markdown":
        assert out.startswith("# Migration analysis") and "## Function compliance" in out
    else:
        assert out.startswith("<!DOCTYPE html>") and 'id="api-table"' in out


def test_text_colour_only_when_asked(project):
    assert "\x1b[" in render(project, "text", color=True)
    assert "\x1b[" not in render(project, "text", color=False)


def test_json_holds_every_part(project):
    data = json.loads(render(project, "json"))
    assert data["summary"]["api_uses"] == len(data["uses"]) > 0
    assert sum(data["summary"]["categories"].values()) == len(data["uses"])
    assert {"apis", "ecosystem", "findings", "checklist"} <= set(data)
    assert {f["kind"] for f in data["findings"]} >= {"amp", "torch-jit", "distributed", "hook"}


def test_sarif_validates_against_the_2_1_0_schema(project):
    sarif = json.loads(render(project, "sarif"))
    schema = json.loads(SCHEMA.read_text())
    jsonschema.validate(sarif, schema)
    results = sarif["runs"][0]["results"]
    finding = next(r for r in results if r["ruleId"] == "boolean-mask-index")
    location = finding["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith("models/net.py")
    assert location["region"]["startLine"] == 35


def test_output_file_and_bad_arguments(tmp_path):
    target = tmp_path / "plan.md"
    done = _cli("tests/analyze_fixtures/project", "--format", "md", "-o", str(target), "--import-timeout", "0")
    assert done.returncode == 0 and target.read_text().startswith("# Migration analysis")
    assert _cli("samples", "--format", "pdf").returncode == 2
    assert _cli("no/such/dir").returncode == 2


def test_a_broken_file_is_reported_and_the_exit_code_says_so():
    done = _cli("tests/analyze_fixtures/broken", "--import-timeout", "0")
    assert done.returncode == 1
    assert "bad.py" in done.stdout
