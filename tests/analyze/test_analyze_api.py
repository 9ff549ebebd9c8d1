"""API compliance: classification from the real conversion, argument notes from
the rule data, and the agreement test: every use analysis calls convertible is
converted by ``convert`` on the same input."""

from __future__ import annotations

import pathlib

import libcst as cst
import pytest

from rewrite_rules.registry import load_rules
from tests.snippets import PRELUDE
from transpiler.analyze.model import Category
from transpiler.analyze.runner import analyze_source
from transpiler.convert.pipeline import _method_names, convert_source
from transpiler.convert.names import analyse
from transpiler.convert.rewriter import MARKER_PREFIX
from transpiler.convert.structural import is_module_base

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "analyze_fixtures"


def _uses(code: str):
    return analyze_source(PRELUDE + code, "x.py").uses


def _by_api(code: str):
    return {u.api: u for u in _uses(code)}


def test_as_is_and_argument_differences():
    uses = _by_api("a = nn.ReLU()\nb = nn.BatchNorm2d(8)\nc = nn.Conv2d(3, 8, 3, groups=1, padding_mode='zeros')")
    assert uses["torch.nn.ReLU"].category is Category.AS_IS
    bn = uses["torch.nn.BatchNorm2d"]
    assert bn.category is Category.ARGUMENTS
    assert "momentum" in {a.name for a in bn.arguments}
    notes = dict((a.name, a.action) for a in uses["torch.nn.Conv2d"].arguments)
    assert notes["groups"] == "groups=1 -> group=1"
    assert notes["bias"] == "has_bias=True written out (MindSpore's default differs from torch's bias=True)"
    assert notes["padding_mode"] == "padding_mode='zeros' dropped (not needed by the MindSpore form)"


def test_dropped_and_unsupported_arguments_are_named():
    uses = _by_api("e = nn.Embedding(10, 4, sparse=True)\nc = nn.LSTM(4, 8, proj_size=2)")
    assert dict((a.name, a.action) for a in uses["torch.nn.Embedding"].arguments)["sparse"] == "sparse=True dropped (gradient storage format only)"
    assert uses["torch.nn.LSTM"].category is Category.MARKED  # convert marks it: analysis agrees


def test_marked_unknown_and_structural():
    code = (
        "x = torch.randn(3)\ny = x.q_scale()\nloss = x.sum()\nloss.backward()\n"
        "z = torch.nn.utils.spectral_norm\n"
        "opt = torch.optim.SGD([x], lr=0.1)\nopt.zero_grad()\nopt.step()\n"
        "loader = torch.utils.data.DataLoader([1, 2], batch_size=1)\n"
    )
    uses = _by_api(code)
    assert uses["torch.Tensor.q_scale"].category is Category.UNKNOWN
    assert uses["torch.nn.utils.spectral_norm"].category is Category.MARKED
    for api in ("torch.Tensor.backward", "torch.optim.Optimizer.zero_grad", "torch.optim.Optimizer.step",
                "torch.utils.data.DataLoader"):
        assert uses[api].category is Category.STRUCTURAL, api


def test_method_on_untyped_receiver_is_unknown_but_module_functions_are_not_counted():
    from transpiler.analyze.api_compliance import _UNCHECKED_METHODS

    name = sorted(_UNCHECKED_METHODS - set(load_rules().methods))[0]  # a shared method no rule covers yet
    code = f"import numpy as np\ndef f(t):\n    return t.{name}(), np.{name}(t)\n"
    uses = [u for u in _uses(code) if u.api == f"torch.Tensor.{name}"]
    assert [(u.line, u.col, u.category) for u in uses] == [(6, 12, Category.UNKNOWN)]


def test_ecosystem_imports_are_listed():
    code = "import torchvision.transforms as T\nfrom einops import rearrange\nimport timm\n"
    result = analyze_source(PRELUDE + code, "x.py")
    assert {(e.package, e.module) for e in result.ecosystem} == {
        ("torchvision", "torchvision.transforms"), ("einops", "einops.rearrange"), ("timm", "timm")}


def test_syntax_error_is_a_failed_file_not_a_crash():
    result = analyze_source((FIXTURES / "broken" / "bad.py").read_text(), "bad.py")
    assert result.status == "failed" and result.error


def _sources():
    files = sorted((ROOT / "samples").glob("*.py")) + sorted((FIXTURES / "project").rglob("*.py"))
    return [p for p in files if "torch" in p.read_text()]


@pytest.mark.parametrize("path", _sources(), ids=lambda p: p.name)
def test_every_api_analysis_calls_convertible_is_converted_by_convert(path):
    text = path.read_text()
    result = analyze_source(text, path.name)
    converted = convert_source(text, path.name)
    assert converted.output is not None
    convertible = [u for u in result.uses if u.category in (Category.AS_IS, Category.ARGUMENTS)]
    assert convertible, "the file should use some convertible API"
    converted_at = {(d.line, d.col, d.rule) for d in converted.diagnostics if d.outcome.value == "converted"}
    for use in convertible:
        assert (use.line, use.col, use.api) in converted_at, use
    # ... and the converted text no longer refers to a torch API that every use of was called convertible,
    # nor carries a marker naming it.
    still_torch = _torch_references(converted.output)
    markers = [line for line in converted.output.splitlines() if MARKER_PREFIX in line]
    fully = {u.api for u in convertible} - {u.api for u in result.uses if u.category not in
                                            (Category.AS_IS, Category.ARGUMENTS)}
    for api in fully:
        if api.startswith("torch.Tensor.") or api.startswith("torch.nn.Module."):
            continue  # method uses have no qualified name to look for
        assert api not in still_torch, api
        assert not any(f"{api}:" in m for m in markers), api


def _torch_references(code: str) -> set[str]:
    rules = load_rules()
    analysis = analyse(cst.parse_module(code), _method_names(rules), is_module_base)
    return set(analysis.references.values())
