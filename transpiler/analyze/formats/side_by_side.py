"""Side-by-side diff rows for the HTML report, with ms-migrate markers flagged."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from transpiler.convert.rewriter import MARKER_PREFIX

CONTEXT = 3
MARKER = MARKER_PREFIX.strip()


@dataclass(frozen=True)
class DiffRow:
    kind: str  # equal / delete / insert / replace / skip
    left_no: int | None = None
    left: str = ""
    right_no: int | None = None
    right: str = ""
    skipped: int = 0  # for "skip" rows: how many unchanged lines are hidden

    @property
    def right_is_marker(self) -> bool:
        return MARKER in self.right


def diff_rows(original: str, converted: str, context: int = CONTEXT) -> list[DiffRow]:
    left, right = original.splitlines(), converted.splitlines()
    rows: list[DiffRow] = []
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    opcodes = matcher.get_opcodes()
    for index, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag == "equal":
            rows += _equal_rows(left, right, i1, i2, j1, context, first=index == 0, last=index == len(opcodes) - 1)
            continue
        length = max(i2 - i1, j2 - j1)
        for k in range(length):
            li, rj = i1 + k, j1 + k
            has_left, has_right = li < i2, rj < j2
            kind = "replace" if has_left and has_right else "delete" if has_left else "insert"
            rows.append(DiffRow(kind, li + 1 if has_left else None, left[li] if has_left else "",
                                rj + 1 if has_right else None, right[rj] if has_right else ""))
    return rows


def _equal_rows(left, right, i1, i2, j1, context, first, last) -> list[DiffRow]:
    count = i2 - i1
    keep_head = 0 if first else context
    keep_tail = 0 if last else context
    if count <= keep_head + keep_tail + 1:
        return [DiffRow("equal", i1 + k + 1, left[i1 + k], j1 + k + 1, right[j1 + k]) for k in range(count)]
    rows = [DiffRow("equal", i1 + k + 1, left[i1 + k], j1 + k + 1, right[j1 + k]) for k in range(keep_head)]
    rows.append(DiffRow("skip", skipped=count - keep_head - keep_tail))
    start = count - keep_tail
    rows += [DiffRow("equal", i1 + k + 1, left[i1 + k], j1 + k + 1, right[j1 + k]) for k in range(start, count)]
    return rows
