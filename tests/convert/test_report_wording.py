"""Report lines speak the user's language (issue 14 item 5): each says what the
code became and which argument changed and why, derived from the conversion
itself, in the JSON and Markdown reports, the terminal and `analyze` (text,
JSON, HTML) alike; none uses the tool's internal words."""

from __future__ import annotations

import json
import re

import pytest

from transpiler.cli import main

MODEL = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1, bias=False)
        self.ln = nn.LayerNorm(8, eps=1e-6)
        self.fc = nn.Linear(8, 10, bias=False)
        self.act = nn.ReLU(inplace=True)
        nn.init.kaiming_normal_(self.conv.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        x = self.act(self.conv(x)).mean((2, 3))
        x.add_(1)
        y = torch.zeros(2, 3, device="cuda")
        return F.softmax(self.fc(self.ln(x)), dim=-1) + y.sum()
"""

# line -> the report line ms-migrate must write for it
EXPECTED = {
    9: 'nn.Conv2d(3, 8, 3, padding=1, bias=False) -> nn.Conv2d(3, 8, 3, pad_mode="pad", padding=1, has_bias=False): '
       'bias=False -> has_bias=False; pad_mode="pad" added (pad_mode and has_bias are always written: MindSpore '
       "defaults to pad_mode='same' and has_bias=False)",
    10: "nn.LayerNorm(8, eps=1e-6) -> nn.LayerNorm((8,), epsilon=1e-6): normalized_shape 8 -> (8,) (LayerNorm "
        "normalized_shape: an int becomes a 1-tuple); eps=1e-6 -> epsilon=1e-6 (epsilon is always written: "
        "MindSpore's default is 1e-7)",
    11: "nn.Linear(8, 10, bias=False) -> nn.Dense(8, 10, has_bias=False): bias=False -> has_bias=False",
    12: "nn.ReLU(inplace=True) -> nn.ReLU(): inplace=True dropped (the result is the same; MindSpore layers never "
        "work in place)",
    13: 'nn.init.kaiming_normal_(self.conv.weight, mode="fan_out", nonlinearity="relu") -> '
        "self.conv.weight.set_data(mindspore.common.initializer.initializer(...))",
    17: "x.add_(1) -> x updated to x.add(1) (MindSpore's in-place methods do not update on CPU)",
    18: 'torch.zeros(2, 3, device="cuda") -> ops.zeros((2, 3)): device="cuda" dropped (device placement is global '
        "in MindSpore); the sizes are passed as one tuple",
}
INTERNAL_WORDS = re.compile(r"\brewritten\b|\bhook\b|MindSpore form|\brule\b")


@pytest.fixture
def converted(tmp_path):
    source = tmp_path / "model.py"
    source.write_text(MODEL)
    reports = tmp_path / "report.json", tmp_path / "report.md"
    code = main(["convert", str(source), "-o", str(tmp_path / "model_ms.py"), "-q",
                 "--report", str(reports[0]), "--report", str(reports[1])])
    assert code == 0
    return json.loads(reports[0].read_text()), reports[1].read_text()


def test_json_report_says_what_each_call_became(converted):
    diagnostics = json.loads(json.dumps(converted[0]))["diagnostics"]
    by_line = {d["line"]: d for d in diagnostics if d["outcome"] == "converted"}
    for line, message in EXPECTED.items():
        assert by_line[line]["message"] == message
    assert by_line[11]["changes"] == [{"name": "bias", "change": "bias=False -> has_bias=False"}]
    assert by_line[13]["changes"][0]["name"] == "the call"  # the rule's code rewrote the call as a whole
    for d in diagnostics:
        assert not INTERNAL_WORDS.search(d["message"]), d["message"]


def test_markdown_report_lists_every_conversion_in_the_same_words(converted):
    markdown = converted[1]
    assert "## What each conversion did (" in markdown
    for message in EXPECTED.values():
        assert message.replace("|", "\\|") in markdown
    assert not INTERNAL_WORDS.search(markdown.split("## What each conversion did")[1])


def test_analyze_names_each_argument_change(tmp_path, capsys):
    source = tmp_path / "model.py"
    source.write_text(MODEL)
    assert main(["analyze", str(source), "-f", "json", "--import-timeout", "0"]) == 0
    uses = {use["api"]: use for use in json.loads(capsys.readouterr().out)["uses"]}
    assert uses["torch.nn.Linear"]["arguments"] == [{"name": "bias", "action": "bias=False -> has_bias=False"}]
    assert uses["torch.nn.LayerNorm"]["arguments"][1] == {
        "name": "eps", "action": "eps=1e-6 -> epsilon=1e-6"}
    kaiming = uses["torch.nn.init.kaiming_normal_"]
    assert kaiming["category"] == "arguments" and kaiming["arguments"][0]["action"] == EXPECTED[13]
    for use in uses.values():
        for note in use["arguments"]:
            assert not INTERNAL_WORDS.search(note["action"]), note


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_analyze_reports_carry_the_same_words(tmp_path, capsys, fmt):
    source = tmp_path / "model.py"
    source.write_text(MODEL)
    out = tmp_path / f"report.{fmt}"
    assert main(["analyze", str(source), "-f", fmt, "-o", str(out), "--import-timeout", "0", "--color", "never"]) == 0
    text = " ".join(out.read_text().split())
    assert "bias=False -&gt; has_bias=False" in text if fmt == "html" else "bias=False -> has_bias=False" in text
    assert "rewritten by the rule" not in text and "MindSpore form" not in text


def test_a_call_that_reads_the_same_names_the_mindspore_api(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import torch.nn as nn\nact = nn.ReLU()\nx = nn.Flatten()(act)\n")
    report = tmp_path / "r.json"
    assert main(["convert", str(source), "-o", str(tmp_path / "out.py"), "--report", str(report), "-q"]) == 0
    messages = [d["message"] for d in json.loads(report.read_text())["diagnostics"]]
    assert "nn.ReLU() -> mindspore.nn.ReLU (the code reads the same)" in messages


@pytest.mark.parametrize("code, shown", [
    # fits: as written, on one line
    ("torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)",
     "torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)"),
    # too long: the arguments of calls two calls deep go first ...
    ('load_param_into_net(model, load_checkpoint(str(path_to_the_checkpoint_file).removesuffix(".ckpt") + ".ckpt"))',
     'load_param_into_net(model, load_checkpoint(str(...).removesuffix(...) + ".ckpt"))'),
    # ... then those of the calls one call deep; comments and line breaks never show
    ("nn.Sequential(\n    nn.Conv2d(in_channels, out_channels, kernel_size=3, padding=1),  # first\n"
     "    nn.ReLU(inplace=True),\n    nn.Conv2d(out_channels, out_channels, kernel_size=3, padding=1),\n)",
     "nn.Sequential(nn.Conv2d(...), nn.ReLU(...), nn.Conv2d(...))"),
    # a call whose arguments go holds calls whose arguments went already
    ("outer(first_argument_name, middle(inner(deep(x), y), other_argument_value(z)), last_argument_name_that_is_quite_long)",
     "outer(first_argument_name, middle(...), last_argument_name_that_is_quite_long)"),
])
def test_code_in_a_message_is_one_line_with_inner_arguments_elided(code, shown):
    import libcst as cst

    from transpiler.convert.change_text import short

    assert short(cst.parse_expression(code)) == shown
