"""The supported-API table in the docs is generated from the rule data and
must match it; every converting rule is proven by execution."""

from __future__ import annotations

import importlib
from pathlib import Path

from rewrite_rules.registry import load_rules
from rewrite_rules.spec import ApiRule, Example
from transpiler.cli import main
from transpiler.rule_catalog import catalog, markdown, proof_counts, proof_of

TABLE = Path(__file__).resolve().parents[2] / "rewrite_rules" / "SUPPORTED_APIS.md"
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


def test_every_converting_rule_has_an_execution_case():
    """The README's promise: every rule is proven by running it. A converting API
    whose rules have no execution case (nor a test outside the harness) fails here."""
    missing = sorted(e.api for e in catalog(load_rules()) if e.converts and e.proof == "none")
    assert missing == [], f"{len(missing)} converting APIs have no execution case: {missing}"


def test_cases_against_torchs_documented_result_say_why_torch_cannot_run():
    for entry in catalog(load_rules()):
        if entry.proof == "reference":
            assert entry.unrunnable.startswith("torch cannot run it here: "), entry.api


def test_tests_named_as_proof_exist():
    for entry in catalog(load_rules()):
        for node in entry.proven_by:
            path, _, name = node.partition("::")
            module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
            assert callable(getattr(module, name, None)), f"{entry.api}: proven_by names {node}, which does not exist"


def test_structural_cases_say_what_they_leave_uncompared():
    for entry in catalog(load_rules()):
        if entry.proof == "structural":
            assert entry.uncompared, f"{entry.api}: a structural case needs notes saying what is not compared"


def test_rules_command_prints_the_proof_counts(capsys):
    assert main(["rules"]) == 0
    lines = capsys.readouterr().out.splitlines()
    counts = proof_counts(catalog(load_rules()))
    assert lines[1].startswith(f"{counts['exact'] + counts['tests'] + counts['reference']} proven by execution "
                               f"({counts['exact']} ")
    assert f"{counts['reference']} compared with torch's documented result" in lines[1]
    assert f"{counts['none']} without an execution case" in lines[2]
    assert main(["rules", "--unproven"]) == 0
    listing = capsys.readouterr().out
    for entry in catalog(load_rules()):
        if entry.converts and entry.proof != "exact":
            assert f"  {entry.api}" in listing


def test_proof_of_a_rule_is_its_strongest_case():
    exact = Example("result = x + 1", inputs={"x": "randn(2)"})
    structural = Example("result = x.sum()", inputs={"x": "randn(2)"}, compare="structural", notes="order not compared")
    shape = Example("result = x", inputs={"x": "randn(2)"}, compare="shape")
    golden = Example("y = torch.abs(x)", "y = ops.abs(x)")

    def rule(*examples, proven_by=()):
        return ApiRule("torch.f", "mindspore.ops.f", examples=examples, proven_by=proven_by)

    assert proof_of([rule(golden, structural, exact)]) == "exact"
    assert proof_of([rule(structural, proven_by=("tests/test_x.py::test_f",))]) == "tests"
    reference = Example("result = x.pin_memory()", inputs={"x": "randn(2)"}, torch_reference="result = x.clone()")
    assert proof_of([rule(reference, structural)]) == "reference"
    assert proof_of([rule(reference, exact)]) == "exact"
    assert proof_of([rule(structural, shape)]) == "structural"
    assert proof_of([rule(structural)]) == "structural"
    assert proof_of([rule(shape, golden)]) == "shape"
    assert proof_of([rule(golden)]) == "none"
