"""Which tensor method names pass through unchanged is checked against the
installed MindSpore itself.

A method call passes unchanged only through a rule that says MindSpore's
Tensor has the method with the same meaning (``same(...)``), proven by that
rule's execution cases; every other torch Tensor method is converted or
marked. The conversion reads the generated methods_data.py (it never
imports the frameworks); these tests import both and check that file and the
pass-through rules against them.
"""

from __future__ import annotations

import mindspore
import pytest

from rewrite_rules.tensor._generate_methods import DATA_FILE, builtin_method_names, render
from rewrite_rules.registry import load_rules
from rewrite_rules.spec import MethodRule, PropertyRule
from rewrite_rules.tensor.methods import LEFT_ALONE, READ_AS_IN_TORCH
from rewrite_rules.tensor.methods_data import SHARED_TENSOR_METHODS, TORCH_ONLY_TENSOR_METHODS
from tests.snippets import convert_snippet
from transpiler.convert.rewriter import MARKER_PREFIX

REFRESH = "python -m rewrite_rules.tensor._generate_methods"


def _pass_through_rules() -> list[MethodRule]:
    """Tensor rules that leave the call (or attribute read) as written."""
    rules = load_rules()
    return [r for rs in rules.methods.values() for r in rs
            if r.receiver == "tensor" and r.hook is None and r.rename == r.name]


def test_data_file_matches_the_installed_frameworks():
    assert DATA_FILE.read_text() == render(), f"methods_data.py is out of date; refresh it with: {REFRESH}"


# methods of torch's sparse tensors, held as a mindspore.COOTensor by the converted code
# (rewrite_rules/torch_functions/sparse.py), which has them under the same name
SPARSE_METHODS = frozenset({"to_dense"})


@pytest.mark.parametrize("rule", _pass_through_rules(), ids=lambda r: r.name)
def test_a_method_passes_through_only_when_mindspore_has_it(rule):
    if rule.name in SPARSE_METHODS:
        assert hasattr(mindspore.COOTensor, rule.name), f"mindspore.COOTensor has no {rule.name}"
        assert any(e.runs for e in rule.examples), f"{rule.torch} passes through without an execution case"
        return
    assert hasattr(mindspore.Tensor, rule.name), f"mindspore.Tensor has no {rule.name}: the rule must convert or mark it"
    assert rule.name in SHARED_TENSOR_METHODS
    assert any(e.runs for e in rule.examples), f"{rule.torch} passes through without an execution case proving the meaning"


def test_every_shared_method_is_decided():
    """A name MindSpore shares is a pass-through only by a rule with cases;
    the few attributes read without a rule are listed with their reason."""
    rules = load_rules()
    undecided = SHARED_TENSOR_METHODS - set(rules.methods) - READ_AS_IN_TORCH - LEFT_ALONE
    assert not undecided, f"shared with MindSpore but without a rule (same(), a conversion or a marker): {sorted(undecided)}"
    assert READ_AS_IN_TORCH | LEFT_ALONE <= SHARED_TENSOR_METHODS
    assert all(hasattr(mindspore.Tensor, name) for name in READ_AS_IN_TORCH)


def test_torch_only_methods_of_the_issue_are_converted_or_marked():
    """The methods a peer's test suite found passing through unchanged (#11)."""
    reported = {"acos_", "asin_", "cumsum_", "bitwise_and_", "bitwise_or_", "bitwise_xor_", "logical_and_",
                "logical_or_", "logical_xor_", "divide_", "multiply_", "subtract_", "true_divide_", "nan_to_num_",
                "renorm_", "as_strided", "corrcoef", "dist", "fix", "frexp", "histogram", "kron", "lu", "matrix_exp",
                "mode", "pinverse", "polygamma", "vdot", "narrow_copy", "split_with_sizes", "take_along_dim",
                "scatter_reduce", "stft", "resize_", "resolve_conj", "cfloat", "cdouble", "retain_grad",
                "requires_grad", "is_leaf", "is_cuda", "is_cpu", "grad"}
    assert reported <= TORCH_ONLY_TENSOR_METHODS | SHARED_TENSOR_METHODS
    assert not reported - set(load_rules().methods)


def test_a_torch_only_method_without_rule_is_marked():
    out = convert_snippet("x = torch.zeros(2)\ny = x.q_scale()\n")
    assert MARKER_PREFIX + "torch.Tensor.q_scale:" in out and "y = x.q_scale()" in out


def test_builtin_method_names_are_not_torch_only():
    """list.index, str.split ... on other objects are never marked."""
    assert not TORCH_ONLY_TENSOR_METHODS & builtin_method_names()
    assert MARKER_PREFIX not in convert_snippet("x = torch.zeros(2)\nn = [1, 2].index(2)\nparts = 'a b'.split()\n")


def test_a_builtin_method_as_a_statement_is_left_alone():
    """names.sort() sorts a list; a tensor's sort as a statement would discard its result."""
    code = "x = torch.zeros(2)\nnames.sort()\nnames.sort(key=len, reverse=True)\nseen.add(3)\nvalues, order = x.sort()\n"
    out = convert_snippet(code)
    assert "names.sort()\nnames.sort(key=len, reverse=True)\nseen.add(3)\n" in out and "ops.sort(x)" in out
