"""Python's garbage collector, set for converting many files.

Converting a file allocates millions of short-lived objects (libcst nodes,
black's lines), and the collector's default thresholds run a collection
every 700 allocations and a full one over the whole heap, with every rule
and module loaded, a dozen times per hundred files. Measured on every 4th
timm file in one process: 1.3-1.5 s of 8.4-9.4 s went to the collector. The
objects loaded before the first file (rules, modules) live as long as the
process, so they are frozen out of every collection; the young generation
is collected every 10,000 allocations instead of 700. The collector stays
on: a file's conversion leaves garbage in reference cycles (with the
collector off, one process grew from 80 to 200 MB over those 76 files).
Larger thresholds (50,000, 100,000) measured no faster.
"""

from __future__ import annotations

import gc
from contextlib import contextmanager

THRESHOLDS = (10_000, 10, 10)


def tune() -> None:
    """For a process that converts files until it exits (a worker, the server)."""
    gc.collect()  # nothing the first file leaves should be frozen with the rules
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)


@contextmanager
def tuned():
    """The collector tuned for a batch converted in this process, as it was
    afterwards; a process tuned for good (the server, converting a directory
    for a client) is left as it is: unfreezing would undo its freeze."""
    thresholds = gc.get_threshold()
    if thresholds == THRESHOLDS:
        yield
        return
    tune()
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
