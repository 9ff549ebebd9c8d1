"""Which files a tree conversion takes: gitignore-style --exclude patterns as
ruff and black users write them, and what is skipped by default (hidden
directories, virtualenvs, site-packages, build directories)."""

from __future__ import annotations

import os

import nbformat
import pytest

from transpiler.cli import main
from transpiler.batch.discovery import Exclusions, discover

TORCH = "import torch\nx = torch.zeros(2)\n"


def _tree(root, files) -> None:
    for name in files:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name.endswith(".ipynb"):
            nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(TORCH)]), str(path))
        else:
            path.write_text(TORCH if name.endswith(".py") else "data\n")


def _found(root, excludes=Exclusions()) -> list[str]:
    return sorted(os.path.relpath(job.source, root).replace(os.sep, "/") for job in discover(str(root), None, excludes))


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    _tree(root, [
        "model.py", "gen_model.py", "pkg/gen_layers.py", "pkg/net.py", "third_party/lib.py", "third_party/sub/deep.py",
        "pkg/third_party/keep.py", "docs/index.md", "nb/demo.ipynb",
        ".hidden/secret.py", "pkg/.cache/x.py", "build/lib/model.py", "dist/pkg.py", "pkg/site-packages/mod.py",
        "ms_migrate.egg-info/PKG-INFO", "node_modules/x/index.py", "__pycache__/model.cpython-311.pyc",
        "env/lib/python3.11/mod.py", ".git/config", ".gitignore",
    ])
    (root / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (root / "conda" / "conda-meta").mkdir(parents=True)
    (root / "conda" / "lib.py").write_text(TORCH)
    return root


def test_default_skips_what_is_not_the_users_code(project):
    assert _found(project) == [
        ".gitignore", "docs/index.md", "gen_model.py", "model.py", "nb/demo.ipynb", "pkg/gen_layers.py", "pkg/net.py",
        "pkg/third_party/keep.py", "third_party/lib.py", "third_party/sub/deep.py",
    ]


def test_no_default_excludes_takes_them_but_never_version_control_or_bytecode(project):
    found = _found(project, Exclusions(defaults=False))
    for name in (".hidden/secret.py", "pkg/.cache/x.py", "build/lib/model.py", "dist/pkg.py",
                 "pkg/site-packages/mod.py", "env/lib/python3.11/mod.py", "conda/lib.py", "node_modules/x/index.py"):
        assert name in found
    assert not any(name.startswith((".git/", "__pycache__/")) for name in found)


@pytest.mark.parametrize("patterns, gone, kept", [
    (("third_party/*",), ["third_party/lib.py", "third_party/sub/deep.py"], ["pkg/third_party/keep.py"]),
    (("third_party/",), ["third_party/lib.py", "pkg/third_party/keep.py"], ["model.py"]),
    (("**/gen_*.py",), ["gen_model.py", "pkg/gen_layers.py"], ["model.py", "pkg/net.py"]),
    (("gen_*.py",), ["gen_model.py", "pkg/gen_layers.py"], ["model.py"]),
    (("/gen_*.py",), ["gen_model.py"], ["pkg/gen_layers.py"]),
    (("pkg/net.py", "*.md"), ["pkg/net.py", "docs/index.md"], ["pkg/gen_layers.py"]),
    (("*.py", "!model.py"), ["pkg/net.py"], ["model.py", "docs/index.md"]),
])
def test_exclude_patterns_are_gitignore_paths(project, patterns, gone, kept):
    found = _found(project, Exclusions(patterns))
    assert not set(gone) & set(found)
    assert set(kept) <= set(found)


def test_patterns_of_a_configuration_are_relative_to_its_directory(project):
    # the input is proj/pkg, the patterns were written next to proj/pyproject.toml
    found = _found(project / "pkg", Exclusions(("pkg/gen_*.py",), base=str(project)))
    assert found == ["net.py", "third_party/keep.py"]


def test_a_single_file_is_converted_even_when_a_pattern_matches(project):
    jobs = discover(str(project / "gen_model.py"), None, Exclusions(("gen_*.py",)))
    assert [job.kind for job in jobs] == ["python"]


def test_notebooks_are_their_own_kind(project):
    kinds = {os.path.basename(job.source): job.kind for job in discover(str(project), None)}
    assert kinds["demo.ipynb"] == "notebook" and kinds["model.py"] == "python" and kinds["index.md"] == "copy"


def test_cli_exclude_and_no_default_excludes(project, tmp_path):
    out = tmp_path / "out"
    assert main(["convert", str(project), "-o", str(out), "-q", "--exclude", "third_party/*",
                 "--exclude", "**/gen_*.py"]) == 0
    written = _found(out)
    assert "model.py" in written and "pkg/third_party/keep.py" in written
    assert not {"third_party/lib.py", "gen_model.py", "pkg/gen_layers.py", "build/lib/model.py"} & set(written)
    everything = tmp_path / "everything"
    assert main(["convert", str(project), "-o", str(everything), "-q", "--no-default-excludes"]) == 0
    written = _found(everything, Exclusions(defaults=False))
    assert "build/lib/model.py" in written and "env/lib/python3.11/mod.py" in written
    assert (everything / "build" / "lib" / "model.py").read_text() == "from mindspore import ops\nx = ops.zeros(2)\n"
