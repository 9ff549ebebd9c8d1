"""Finding the files of a conversion: what is under the input, which of it is
left out, how each file is handled and where it goes.

Excludes are gitignore-style patterns (pathspec), as ruff and black users
write them: ``third_party/*`` and ``**/gen_*.py`` are paths below the
directory the patterns belong to (the input directory, or the directory of
the pyproject.toml that lists them); ``gen_*.py`` or ``vendor`` without a
slash match at any depth. Like ruff, discovery also skips by default what is
never the user's own code: hidden directories, virtualenvs, site-packages and
build directories (``Exclusions(defaults=False)`` converts them). Version
control and bytecode directories are never converted, nor what the run itself
writes into the tree (its reports, its cache): a later run would copy them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import pathspec

from transpiler.batch.runner import Job, display_path, single_target

NEVER = frozenset({".git", ".hg", ".svn", ".bzr", "__pycache__", ".ms-migrate-cache"})
# ruff's default excludes that hidden directories and virtualenvs do not already cover
DEFAULT_PATTERNS = ("site-packages/", "node_modules/", "__pypackages__/", "build/", "dist/", "_build/",
                    "buck-out/", "*.egg-info/")
_DEFAULT_SPEC = pathspec.GitIgnoreSpec.from_lines(DEFAULT_PATTERNS)


@dataclass(frozen=True)
class Exclusions:
    """What discovery leaves out of a tree."""

    patterns: tuple[str, ...] = ()  # gitignore-style
    base: str | None = None  # the directory the patterns are relative to (default: the input directory)
    defaults: bool = True  # skip hidden directories, virtualenvs, site-packages, build directories
    own: frozenset[str] = frozenset()  # absolute paths the run writes (reports, cache directory): never taken

    def spec(self) -> pathspec.GitIgnoreSpec:
        return pathspec.GitIgnoreSpec.from_lines(self.patterns)


def file_kind(path: str) -> str:
    if path.endswith(".py"):
        return "python"
    if path.endswith(".ipynb"):
        return "notebook"
    return "copy"


def discover(source: str, target: str | None, excludes: Exclusions | tuple[str, ...] = ()) -> list[Job]:
    """Every file under ``source`` with where it goes, in a stable order. A
    single file maps to ``target`` itself (or into it, when it is a
    directory: an existing one, or ``newdir/`` with a trailing separator);
    it is converted even if a pattern would exclude it."""
    if not isinstance(excludes, Exclusions):
        excludes = Exclusions(tuple(excludes))
    source = os.path.abspath(source)
    if os.path.isfile(source):
        out = single_target(source, target) if target is not None else None
        return [Job(source, out, display_path(source), file_kind(source))]
    base = os.path.abspath(excludes.base or source)
    spec = excludes.spec()
    target_abs = os.path.abspath(target) if target else None
    jobs: list[Job] = []
    for root, dirs, files in os.walk(source):
        dirs[:] = sorted(
            d for d in dirs
            if os.path.join(root, d) != target_abs and os.path.join(root, d) not in excludes.own
            and not _skipped_dir(root, d, base, source, spec, excludes.defaults)
        )
        for name in sorted(files):
            path = os.path.join(root, name)
            if path in excludes.own or spec.match_file(_relative(path, base, source)):
                continue
            out = os.path.join(target_abs, os.path.relpath(path, source)) if target_abs else None
            jobs.append(Job(path, out, display_path(path), file_kind(name)))
    return jobs


def _skipped_dir(root: str, name: str, base: str, source: str, spec, defaults: bool) -> bool:
    if name in NEVER:
        return True
    path = os.path.join(root, name)
    relative = _relative(path, source, source) + "/"
    if defaults and (name.startswith(".") or _DEFAULT_SPEC.match_file(relative) or is_environment(path)):
        return True
    return spec.match_file(_relative(path, base, source) + "/")


def is_environment(path: str) -> bool:
    """A virtualenv (pyvenv.cfg) or conda environment (conda-meta/)."""
    return os.path.isfile(os.path.join(path, "pyvenv.cfg")) or os.path.isdir(os.path.join(path, "conda-meta"))


def _relative(path: str, base: str, source: str) -> str:
    """``path`` below ``base`` in gitignore's form; below the input directory
    when the input is not under ``base``."""
    relative = os.path.relpath(path, base)
    if relative.startswith(".."):
        relative = os.path.relpath(path, source)
    return relative.replace(os.sep, "/")
