"""A project's own rules (issue 14 item 8): a rule file named in
``[tool.ms-migrate] rules`` or with ``--rules`` is loaded and applied by
convert and analyze, ``ms-migrate rules --check`` proves it by running its
examples under both frameworks (a sabotaged rule fails), installed packages
ship rules through an entry point, and a bad rule file is one line naming it.
The project in tests/data/user_rules is the README's worked example."""

from __future__ import annotations

import ast
import json
import pathlib
import shutil
import textwrap

import pytest

from rewrite_rules import registry
from transpiler.cli import main

DATA = pathlib.Path(__file__).parents[1] / "data" / "user_rules"
ROOT = pathlib.Path(__file__).resolve().parents[2]

CONVERTED_STEM = "self.stem = mylib_ms.layers.ConvBNAct(3, 16, stride=2)  # downsample"


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = tmp_path / "project"
    shutil.copytree(DATA, root, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.chdir(root)
    return root


def _converted(path: pathlib.Path) -> str:
    return (path / "model.py").read_text()


def test_rules_named_in_the_configuration_are_applied(project, tmp_path, capsys):
    assert main(["convert", str(project / "src"), "-o", str(tmp_path / "out"), "-q", "-j", "1"]) == 0
    output = _converted(tmp_path / "out")
    assert CONVERTED_STEM in output
    assert "import mylib_ms.layers\n" in output
    assert "mylib.layers" not in output and "torch" not in output  # the torch layer's import went with its use
    assert "torch API uses: 6 found, 6 converted, 0 marked, 0 unrecognised" in capsys.readouterr().err


def test_rules_named_on_the_command_line_are_applied(project, tmp_path):
    (project / "pyproject.toml").unlink()
    assert main(["convert", str(project / "src"), "-o", str(tmp_path / "plain"), "-q", "-j", "1"]) == 0
    assert "self.stem = ConvBNAct(3, 16, stride=2)" in _converted(tmp_path / "plain")  # not torch: left alone
    assert main(["convert", str(project / "src"), "-o", str(tmp_path / "out"), "-q", "-j", "2",
                 "--rules", str(project / "ms_rules.py")]) == 0
    assert CONVERTED_STEM in _converted(tmp_path / "out")


def test_an_edited_rule_file_is_not_served_from_the_cache(project, tmp_path):
    cache = ["--cache-dir", str(tmp_path / "cache")]
    assert main(["convert", str(project / "src"), "-o", str(tmp_path / "out"), "-q", *cache]) == 0
    rules = project / "ms_rules.py"
    rules.write_text(rules.read_text().replace('"mylib_ms.layers.ConvBNAct"', '"mylib_ms.blocks.ConvBNAct"'))
    assert main(["convert", str(project / "src"), "-o", str(tmp_path / "out"), "-q", "--force", *cache]) == 0
    assert "mylib_ms.blocks.ConvBNAct(3, 16, stride=2)" in _converted(tmp_path / "out")


def test_analyze_counts_the_users_api_as_converted(project, tmp_path):
    report = tmp_path / "analysis.json"
    assert main(["analyze", str(project / "src"), "-f", "json", "-o", str(report), "--import-timeout", "0"]) == 0
    uses = {use["api"]: use for use in json.loads(report.read_text())["uses"]}
    use = uses["mylib.layers.ConvBNAct"]
    assert (use["category"], use["outcome"]) == ("as_is", "converted")


def test_a_converted_converted_tree_stays_the_same(project, tmp_path):
    assert main(["convert", str(project / "src"), "-o", str(tmp_path / "once"), "-q", "--no-cache"]) == 0
    assert main(["convert", str(tmp_path / "once"), "-o", str(tmp_path / "twice"), "-q", "--no-cache",
                 "--rules", str(project / "ms_rules.py")]) == 0
    assert _converted(tmp_path / "twice") == _converted(tmp_path / "once")


# -- proven by execution --------------------------------------------------------------

def test_check_runs_the_examples_under_both_frameworks(project, capsys):
    assert main(["rules", "--check"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "ok    mylib.layers.ConvBNAct-0 (golden text)",
        "ok    mylib.layers.ConvBNAct-0 (execution)",
        "ok    mylib.layers.ConvBNAct-1 (execution)",
    ]
    assert "3 checks of 1 rule from 1 source: 3 passed, 0 failed" in err


def test_check_fails_a_sabotaged_rule(project, capsys):
    """The rule forgets ``act``: MindSpore's layer keeps its activation where torch's has none."""
    sabotaged = project / "wrong_rules.py"
    sabotaged.write_text((project / "ms_rules.py").read_text().replace(
        '"act": "activation"', '"act": Drop("sabotage")').replace("import ApiRule, Example", "import ApiRule, Drop, Example"))
    assert main(["rules", "--check", "--rules", str(sabotaged)]) == 1
    out, err = capsys.readouterr()
    assert "FAIL  mylib.layers.ConvBNAct-0 (golden text)  [wrong_rules.py]" in out
    assert "FAIL  mylib.layers.ConvBNAct-0 (execution)  [wrong_rules.py]" in out
    assert "result: values differ" in out
    assert "ok    mylib.layers.ConvBNAct-1 (execution)" in out  # act=True there: nothing lost
    assert "3 checks of 1 rule from 1 source: 1 passed, 2 failed" in err


def test_check_needs_rules_of_your_own(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["rules", "--check", "--isolated"]) == 2
    assert "no rules of your own to check" in capsys.readouterr().err


def test_a_rule_without_an_execution_case_is_not_proven(project, capsys):
    golden_only = project / "golden_rules.py"
    golden_only.write_text(textwrap.dedent('''\
        from rewrite_rules.api import ApiRule, Example

        RULES = [ApiRule("mylib.layers.ConvBNAct", "mylib_ms.layers.ConvBNAct",
                         examples=[Example("from mylib.layers import ConvBNAct\\nlayer = ConvBNAct(3, 8)",
                                           mindspore="layer = mylib_ms.layers.ConvBNAct(3, 8)")])]
    '''))
    assert main(["rules", "--check", "--rules", str(golden_only)]) == 1
    out = capsys.readouterr().out
    assert "ok    mylib.layers.ConvBNAct-0 (golden text)" in out
    assert "FAIL  mylib.layers.ConvBNAct (execution)" in out and "no execution case" in out


# -- bad rule files: one line naming the file ------------------------------------------

@pytest.mark.parametrize("text, where, message", [
    ("RULES = [\n", ":1", "cannot load the rules: SyntaxError: '[' was never closed"),
    ("import os\nraise RuntimeError('boom')\n", ":2", "cannot load the rules: RuntimeError: boom"),
    ("from rewrite_rules.api import ApiRule\n", "", "defines no RULES list (RULES = [ApiRule(...), ...])"),
    ("RULES = ['torch.nn.Linear']\n", "", "RULES[0] is not a rule (ApiRule, AttributeRule or MethodRule) but str"),
    ("from rewrite_rules.api import ApiRule\nRULES = [ApiRule('a.f', 'b.f', signature='x=')]\n", "",
     "RULES[0] (a.f): signature is not Python parameter text: 'x='"),
])
@pytest.mark.parametrize("command", ["convert", "analyze", "rules", "verify", "weights"])
def test_a_bad_rule_file_is_one_line_naming_it(tmp_path, monkeypatch, capsys, text, where, message, command):
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "bad_rules.py"
    bad.write_text(text)
    (tmp_path / "m.py").write_text("import torch\nx = torch.zeros(2)\n")
    argv = {"convert": ["convert", "m.py", "--diff"], "analyze": ["analyze", "m.py"], "rules": ["rules", "--check"],
            "verify": ["verify", "m.py", "m.py", "--model", "Net"],
            "weights": ["weights", "w.pt", "w.ckpt", "--model", "m.py:Net"]}
    assert main([*argv[command], "--rules", str(bad)]) == 2
    out, err = capsys.readouterr()
    assert err == f"ms-migrate: error: {bad}{where}: {message}\n"
    assert out == ""


def test_two_rule_files_for_one_api_are_an_error(project, capsys):
    copy = project / "again.py"
    shutil.copy(project / "ms_rules.py", copy)
    assert main(["convert", "src", "--diff", "--rules", "ms_rules.py", "--rules", "again.py"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"ms-migrate: error: {copy}: a second rule for mylib.layers.ConvBNAct (also in ")


def test_a_user_rule_replaces_ours_for_the_same_api(tmp_path, capsys):
    mine = tmp_path / "mine.py"
    mine.write_text("from rewrite_rules.api import ApiRule\nRULES = [ApiRule('torch.nn.ReLU', 'mylib_ms.act.FastReLU')]\n")
    (tmp_path / "m.py").write_text("import torch.nn as nn\nact = nn.ReLU()\n")
    assert main(["convert", str(tmp_path / "m.py"), "-o", str(tmp_path / "out.py"), "--rules", str(mine)]) == 0
    assert (tmp_path / "out.py").read_text() == "import mylib_ms.act\nact = mylib_ms.act.FastReLU()\n"


# -- rules shipped by installed packages -------------------------------------------------

@pytest.fixture
def installed_plugin(tmp_path, monkeypatch):
    """A package installed with an entry point in ms_migrate.rules."""
    site = tmp_path / "site"
    (site / "mylib_plugin-1.0.dist-info").mkdir(parents=True)
    (site / "mylib_plugin-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: mylib-plugin\nVersion: 1.0\n")
    (site / "mylib_plugin-1.0.dist-info" / "entry_points.txt").write_text(
        "[ms_migrate.rules]\nmylib = mylib_plugin_rules\n")
    (site / "mylib_plugin_rules.py").write_text(
        "from rewrite_rules.api import ApiRule\nRULES = [ApiRule('mylib.ops.fused_gelu', 'mindspore.ops.gelu')]\n")
    monkeypatch.syspath_prepend(str(site))
    registry._load_rules.cache_clear()
    registry._with_plugins.cache_clear()
    yield
    registry._load_rules.cache_clear()
    registry._with_plugins.cache_clear()


def test_an_installed_package_ships_rules_through_an_entry_point(installed_plugin, tmp_path):
    rules = registry.load_rules()
    assert "mylib.ops.fused_gelu" in rules.calls
    assert rules.modules["mylib.ops.fused_gelu"].startswith("entry point mylib = mylib_plugin_rules")
    assert "torch.nn.Linear" in rules.calls
    (tmp_path / "m.py").write_text("from mylib.ops import fused_gelu\ny = fused_gelu(x)\n")
    assert main(["convert", str(tmp_path / "m.py"), "-o", str(tmp_path / "out.py")]) == 0
    assert (tmp_path / "out.py").read_text() == "from mindspore import ops\ny = ops.gelu(x)\n"


# -- one public rule API (the import boundary of rule modules: tests/test_rule_api.py) -----

def _imports(path: pathlib.Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


def test_nothing_imports_private_names_of_the_rewriter():
    for path in (ROOT / "transpiler").rglob("*.py"):
        private = {n for n in _imports(path) if n.startswith("transpiler.convert.rewriter._")}
        assert not private, f"{path.relative_to(ROOT)} imports {sorted(private)}"


# The MindSpore twin calls its BatchNorm ``norm``: the rule's ``weights`` say how torch's
# weights move (without, they would not fit).
RENAMED_RULES = textwrap.dedent('''\
    from rewrite_rules.api import ApiRule, Example, WeightMove

    RULES = [ApiRule(
        "mylib.layers.ConvBNAct", "mylib_ms.blocks.ConvNormAct",
        signature="in_ch, out_ch, kernel_size=3, stride=1, act=True", args={"act": "activation"},
        weights={"bn.weight": "norm.gamma", "bn.bias": "norm.beta", "bn.running_mean": "norm.moving_mean",
                 "bn.running_var": "norm.moving_variance",
                 "bn.num_batches_tracked": WeightMove(None, why="MindSpore keeps no batch count")},
        examples=[Example("from mylib.layers import ConvBNAct\\nlayer = ConvBNAct(3, 8)\\nlayer.train()\\n"
                          "result = layer(x)", inputs={"x": "randn(2, 3, 9, 9)"})],
    )]
''')


def test_check_moves_weights_as_the_rule_declares(project, capsys):
    """The harness copies torch's weights through the rule's ``weights``."""
    rules = project / "renamed_rules.py"
    rules.write_text(RENAMED_RULES)
    assert main(["rules", "--check", "--rules", str(rules)]) == 0, capsys.readouterr().out
    assert capsys.readouterr().out == "ok    mylib.layers.ConvBNAct-0 (execution)\n"


def test_weights_moves_a_checkpoint_as_the_users_rule_declares(project, tmp_path, monkeypatch, capsys):
    """A torch checkpoint of the project's model, converted by ``weights --rules``, loads
    strictly into the converted model, whose outputs are torch's; without the rule file
    the renamed BatchNorm's keys find no place."""
    import mindspore
    import numpy as np
    import torch

    from tests.conversion import load

    rules = project / "renamed_rules.py"
    rules.write_text(RENAMED_RULES)
    monkeypatch.syspath_prepend(str(project))  # mylib, mylib_ms
    out = tmp_path / "out"
    assert main(["convert", str(project / "src"), "-o", str(out), "-q", "-j", "1", "--rules", str(rules)]) == 0
    assert "self.stem = mylib_ms.blocks.ConvNormAct(3, 16, stride=2)  # downsample" in _converted(out)

    torch.manual_seed(0)
    model = load(project / "src" / "model.py").Net()
    with torch.no_grad():  # running statistics that matter
        model.stem.bn.running_mean.uniform_(-1, 1)
        model.stem.bn.running_var.uniform_(0.5, 2)
        model.stem.bn.weight.uniform_(0.5, 2)
    torch.save(model.state_dict(), tmp_path / "w.pt")
    weights = ["weights", str(tmp_path / "w.pt"), str(tmp_path / "w.ckpt"), "--model", f"{out / 'model.py'}:Net"]

    assert main(weights) == 1  # the configured rules (ms_rules.py) know no ``norm``
    assert "stem.bn.running_mean" in capsys.readouterr().err
    assert not (tmp_path / "w.ckpt").exists()
    assert main([*weights, "--rules", str(rules)]) == 0, capsys.readouterr().err

    cell = load(out / "model.py").Net()
    mindspore.load_param_into_net(cell, mindspore.load_checkpoint(str(tmp_path / "w.ckpt")), strict_load=True)
    np.testing.assert_array_equal(cell.stem.norm.moving_mean.asnumpy(), model.stem.bn.running_mean.numpy())
    model.eval()
    cell.set_train(False)
    x = np.random.RandomState(0).randn(2, 3, 9, 9).astype(np.float32)
    expected = model(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(cell(mindspore.Tensor(x)).asnumpy(), expected, rtol=1e-4, atol=1e-5)
