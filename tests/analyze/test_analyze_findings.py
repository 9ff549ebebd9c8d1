"""Every function-compliance checker's embedded examples: each trigger produces
the finding, each pass does not (Fixit style: the examples live in the checker)."""

from __future__ import annotations

import pytest

from tests.snippets import PRELUDE
from transpiler.analyze.findings import all_checkers
from transpiler.analyze.runner import analyze_source

CHECKERS = all_checkers()
TRIGGERS = [(c.kind, i, code) for c in CHECKERS for i, code in enumerate(c.triggers)]
PASSES = [(c.kind, i, code) for c in CHECKERS for i, code in enumerate(c.passes)]


def _kinds(code: str) -> list[str]:
    result = analyze_source(PRELUDE + code, "example.py")
    assert result.status == "analysed", result.error
    return [f.kind for f in result.findings]


@pytest.mark.parametrize("kind, index, code", TRIGGERS, ids=[f"{k}-{i}" for k, i, _ in TRIGGERS])
def test_trigger_produces_the_finding(kind, index, code):
    assert kind in _kinds(code), f"{kind} not found in:\n{code}"


@pytest.mark.parametrize("kind, index, code", PASSES, ids=[f"{k}-{i}" for k, i, _ in PASSES])
def test_pass_does_not_produce_the_finding(kind, index, code):
    assert kind not in _kinds(code), f"{kind} wrongly found in:\n{code}"


def test_every_checker_has_examples_both_ways_and_a_reason_and_a_fix():
    for checker in CHECKERS:
        assert checker.triggers and checker.passes, checker.kind
        assert checker.why and checker.fix and checker.family, checker.kind


def test_the_issue_families_are_all_covered():
    kinds = {c.kind for c in CHECKERS}
    assert {"dynamic-shape-op", "boolean-mask-index", "tensor-slice-bound", "computed-k", "tensor-control-flow",
            "shape-change-in-branch", "variable-length-batches", "sparse-tensor", "sparse-gradient",
            "second-order-grad", "custom-autograd-function", "hook", "torch-jit", "distributed", "amp"} <= kinds


def test_finding_carries_location_reason_and_fix():
    code = "class M(nn.Module):\n    def forward(self, x):\n        return torch.nonzero(x)\n"
    result = analyze_source(PRELUDE + code, "m.py")
    [finding] = [f for f in result.findings if f.kind == "dynamic-shape-op"]
    assert (finding.path, finding.line) == ("m.py", 6)
    assert finding.code == "torch.nonzero(x)"
    assert "static graph" in finding.why and "mask" in finding.fix


def test_shadowed_torch_name_is_not_a_finding():
    code = "def f(torch):\n    return torch.nonzero(3)\n"
    assert "dynamic-shape-op" not in _kinds(code)
