"""``ms-migrate verify`` on stochastic models and on dtypes: torch's random
draws are replayed to MindSpore, so every output and gradient is compared and
a wrong conversion of the random part fails; values that cannot be compared
fail unless allowed; dtype differences fail unless a rule declares them.
Each check has a sabotage test: the wrong conversion must fail."""

from __future__ import annotations

import pathlib
import textwrap

import pytest

from rewrite_rules.registry import load_rules
from rewrite_rules.spec import Example
from tests.conversion import convert_to, with_rule
from transpiler.cli import main
from transpiler.proof.verify import MATCH, MISMATCH, VerifyRequest, verify
from transpiler.proof.verify_inputs import parse_input

ROOT = pathlib.Path(__file__).resolve().parents[2]
VAE = ROOT / "samples" / "vae.py"
STOCHASTIC = ROOT / "tests" / "models" / "stochastic.py"


def _sabotage(converted: pathlib.Path, folder: pathlib.Path, old: str, new: str) -> pathlib.Path:
    text = converted.read_text()
    assert text.count(old) == 1, f"{old!r} not found once in {converted}"
    folder.mkdir(exist_ok=True)
    out = folder / converted.name
    out.write_text(text.replace(old, new))
    return out


def _verify(capsys, *argv) -> tuple[int, str]:
    status = main(["verify", *map(str, argv)])
    return status, capsys.readouterr().out


@pytest.fixture(scope="module")
def vae(tmp_path_factory):
    folder = tmp_path_factory.mktemp("vae")
    good = convert_to(VAE, folder)
    bad = _sabotage(good, folder / "bad", "ops.exp(0.5 * logvar)", "ops.exp(2.0 * logvar)")
    return good, bad


VAE_ARGS = ("--model", "VAE", "--input", "8,1,28,28:float32:0-1", "--grad")


def test_vae_compares_every_output_and_gradient(vae, capsys):
    status, out = _verify(capsys, VAE, vae[0], *VAE_ARGS)
    assert status == 0, out
    assert "random draws replayed from torch to MindSpore: 1 (torch.randn)" in out
    for name in ("out[0]", "out[1]", "out[2]", "grad encoder.0.weight", "grad decoder.2.bias"):
        assert any(line.startswith(name) and line.endswith("ok") for line in out.splitlines()), name
    assert "NOT COMPARED" not in out and out.strip().endswith("MATCH")


def test_vae_wrong_reparameterisation_fails(vae, capsys):
    """Sabotage: exp(2.0 * logvar) instead of exp(0.5 * logvar)."""
    status, out = _verify(capsys, VAE, vae[1], *VAE_ARGS)
    assert status == 1, out
    lines = out.splitlines()
    assert any(line.startswith("out[0]") and "MISMATCH values differ" in line for line in lines), out
    assert any(line.startswith("grad fc_logvar.weight") and "MISMATCH" in line for line in lines), out
    # decoder.0 gets the model's z first: the wrong code is in the model's own construct
    assert "first diverging Cell: 'decoder.0' (Linear -> Dense)" in out and "in the construct of the model" in out
    assert lines[-1] == "MISMATCH"


@pytest.fixture(scope="module")
def stochastic(tmp_path_factory):
    return convert_to(STOCHASTIC, tmp_path_factory.mktemp("stochastic"))


def test_dropout_in_training_mode_is_compared(stochastic, capsys):
    status, out = _verify(capsys, STOCHASTIC, stochastic, "--model", "DropoutMLP", "--input", "4,16", "--grad", "--train")
    assert status == 0, out
    assert "random draws replayed from torch to MindSpore: 2 (torch.nn.functional.dropout x2)" in out


def test_dropout_given_keep_prob_fails(stochastic, tmp_path, capsys):
    """Sabotage: nn.Dropout(0.3) keeps 30% in MindSpore (p=0.3 drops 30%)."""
    bad = _sabotage(stochastic, tmp_path, "nn.Dropout(p=0.3)", "nn.Dropout(0.3)")
    status, out = _verify(capsys, STOCHASTIC, bad, "--model", "DropoutMLP", "--input", "4,16", "--train")
    assert status == 1, out
    assert "first diverging Cell: 'drop' (Dropout -> Dropout)" in out


def test_sampling_head_is_compared(stochastic, capsys):
    status, out = _verify(capsys, STOCHASTIC, stochastic, "--model", "SamplingHead", "--input", "5,12", "--grad")
    assert status == 0, out
    assert any(line.startswith("out[1]") and "int64 -> int64" in line and line.endswith("ok")
               for line in out.splitlines()), out


def test_sampling_without_replacement_fails(stochastic, tmp_path, capsys):
    """Sabotage: sampling without replacement where torch samples with it."""
    bad = _sabotage(stochastic, tmp_path, "ops.multinomial(ops.softmax(logits, axis=-1), 2, True)",
                    "ops.multinomial(ops.softmax(logits, axis=-1), 2, False)")
    status, out = _verify(capsys, STOCHASTIC, bad, "--model", "SamplingHead", "--input", "5,12")
    assert status == 1, out
    assert ("random draws do not correspond: MindSpore UniformReal asks for a uniform draw of shape (30,); "
            "torch's draw #1 is torch.multinomial (multinomial draw of shape (5, 2))") in out


def _pair(tmp_path, torch_body: str, ms_body: str):
    """A one-layer model ``Net`` and a hand-written MindSpore counterpart."""
    original = tmp_path / "net.py"
    original.write_text(textwrap.dedent(f'''
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)

            def forward(self, x):
                {torch_body}
        '''))
    (tmp_path / "ms").mkdir()
    converted = tmp_path / "ms" / "net.py"
    converted.write_text(textwrap.dedent(f'''
        import mindspore
        from mindspore import nn, ops

        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.fc = nn.Dense(4, 3)

            def construct(self, x):
                {ms_body}
        '''))
    return original, converted


def test_unreplayable_randomness_is_not_compared(tmp_path, capsys):
    original, converted = _pair(tmp_path, "return self.fc(x), torch.poisson(torch.full((2, 3), 4.0))",
                                "return self.fc(x), ops.full((2, 3), 4.0, dtype=mindspore.float32)")
    status, out = _verify(capsys, original, converted, "--model", "Net", "--input", "2,4", "--grad")
    assert status == 1, out
    assert "random ops that cannot be replayed: torch.poisson" in out
    assert any(line.startswith("out[1]") and "NOT COMPARED: changes between two torch runs" in line
               for line in out.splitlines()), out
    assert out.strip().endswith("NOT COMPARED: out[1] (--allow-not-compared accepts that)")
    assert "grad fc.weight" in out  # the compared output's gradients are still compared
    status, out = _verify(capsys, original, converted, "--model", "Net", "--input", "2,4", "--grad",
                          "--allow-not-compared")
    assert status == 0, out
    assert out.strip().endswith("MATCH OF THE COMPARED VALUES; NOT COMPARED: out[1]")


def test_a_value_not_compared_still_has_its_dtype_compared(tmp_path, capsys):
    """Sabotage: the unreplayable output comes back as int64 (ops.full infers it from 4.0)."""
    original, converted = _pair(tmp_path, "return self.fc(x), torch.poisson(torch.full((2, 3), 4.0))",
                                "return self.fc(x), ops.full((2, 3), 4.0)")
    status, out = _verify(capsys, original, converted, "--model", "Net", "--input", "2,4", "--allow-not-compared")
    assert status == 1, out
    assert any(line.startswith("out[1]") and "MISMATCH dtype float32 -> int64 (no rule declares it); values not "
               "compared" in line for line in out.splitlines()), out


def test_draws_that_do_not_correspond_fail(tmp_path, capsys):
    original, converted = _pair(tmp_path, "return self.fc(x) + torch.randn(2, 3)",
                                "return self.fc(x) + ops.rand(2, 3)")
    status, out = _verify(capsys, original, converted, "--model", "Net", "--input", "2,4")
    assert status == 1, out
    assert ("random draws do not correspond: MindSpore UniformReal asks for a uniform draw of shape (2, 3); "
            "torch's draw #1 is torch.randn (normal draw of shape (2, 3))") in out
    assert out.strip().endswith("MISMATCH")


def test_a_draw_mindspore_never_makes_fails(tmp_path, capsys):
    original, converted = _pair(tmp_path, "return self.fc(x) + 0.1 * torch.randn(2, 3)",
                                "return self.fc(x) + 0.1 * ops.zeros((2, 3))")
    status, out = _verify(capsys, original, converted, "--model", "Net", "--input", "2,4")
    assert status == 1, out
    assert "MindSpore never asked for torch's draw #1 torch.randn (normal draw of shape (2, 3))" in out


# --- dtypes ---------------------------------------------------------------------------------------------

COUNTS = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class Counts(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            y = self.fc(x)
            return y, torch.sum((y > 0).long(), dim=1), x.double() * 2
    ''')


@pytest.fixture(scope="module")
def counts(tmp_path_factory):
    folder = tmp_path_factory.mktemp("counts")
    original = folder / "counts.py"
    original.write_text(COUNTS)
    (folder / "converted").mkdir()
    return original, convert_to(original, folder / "converted")


def test_dtypes_are_compared(counts, capsys):
    original, converted = counts
    status, out = _verify(capsys, original, converted, "--model", "Counts", "--input", "2,4")
    assert status == 0, out
    assert "int64 -> int64" in out and "float64 -> float64" in out


@pytest.mark.parametrize("old, new, dtypes", [
    ("ops.sum((y > 0).long(), dim=1)", "ops.sum((y > 0).long(), dim=1).int()", "int64 -> int32"),
    ("x.to(mindspore.float64) * 2", "x.to(mindspore.float32) * 2", "float64 -> float32"),
])
def test_undeclared_dtype_difference_fails(counts, tmp_path, capsys, old, new, dtypes):
    """Sabotage: an output of another dtype with values that still agree."""
    original, converted = counts
    bad = _sabotage(converted, tmp_path, old, new)
    status, out = _verify(capsys, original, bad, "--model", "Counts", "--input", "2,4")
    assert status == 1, out
    assert f"MISMATCH dtype {dtypes} (no rule declares it)" in out


def test_declared_dtype_difference_is_allowed_and_named(counts, tmp_path):
    original, converted = counts
    bad = _sabotage(converted, tmp_path, "ops.sum((y > 0).long(), dim=1)", "ops.sum((y > 0).long(), dim=1).int()")
    declaring = Example("s = torch.sum(x)", inputs={}, dtype_map={"int64": "int32"},
                        notes="a test rule: MindSpore gives int32 sums")
    rules = load_rules()
    rules = with_rule(rules, "torch.sum", examples=(*rules.calls["torch.sum"].examples, declaring))
    request = VerifyRequest(str(original), str(bad), "Counts", [parse_input("2,4")], rules=rules)
    result = verify(request)
    assert result.status == MATCH, "\n".join(result.lines())
    assert result.outputs[1].verdict() == "ok (dtype declared by torch.sum (a test rule: MindSpore gives int32 sums))"
    assert verify(VerifyRequest(str(original), str(bad), "Counts", [parse_input("2,4")])).status == MISMATCH
