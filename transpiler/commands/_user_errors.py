"""Checks of what a user names on the command line of ``verify`` and
``weights``, made before anything is imported or run, so that a mistake (a
missing file, a misspelled model name, a forgotten ``--input``) is one line,
``ms-migrate: error: PATH: what is wrong``, and exit status 2, as ``convert``
reports its own, never a traceback."""

from __future__ import annotations

import ast
import difflib
import os


class UserError(Exception):
    """A mistake on the command line: the message names the file and what is wrong."""


def existing_file(path: str, what: str = "") -> None:
    if os.path.isdir(path):
        raise UserError(f"{path}: is a directory, not {what or 'a file'}")
    if not os.path.exists(path):
        raise UserError(f"{path}: no such file or directory")


def writable_target(path: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UserError(f"{path}: is a directory; name the checkpoint file to write")
    if not os.path.isdir(folder):
        raise UserError(f"{path}: the folder {os.path.dirname(path) or folder} does not exist")


def defined_name(path: str, dotted: str, what: str = "model") -> None:
    """``dotted``'s first part is defined or imported at the top level of the
    Python file ``path`` (read, not imported). Files that can define names in
    ways a reading cannot follow (``from x import *``, a module ``__getattr__``,
    ``globals()[...] =``) pass."""
    first = dotted.split(".")[0]
    try:
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read(), filename=path)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return  # what is wrong with the file itself is reported where it is loaded
    names = _top_level_names(tree)
    if names is None or first in names:
        return
    close = difflib.get_close_matches(first, sorted(names), n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(n) for n in close)}?" if close else ""
    classes = sorted(n.name for n in tree.body if isinstance(n, ast.ClassDef))
    listed = f" (its classes: {', '.join(classes[:8])}{', ...' if len(classes) > 8 else ''})" if classes and not close else ""
    raise UserError(f"{path}: defines no {what} {first!r}{hint}{listed}")


def _top_level_names(tree: ast.Module) -> set[str] | None:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            return None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("globals", "setattr"):
            return None
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "__getattr__" \
                and node in tree.body:
            return None
    for node in ast.walk(tree):  # module level, and inside if/try/with blocks at module level
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, (ast.Name,)) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
    return names
