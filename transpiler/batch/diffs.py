"""``convert --diff``: unified diffs that patch tools apply, coloured on a tty.

Paths are relative to the input directory (``a/pkg/model.py``), so the
output applies to a checkout of the input with ``git apply`` or
``patch -p1`` run in that directory, wherever ms-migrate was run from.
Lines are split on newlines only (a form feed or a lone carriage return
inside a line stays in it), and a last line without a newline gets patch's
``\\ No newline at end of file`` note. A notebook is shown cell by cell, as
ruff shows notebooks (``a/nb.ipynb:cell 3``): for reading, not for patch.
"""

from __future__ import annotations

import difflib
import os
import sys

NO_NEWLINE = "\\ No newline at end of file\n"


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    last = lines.pop()
    result = [line + "\n" for line in lines]
    if last:
        result.append(last)
    return result


def unified(original: str, output: str, old_name: str, new_name: str) -> str:
    if original == output:
        return ""
    parts = []
    for line in difflib.unified_diff(_lines(original), _lines(output), old_name, new_name):
        parts.append(line)
        if not line.endswith("\n"):
            parts.append("\n" + NO_NEWLINE)
    return "".join(parts)


def diff_path(display: str, root: str | None) -> str:
    """The file's path in the diff: below the input directory, with ``/``."""
    path = os.path.abspath(display)
    relative = os.path.relpath(path, root) if root else os.path.basename(path)
    return relative.replace(os.sep, "/")


def file_diff(original: str, output: str, path: str) -> str:
    if path.endswith(".ipynb"):
        return notebook_diff(original, output, path)
    end = "\t" if " " in path else ""  # as git writes it: GNU patch reads a name with spaces up to a tab
    return unified(original, output, f"a/{path}{end}", f"b/{path}{end}")


def notebook_diff(original: str, output: str, path: str) -> str:
    import nbformat

    before = nbformat.reads(original, as_version=4).cells
    after = nbformat.reads(output, as_version=4).cells
    parts = []
    for number, (old, new) in enumerate(zip(before, after), start=1):
        if old.cell_type == "code":
            name = f"{path}:cell {number}"
            parts.append(unified(_ended(old.source), _ended(new.source), f"a/{name}", f"b/{name}"))
    return "".join(parts)


def _ended(source: str) -> str:
    """A cell's source with a final newline (cells seldom have one; saying
    so on every cell would be noise)."""
    return source if source.endswith("\n") else source + "\n"


def _may_colour(stream) -> bool:
    """Whether rich could colour ``stream`` in auto mode (a terminal, or the
    environment variables rich reads to force it), NO_COLOR aside."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR") or os.environ.get("TTY_COMPATIBLE") == "1":
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class DiffWriter:
    """Writes diffs to stdout: plain, or coloured (``color``: auto, always,
    never; auto colours a terminal and honours NO_COLOR, through rich)."""

    STYLES = (("+++", "bold"), ("---", "bold"), ("@@", "cyan"), ("+", "green"), ("-", "red"), ("\\", "dim"))

    def __init__(self, color: str = "auto", stream=None):
        self.stream = stream or sys.stdout
        self.console = None
        if color == "auto" and not _may_colour(self.stream):
            return  # plain for sure: rich (slow to import) is not needed
        if color != "never":
            from rich.console import Console

            always = color == "always"
            console = Console(file=self.stream, force_terminal=True if always else None,
                              no_color=False if always else None, soft_wrap=True, highlight=False, markup=False,
                              emoji=False)
            if color == "always" or console.is_terminal and not console.no_color:
                self.console = console

    def write(self, diff: str) -> None:
        if not diff:
            return
        if self.console is None:
            self.stream.write(diff)
            self.stream.flush()
            return
        from rich.text import Text

        for line in _lines(diff):
            style = next((s for prefix, s in self.STYLES if line.startswith(prefix)), None)
            self.console.print(Text(line, style=style or ""), end="")
