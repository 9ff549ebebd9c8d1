"""``[tool.ms-migrate]`` in pyproject.toml: found by walking up from the
input as ruff does, command-line flags override it, mistakes are usage
errors naming the file and the key; ``-j`` defaults to the machine's cores."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from transpiler.batch.runner import available_cores
from transpiler.cli import build_parser, main
from transpiler.commands.convert import settings_for
from transpiler.config import ConfigError, config_for, find_config

TORCH = "import torch\nx = torch.zeros(2)\n"


@pytest.fixture
def repo(tmp_path):
    """repo/pyproject.toml with a [tool.ms-migrate] table, the code below it
    in repo/src, and a pyproject.toml without the table in between."""
    root = tmp_path / "repo"
    (root / "src" / "pkg" / "vendor").mkdir(parents=True)
    (root / "src" / "model.py").write_text(TORCH)
    (root / "src" / "pkg" / "net.py").write_text(TORCH)
    (root / "src" / "pkg" / "vendor" / "lib.py").write_text(TORCH)
    (root / "src" / "pyproject.toml").write_text("[project]\nname = 'inner'\n")
    (root / "pyproject.toml").write_text(textwrap.dedent("""\
        [project]
        name = "demo"

        [tool.ms-migrate]
        exclude = ["src/pkg/vendor/"]
        jobs = 3
        report = ["reports/migration.json"]
        keep-outputs = true
    """))
    return root


def _settings(*argv):
    return settings_for(build_parser().parse_args(["convert", *argv]))


def test_found_by_walking_up_to_the_closest_file_with_the_table(repo):
    assert find_config(str(repo / "src" / "pkg" / "net.py")) == str(repo / "pyproject.toml")
    assert find_config(str(repo / "src")) == str(repo / "pyproject.toml")
    assert find_config(str(repo.parent)) is None


def test_keys_apply_and_paths_are_relative_to_the_file(repo):
    settings = _settings(str(repo / "src"), "--diff")
    assert settings.jobs == 3
    assert settings.reports == (str(repo / "reports" / "migration.json"),)
    assert settings.keep_outputs is True
    assert settings.exclusions.patterns == ("src/pkg/vendor/",) and settings.exclusions.base == str(repo)


def test_command_line_flags_override_the_file(repo):
    settings = _settings(str(repo / "src"), "--diff", "-j", "1", "--exclude", "model.py", "--report", "r.md",
                         "--no-keep-outputs", "--no-default-excludes")
    assert settings.jobs == 1 and settings.reports == ("r.md",) and settings.keep_outputs is False
    assert settings.exclusions.patterns == ("model.py",) and settings.exclusions.base is None
    assert settings.exclusions.defaults is False


def test_defaults_without_a_file(tmp_path):
    (tmp_path / "m.py").write_text(TORCH)
    settings = _settings(str(tmp_path / "m.py"), "--diff", "--isolated")
    assert settings.jobs == available_cores() == len(os.sched_getaffinity(0))
    assert settings.reports == () and settings.keep_outputs is False and settings.exclusions.defaults is True


def test_a_conversion_uses_the_file(repo, tmp_path):
    out = tmp_path / "out"
    assert main(["convert", str(repo / "src"), "-o", str(out), "-q"]) == 0
    assert (out / "model.py").exists() and (out / "pkg" / "net.py").exists()
    assert not (out / "pkg" / "vendor").exists()  # excluded by the file
    report = json.loads((repo / "reports" / "migration.json").read_text())
    assert report["files"]["converted"] == 2


def test_explicit_file_and_isolated(repo, tmp_path):
    other = tmp_path / "other.toml"
    other.write_text("[tool.ms-migrate]\njobs = 2\n")
    assert _settings(str(repo / "src"), "--diff", "--config", str(other)).jobs == 2
    assert _settings(str(repo / "src"), "--diff", "--isolated").jobs == available_cores()


@pytest.mark.parametrize("table, message", [
    ("jobs = 0", "'jobs' must be a whole number of at least 1"),
    ("jobs = true", "'jobs' must be a whole number"),
    ("exclude = 'vendor'", "'exclude' must be a list of strings"),
    ("keep-outputs = 'yes'", "'keep-outputs' must be true or false"),
    ("exlude = ['x']", "unknown key 'exlude'"),
])
def test_mistakes_are_usage_errors_naming_file_and_key(tmp_path, capsys, table, message):
    (tmp_path / "pyproject.toml").write_text(f"[tool.ms-migrate]\n{table}\n")
    (tmp_path / "m.py").write_text(TORCH)
    with pytest.raises(ConfigError, match=message):
        config_for(str(tmp_path / "m.py"))
    assert main(["convert", str(tmp_path / "m.py"), "--diff"]) == 2
    err = capsys.readouterr().err
    assert str(tmp_path / "pyproject.toml") in err and message in err


def test_invalid_toml_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text("[tool.ms-migrate\n")
    (tmp_path / "m.py").write_text(TORCH)
    assert main(["convert", str(tmp_path / "m.py"), "--diff"]) == 2
    assert "invalid TOML" in capsys.readouterr().err


def test_rules_key_names_rule_files_relative_to_the_file(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text("[tool.ms-migrate]\nrules = ['tools/ms_rules.py']\n")
    (tmp_path / "m.py").write_text(TORCH)
    assert config_for(str(tmp_path)).rules == (str(tmp_path / "tools" / "ms_rules.py"),)
    assert main(["convert", str(tmp_path / "m.py"), "--diff"]) == 2  # the file does not exist
    err = capsys.readouterr().err.strip()
    assert err == f"ms-migrate: error: {tmp_path / 'tools' / 'ms_rules.py'}: cannot read the rule file: " \
                  "No such file or directory"


def test_one_job_still_works(repo, tmp_path):
    assert main(["convert", str(repo / "src"), "-o", str(tmp_path / "out"), "-q", "-j", "1"]) == 0
    assert (tmp_path / "out" / "model.py").read_text() == "from mindspore import ops\nx = ops.zeros(2)\n"


def test_analyze_takes_the_same_files_as_convert(repo, tmp_path):
    report = tmp_path / "analysis.json"
    assert main(["analyze", str(repo / "src"), "-f", "json", "-o", str(report), "--import-timeout", "0"]) == 0
    paths = {use["path"] for use in json.loads(report.read_text())["uses"]}
    assert any(p.endswith("model.py") for p in paths) and not any("vendor" in p for p in paths)
    assert main(["analyze", str(repo / "src"), "-f", "json", "-o", str(report), "--import-timeout", "0",
                 "--isolated", "-j", "1"]) == 0
    assert any("vendor" in use["path"] for use in json.loads(report.read_text())["uses"])
