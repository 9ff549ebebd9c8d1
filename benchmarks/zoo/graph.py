"""The graph-mode column of the zoo and research benchmarks.

A model that matches torch in PyNative is run again, in the same process and
with the same loaded weights, after ``mindspore.set_context(mode=GRAPH_MODE)``
(the migration guide's way to compile ``construct`` for speed; MindSpore
switches modes within a process). A model whose work is a method other than
``construct`` gets that method compiled with ``mindspore.jit``. The graph
outputs are compared with torch's by the same rule as the PyNative ones.

The column: ``match``, ``mismatch: ...``, or ``fails: <first line of the
error> @ <file:line>``, where the place is the first line of the converted code
(under the converted folder) that MindSpore's graph compiler names in its
"Traceback of Net Construct Code", else the innermost Python frame there.
"""

from __future__ import annotations

import os
import re
import traceback

# "# 0 In file /path/x.py:12, 8~20" (2.x) or "In file /path/x.py(12)" (older)
_IN_FILE = re.compile(r"In file (?P<file>[^\s:(]+?\.py)(?::(?P<line>\d+)|\((?P<line2>\d+)\))")


def graph_mode():
    """Switch this process to GRAPH_MODE."""
    import mindspore

    mindspore.set_context(mode=mindspore.GRAPH_MODE)


def compiled(call, is_construct: bool):
    """What to call in graph mode: a Cell itself (GRAPH_MODE compiles its
    construct), or a method of it under ``mindspore.jit``."""
    import mindspore

    return call if is_construct else mindspore.jit(call)


def failure(exc: BaseException, converted_dir: str) -> str:
    """``fails: <first line of the error> @ <file:line>``."""
    text = str(exc).strip()
    # MindSpore puts rules of dashes and section titles ("- C++ Call Stack: ...") around its message
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("-")]
    first = lines[0] if lines else ""
    first = f"{type(exc).__name__}: {first}"[:200]
    place = _place(text, exc, converted_dir)
    return f"fails: {first}" + (f" @ {place}" if place else "")


def _place(text: str, exc: BaseException, converted_dir: str) -> str:
    folder = os.path.abspath(converted_dir) + os.sep
    places = [(os.path.abspath(found["file"]), found["line"] or found["line2"]) for found in _IN_FILE.finditer(text)]
    places = [(path, line) for path, line in places if path.startswith(folder) and os.path.exists(path)]
    if places:  # the traceback goes from construct inwards: the innermost line of the converted code
        path, line = places[-1]
        return f"{os.path.relpath(path, folder)}:{line}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if os.path.abspath(f.filename).startswith(folder)]
    if frames:
        return f"{os.path.relpath(frames[-1].filename, folder)}:{frames[-1].lineno}"
    return ""


def summary(rows: list[dict]) -> str:
    """``N of M models that match in PyNative match in GRAPH_MODE``."""
    checked = [r for r in rows if r.get("graph")]
    if not checked:
        return ""
    matched = sum(r["graph"] == "match" for r in checked)
    return (f"{matched} of {len(checked)} models that match torch in PyNative match it in GRAPH_MODE "
            f"({100 * matched // len(checked)}%)")
