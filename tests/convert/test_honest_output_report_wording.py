"""What the reports say is what happened: torch.randint with an explicit low
is not said to get "its implicit low=0 written", the two-argument form
randint(high, size) is described as torch binds it (not as low 10 -> 0, high
(3,) -> 10), and analyze does not list a
call a rule's code rewrote as a whole (torch.compile -> jit_compile) as
"converted as is"."""

from __future__ import annotations

import json

from transpiler.cli import main
from transpiler.convert.pipeline import convert_source


def _messages(source: str) -> list[str]:
    return [d.message for d in convert_source(source, "m.py").diagnostics if d.rule == "torch.randint"]


def test_an_explicit_low_is_not_called_implicit():
    (message,) = _messages("import torch\nx = torch.randint(3, 10, (4,))\n")
    assert "implicit" not in message, message
    (message,) = _messages("import torch\nx = torch.randint(low=3, high=10, size=(4,))\n")
    assert "implicit" not in message, message


def test_the_two_argument_form_is_described_as_torch_reads_it():
    (message,) = _messages("import torch\nx = torch.randint(10, (3,))\n")
    assert message == ("torch.randint(10, (3,)) -> ops.randint(0, 10, size=(3,)): torch's randint(high, size): "
                       "low=0 written (MindSpore's randint has no default low)"), message
    (message,) = _messages("import torch\nx = torch.randint(high=10, size=(3,))\n")
    assert message.endswith("ops.randint(low=0, high=10, size=(3,)): low=0 written (MindSpore's randint has no "
                            "default low)"), message
    (message,) = _messages("import torch\nx = torch.randint(2, 10, (3,))\n")
    assert message == "torch.randint(2, 10, (3,)) -> ops.randint(2, 10, (3,))", message


def test_analyze_does_not_call_a_rewritten_compile_as_is(tmp_path, capsys):
    (tmp_path / "m.py").write_text("import torch\nimport torch.nn as nn\nm = nn.Linear(2, 2)\nm = torch.compile(m)\n")
    main(["analyze", str(tmp_path / "m.py"), "--format", "json", "--import-timeout", "0"])
    uses = {u["api"]: u for u in json.loads(capsys.readouterr().out)["uses"]}
    assert uses["torch.nn.Linear"]["category"] == "as_is"
    compiled = uses["torch.compile"]
    assert compiled["category"] != "as_is", compiled
    assert compiled["arguments"][0]["name"] == "the call"
