"""Which marker a failure ran into. A statement ms-migrate marked as not
converted fails when it is reached (a torch call on a MindSpore tensor, or
torch missing); the marker comment above it says why."""

from __future__ import annotations

import linecache
import os
import traceback

from transpiler.convert.diagnostics import MARKER_PREFIX

MARKER = MARKER_PREFIX.rstrip()


def marker_above(filename: str, lineno: int) -> str | None:
    """The marker over the statement at ``lineno`` (markers sit in the comment
    block directly above a statement; the failing line may be inside it)."""
    for line_number in range(lineno - 1, max(lineno - 40, 0), -1):
        text = linecache.getline(filename, line_number).strip()
        if text.startswith(MARKER):
            return text[len(MARKER):].strip()
        if text and not text.startswith("#") and line_number < lineno - 1 and not text.startswith(("import ", "from ")):
            # a previous statement ends the search unless the failing line continues it
            if not text.endswith(("(", "[", "{", ",", "\\")):
                return None
    return None


def marked_frame(exc: BaseException, folder: str) -> tuple[str, int, str] | None:
    """(file, line, marker) of the innermost frame of ``exc``'s traceback in a
    file under ``folder`` that stands under a marker; None if there is none."""
    folder = os.path.abspath(folder) + os.sep
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if os.path.abspath(f.filename).startswith(folder)]
    for frame in reversed(frames):
        marker = marker_above(frame.filename, frame.lineno)
        if marker is not None:
            return frame.filename, frame.lineno, marker
    return None
