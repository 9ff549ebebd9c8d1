"""``ms-migrate verify``: inputs, element-wise comparison, exit codes, gradient
comparison, and naming the first diverging Cell when a rule is wrong."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from rewrite_rules.registry import load_rules
from rewrite_rules.spec import Drop
from tests.conversion import convert_to, with_rule
from transpiler.cli import main
from transpiler.proof.compare import compare
from transpiler.proof.verify import VerifyRequest, verify
from transpiler.proof.verify_inputs import InputSpec, InputSpecError, make_inputs, parse_input

MODEL = textwrap.dedent(
    '''
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self, width=8):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.LeakyReLU())
            self.head = nn.Linear(width, 4)

        def forward(self, x):
            h = self.body(x).mean(dim=(2, 3))
            return self.head(h), h
    '''
)


def test_input_specs():
    assert parse_input("4,3,32,32") == InputSpec((4, 3, 32, 32), "float32")
    assert parse_input("2,16:int64:0-100") == InputSpec((2, 16), "int64", 0, 100)
    assert parse_input("3:float64:-1-1") == InputSpec((3,), "float64", -1, 1)
    assert parse_input("scalar") == InputSpec((), "float32")
    pair = parse_input("2,3+2,3:float64")
    assert [a.dtype for a in make_inputs([pair], 0)[0]] == [np.float32, np.float64]
    ids, floats = make_inputs([parse_input("50:int64:5-9"), parse_input("50:float32:-1-1")], seed=0)
    assert ids.dtype == np.int64 and ids.min() >= 5 and ids.max() < 9
    assert floats.dtype == np.float32 and -1 <= floats.min() and floats.max() < 1
    again = make_inputs([parse_input("50:int64:5-9")], seed=0)[0]
    np.testing.assert_array_equal(ids, again)
    for bad in ("", "2,x", "2:complex", "2:int64:9-5", "2:int64:a-b", "1:2:3:4"):
        with pytest.raises(InputSpecError):
            parse_input(bad)


def test_compare_is_element_by_element():
    import mindspore
    import torch

    expected = {"loss": torch.tensor(1.0), "parts": (torch.ones(2), torch.zeros(3))}
    actual = {"loss": mindspore.Tensor(1.0), "parts": (mindspore.Tensor(np.ones(2, np.float32)),
                                                       mindspore.Tensor(np.full(3, 0.5, np.float32)))}
    diffs = compare(expected, actual, rtol=1e-4, atol=1e-4)
    assert [(d.name, d.ok) for d in diffs] == [
        ("out['loss']", True), ("out['parts'][0]", True), ("out['parts'][1]", False)]
    assert diffs[2].max_abs == pytest.approx(0.5)
    shape = compare(torch.ones(2, 3), mindspore.Tensor(np.ones((3, 2), np.float32)), 1e-4, 1e-4)[0]
    assert not shape.ok and shape.problem == "shape differs"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("verify")
    original = folder / "net.py"
    original.write_text(MODEL)
    good = folder / "good"
    good.mkdir()
    wrong = folder / "wrong"
    wrong.mkdir()
    # a deliberately wrong rule: LeakyReLU's slope not written out when the
    # torch default is used, so MindSpore's default slope (0.2, torch 0.01) applies
    rules = with_rule(load_rules(), "torch.nn.LeakyReLU", args={"negative_slope": "alpha", "inplace": Drop()})
    return original, convert_to(original, good), convert_to(original, wrong, rules=rules)


def test_verify_matches_with_gradients(files, capsys):
    original, good, _ = files
    status = main(["verify", str(original), str(good), "--model", "Net", "--kwargs", '{"width": 6}',
                   "--input", "2,3,8,8", "--grad"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "out[0]" in out and "out[1]" in out  # a tuple output, element by element
    assert "grad body.1.weight -> body.1.gamma" in out and "grad head.weight" in out
    assert out.strip().endswith("MATCH")


def test_wrong_rule_fails_and_names_the_diverging_cell(files, capsys):
    original, _, wrong = files
    assert "alpha" not in wrong.read_text() and "alpha=0.01" in files[1].read_text()
    status = main(["verify", str(original), str(wrong), "--model", "Net", "--input", "2,3,8,8"])
    out = capsys.readouterr().out
    assert status == 1, out
    assert "MISMATCH" in out
    assert "first diverging Cell: 'body.2' (LeakyReLU -> LeakyReLU)" in out
    assert "given the same inputs as its torch sub-module, its output differs: fix this Cell" in out


def test_divergence_upstream_of_a_cell_is_attributed_to_the_parent(files, tmp_path):
    """A wrong functional op between sub-Cells: the next Cell's inputs differ."""
    original, good, _ = files
    broken = tmp_path / "net.py"
    text = good.read_text()
    assert ".mean(" in text
    broken.write_text(text.replace(".mean(", ".sum("))
    result = verify(VerifyRequest(str(original), str(broken), "Net", [parse_input("2,3,8,8")]))
    assert result.status == 1
    assert result.divergence.path == "head"
    assert "the difference comes from code between sub-Cells" in result.divergence.describe()


def test_weights_that_do_not_fit_are_a_mismatch(files, tmp_path, capsys):
    original, good, _ = files
    changed = tmp_path / "net.py"
    changed.write_text(good.read_text().replace("nn.Dense(width, 4)", "nn.Dense(width, 5)"))
    status = main(["verify", str(original), str(changed), "--model", "Net", "--input", "2,3,8,8"])
    out = capsys.readouterr().out
    assert status == 1
    assert "unplaced torch key head.weight: shape (4, 8) does not fit head.weight (5, 8)" in out


def test_errors_exit_2(files, capsys):
    original, good, _ = files
    assert main(["verify", str(original), str(good), "--model", "Nope", "--input", "2,3,8,8"]) == 2
    assert f"{original}: defines no model 'Nope'" in capsys.readouterr().err
    assert main(["verify", str(original), str(good), "--model", "Net", "--input", "2,3,8"]) == 2
    assert "running the models" in capsys.readouterr().out
    assert main(["verify", str(original), str(good), "--model", "Net", "--input", "2:cplx"]) == 2
    assert "bad dtype" in capsys.readouterr().err


def test_cli_subprocess_exit_status(files):
    """The real entry point, as a user runs it."""
    import os
    import subprocess
    import sys

    original, good, _ = files
    proc = subprocess.run(
        [sys.executable, "-m", "transpiler", "verify", str(original), str(good), "--model", "Net",
         "--input", "1,3,4,4"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "GLOG_v": "3"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "MATCH" in proc.stdout
