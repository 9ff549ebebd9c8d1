"""Which marker a failure ran into. A statement ms-migrate marked as not
converted fails when it is reached (a torch call on a MindSpore tensor, or
torch missing); the marker comment above it says why.

A marked statement that runs when its module is imported stands in ``try:
import torch ... except ImportError:`` (transpiler/convert/marked.py); without
torch, what it defines is a stand-in that fails where it is used, far from the
marker, with a message naming the marker's file and line. Such a failure is
the marker's too: it is found from the message."""

from __future__ import annotations

import itertools
import linecache
import os
import re
import traceback

from transpiler.convert.diagnostics import MARKER_PREFIX

MARKER = MARKER_PREFIX.rstrip()

# what a stand-in's error says: "... (TODO(ms-migrate) at model.py:12: api: reason)"
_STAND_IN = re.compile(r"TODO\(ms-migrate\) at (?P<file>[^\s:()]+):(?P<line>\d+): ")


def marker_above(filename: str, lineno: int) -> str | None:
    """The marker over the statement at ``lineno`` (markers sit in the comment
    block directly above a statement; the failing line may be inside it, or in
    the ``try:`` that guards it, under the imports placed there)."""
    for line_number in range(lineno - 1, max(lineno - 40, 0), -1):
        text = linecache.getline(filename, line_number).strip()
        if text.startswith(MARKER):
            return text[len(MARKER):].strip()
        if text and not text.startswith("#") and line_number < lineno - 1 and not text.startswith(("import ", "from ")):
            if text == "try:":
                continue  # a statement guarded at import: its markers stand above the try
            # a previous statement ends the search unless the failing line continues it
            if not text.endswith(("(", "[", "{", ",", "\\")):
                return None
    return None


def marked_frame(exc: BaseException, folder: str) -> tuple[str, int, str] | None:
    """(file, line, marker) of the innermost frame of ``exc``'s traceback in a
    file under ``folder`` that stands under a marker, or of the marker a
    stand-in's error names; None if there is none."""
    folder = os.path.abspath(folder) + os.sep
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if os.path.abspath(f.filename).startswith(folder)]
    named = _named_marker(exc, [f.filename for f in frames], folder)
    if named is not None:
        return named
    for frame in reversed(frames):
        marker = marker_above(frame.filename, frame.lineno)
        if marker is not None:
            return frame.filename, frame.lineno, marker
    return None


def _named_marker(exc: BaseException, filenames: list[str], folder: str) -> tuple[str, int, str] | None:
    """The marker a stand-in's error (or an error it caused, such as a data
    pipeline's wrapper, which may quote it in its own message) names: the file
    with that name, among the traceback's or else under ``folder``, whose line
    holds a marker."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        found = _STAND_IN.search(str(exc))
        if found is not None:
            line = int(found["line"])
            named = [f for f in [*reversed(filenames), *_traceback_files(exc)] if os.path.basename(f) == found["file"]]
            # the stand-in raises in its own module, whose file may have been renamed since
            for filename in itertools.chain(named, _traceback_files(exc)[:1], _files_named(folder, found["file"])):
                text = linecache.getline(filename, line).strip()
                if text.startswith(MARKER):
                    return filename, line, text[len(MARKER):].strip()
        exc = exc.__cause__ or exc.__context__
    return None


def _traceback_files(exc: BaseException) -> list[str]:
    """The files of ``exc``'s own traceback, innermost first (a stand-in raises in its own module)."""
    return [f.filename for f in reversed(traceback.extract_tb(exc.__traceback__))]


def _files_named(folder: str, name: str):
    """The files called ``name`` under ``folder`` (looked for only when the traceback has none)."""
    for directory, _, files in os.walk(folder):
        if name in files:
            yield os.path.join(directory, name)
