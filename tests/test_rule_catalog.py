"""The supported-API table in the docs is generated from the rule data and
must match it."""

from __future__ import annotations

from pathlib import Path

from rewrite_rules.registry import load_rules
from transpiler.cli import main
from transpiler.rule_catalog import catalog, markdown

TABLE = Path(__file__).resolve().parents[1] / "rewrite_rules" / "SUPPORTED_APIS.md"
REFRESH = "ms-migrate rules --markdown -o rewrite_rules/SUPPORTED_APIS.md"


def test_checked_in_table_is_current():
    assert TABLE.exists(), f"missing; generate it with: {REFRESH}"
    assert TABLE.read_text(encoding="utf-8") == markdown(load_rules()), f"out of date; refresh it with: {REFRESH}"


def test_table_notes_show_argument_differences():
    entries = {e.api: e for e in catalog(load_rules())}
    assert "`dim`→`axis`" in entries["torch.cat"].notes
    assert "always written" in entries["torch.flatten"].notes
    assert entries["torch.nn.EmbeddingBag"].target == "— (marked)"
    assert entries["torch.cat"].cases >= 5


def test_rules_command_prints_the_count(capsys):
    assert main(["rules"]) == 0
    count = int(capsys.readouterr().out.split()[0])
    assert count == load_rules().api_count() > 200
