"""The HTML report in a real browser: headless Chromium loads the page (scripts
run), and the DOM it renders holds the summary, the API table, the findings and
each converted file's side-by-side diff with the markers highlighted."""

from __future__ import annotations

import html
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
from collections import Counter

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROJECT = "tests/analyze_fixtures/project"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage"]


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("headless Chromium is needed for the HTML report test: apt-get install -y chromium")


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "GLOG_v": "3"}
    return subprocess.run([sys.executable, "-m", "transpiler", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=600)


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> pathlib.Path:
    work = tmp_path_factory.mktemp("html")
    out = work / "converted"
    done = _run("convert", PROJECT, "-o", str(out), "-q")
    assert done.returncode == 0, done.stderr
    page = work / "report.html"
    done = _run("analyze", PROJECT, "--format", "html", "--converted", str(out), "-o", str(page),
                "--import-timeout", "0")
    assert done.returncode == 0, done.stderr
    return page


def _browser(page: pathlib.Path, tmp_path: pathlib.Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [_chromium(), *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *extra, page.as_uri()],
        capture_output=True, text=True, timeout=180,
    )


def test_page_is_self_contained(page):
    html = page.read_text()
    assert not re.search(r"<(link|img|script)[^>]+(src|href)=", html)


def test_chromium_renders_tables_findings_and_diffs(page, tmp_path):
    done = _browser(page, tmp_path, "--dump-dom", "--virtual-time-budget=3000")
    dom = done.stdout
    assert "</html>" in dom, done.stderr[-2000:]
    assert re.search(r'<body[^>]*data-ready="1"', dom), "the page's script did not run"
    api_rows = re.findall(r'<tr data-category="(\w+)"', dom)
    assert len(api_rows) > 20 and {"as_is", "arguments", "structural", "marked"} <= set(api_rows)
    shown = re.search(r'<span id="api-shown"[^>]*>(\d+) of (\d+) rows</span>', dom)
    assert shown and shown.group(1) == shown.group(2) == str(len(api_rows))
    assert 'data-kind="tensor-control-flow"' in dom and 'data-kind="amp"' in dom
    assert 'id="checklist-table"' in dom
    diffs = re.findall(r'<table class="diff">', dom)
    assert len(diffs) == 2  # models/net.py and train/train.py
    markers = re.findall(r'<td class="new marker">([^<]*)</td>', dom)
    assert markers and all("TODO(ms-migrate)" in m for m in markers)
    assert re.search(r'<tr class="(replace|insert)">', dom)


def test_rendered_page_shows_everything_the_analysis_found(page, tmp_path):
    """The DOM Chromium renders holds the analysis itself: the summary's
    numbers, one API row per API with its category and count, every finding
    kind with its count, and every marker of the converted files."""
    report = page.parent / "report.json"
    done = _run("analyze", PROJECT, "--format", "json", "-o", str(report), "--import-timeout", "0")
    assert done.returncode == 0, done.stderr
    analysis = json.loads(report.read_text())
    done = _browser(page, tmp_path, "--dump-dom", "--virtual-time-budget=3000")
    dom = done.stdout
    assert "</html>" in dom, done.stderr[-2000:]

    summary = analysis["summary"]
    cards = {html.unescape(label): int(number)
             for number, label in re.findall(r'<div class="card[^"]*"><b>(\d+)</b>([^<]*)</div>', dom)}
    assert cards == {
        f"torch API uses ({summary['apis']} APIs)": summary["api_uses"],
        "converted as is": summary["categories"]["as_is"],
        "converted with argument differences": summary["categories"]["arguments"],
        "needs a structural rewrite": summary["categories"]["structural"],
        "no MindSpore equivalent (marked)": summary["categories"]["marked"],
        "unknown": summary["categories"]["unknown"],
        "function-compliance findings": summary["findings"],
        "ecosystem imports": summary["ecosystem_imports"],
    }
    rows = re.findall(r'<tr data-category="(\w+)"><td>.*?</td><td><code>([^<]*)</code></td><td class="num">(\d+)</td>', dom)
    assert sorted((category, html.unescape(api), int(count)) for category, api, count in rows) == sorted(
        (entry["category"], entry["api"], entry["count"]) for entry in analysis["apis"])

    kinds = Counter(finding["kind"] for finding in analysis["findings"])
    shown = dict(re.findall(r'data-kind="([\w-]+)"><h3><code>[\w-]+</code> <span class="muted">[^<]* · (\d+)</span>', dom))
    assert {kind: int(count) for kind, count in shown.items()} == dict(kinds)

    converted = page.parent / "converted"
    expected_markers = sorted(line for path in converted.rglob("*.py")
                              for line in path.read_text().splitlines() if "TODO(ms-migrate)" in line)
    markers = sorted(html.unescape(text) for text in re.findall(r'<td class="new marker">([^<]*)</td>', dom))
    assert markers == expected_markers
