"""What a source's files import: the modules a converted tree holds (for the
check that each one imports without torch) and the third-party packages the
converted files import that the original files did not (a new requirement the
user never had, such as ``skimage`` for a ``save_image``)."""

from __future__ import annotations

import os
import sys

from transpiler.convert import requirements

SKIPPED_FILES = ("setup.py", "conftest.py")


def python_files(top: str, parts: tuple[str, ...]) -> list[str]:
    """The .py files under ``top`` (or under its ``parts``), relative to ``top``, sorted."""
    found = []
    for part in parts or (".",):
        path = os.path.join(top, part)
        if os.path.isfile(path):
            if path.endswith(".py"):
                found.append(os.path.relpath(path, top))
            continue
        for folder, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
            found.extend(os.path.relpath(os.path.join(folder, f), top) for f in files if f.endswith(".py"))
    return sorted(set(found))


def module_names(top: str, parts: tuple[str, ...]) -> list[tuple[str, str]]:
    """(dotted module name, file relative to ``top``) of every importable .py file."""
    modules = []
    for relative in python_files(top, parts):
        if os.path.basename(relative) in SKIPPED_FILES and os.path.dirname(relative) == "":
            continue
        pieces = relative[: -len(".py")].split(os.sep)
        if pieces[-1] == "__init__":
            pieces = pieces[:-1]
        if pieces and all(p.isidentifier() for p in pieces):
            modules.append((".".join(pieces), relative))
    return modules


def top_level_imports(path: str) -> set[str]:
    """Top-level names of the absolute imports anywhere in a file (a file that does not parse: none)."""
    return requirements.top_level_imports(open(path, encoding="utf-8", errors="replace").read())


def first_party(top: str) -> set[str]:
    """Names importable from ``top`` itself: its top-level modules and packages."""
    names = set()
    for entry in os.listdir(top):
        full = os.path.join(top, entry)
        if entry.endswith(".py"):
            names.add(entry[:-3])
        elif os.path.isdir(full) and entry.isidentifier():
            names.add(entry)
    return names


def new_requirements(original_top: str, converted_top: str, parts: tuple[str, ...], known: set[str]) -> list[str]:
    """Third-party packages the converted files import and the original files do
    not: not the standard library, not the source's own modules nor those of
    ``known`` (the sources it needs), not mindspore nor what mindspore requires."""
    before: set[str] = set()
    for relative in python_files(original_top, parts):
        before |= top_level_imports(os.path.join(original_top, relative))
    after: set[str] = set()
    for relative in python_files(converted_top, parts):
        after |= top_level_imports(os.path.join(converted_top, relative))
    ignored = set(sys.stdlib_module_names) | first_party(original_top) | known | requirements.mindspore_provides()
    return sorted(after - before - ignored)


def import_each(top: str, parts: tuple[str, ...], describe, seconds: int = 60) -> dict[str, str]:
    """Import every module under ``top`` in this process: {module: "" or the
    failure as ``describe(exc)`` gives it}. A module that runs longer than
    ``seconds`` at import (a script without a ``__main__`` guard) fails."""
    import importlib
    import signal

    def too_long(signum, frame):
        raise TimeoutError(f"importing took over {seconds} s")

    sys.path.insert(0, top)
    argv, sys.argv = sys.argv, ["-"]
    results = {}
    previous = signal.signal(signal.SIGALRM, too_long)
    try:
        for name, _ in module_names(top, parts):
            signal.alarm(seconds)
            try:
                importlib.import_module(name)
                results[name] = ""
            except BaseException as exc:  # noqa: BLE001 - a script's SystemExit too
                results[name] = describe(exc)
            finally:
                signal.alarm(0)
    finally:
        signal.signal(signal.SIGALRM, previous)
        sys.argv = argv
    return results
