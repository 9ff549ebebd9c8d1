"""The README's commands are the ones that run: .ci/run runs the README's
test command exactly as written and adds nothing the tests need, and the
README's configuration example is read by the tool as documented."""

from __future__ import annotations

import pathlib
import re

from transpiler.config import KEYS, load_config

ROOT = pathlib.Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _block_after(heading: str, language: str) -> str:
    start = README.index(heading)
    match = re.compile(rf"```{language}\n(.*?)```", re.DOTALL).search(README, start)
    return match.group(1)


def _commands(script: str) -> list[str]:
    lines = [line.strip() for line in script.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_ci_runs_the_readme_test_command_and_nothing_more():
    readme_command = _block_after("Set up and run the tests:", "sh").strip()
    assert readme_command.startswith("sh tests/install_system_tools.sh && python3 -m venv .venv")
    ci = _commands((ROOT / ".ci" / "run").read_text(encoding="utf-8"))
    assert ci == [
        "set -euo pipefail",
        'cd "$(dirname "$0")/.."',
        readme_command,
        ".venv/bin/python -m pytest -q -m slow",  # the slow tests, which the README command leaves out
    ]


def test_the_set_up_script_installs_what_the_tests_call():
    script = (ROOT / "tests" / "install_system_tools.sh").read_text(encoding="utf-8")
    assert 'missing="$missing chromium"' in script and 'missing="$missing patch"' in script
    assert "apt-get install -y -q $missing" in script


def test_the_configuration_example_is_read_as_documented(tmp_path):
    example = _block_after("**Configuration.**", "toml")
    (tmp_path / "pyproject.toml").write_text(example)
    config = load_config(str(tmp_path / "pyproject.toml"))
    assert config.exclude == ("third_party/*", "**/gen_*.py") and config.jobs == 4
    assert config.report == (str(tmp_path / "migration/report.md"), str(tmp_path / "migration/report.json"))
    documented = set(re.findall(r"^([a-z-]+) =", example, re.MULTILINE)) | {"rules"}
    assert documented == set(KEYS)
    assert "`rules`" in README


def test_the_workflow_commands_are_the_tools_own():
    """Each ``ms-migrate`` line of the README's workflow parses with the tool's own
    command line (a renamed flag or command fails here, not for a reader)."""
    import shlex

    from transpiler.cli import build_parser

    lines = [line.split("  #")[0].strip() for line in _commands(_block_after("## Workflow", "sh"))]
    commands = [shlex.split(line)[1:] for line in lines if line.startswith("ms-migrate ")]
    assert [c[0] for c in commands] == ["analyze", "convert", "verify", "weights", "convert", "convert"]
    parser = build_parser()
    for argv in commands:
        parser.parse_args(argv)
