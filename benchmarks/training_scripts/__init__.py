"""The training-script benchmark's corpus (corpus.py: sources and scripts;
spec.py: what a script entry holds; data.py: the synthetic data) and the
pieces that run it (run.py, launch.py, table.py); benchmarks/training_scripts.py
is the command."""

from __future__ import annotations

import os

from benchmarks.training_scripts.corpus import SCRIPTS, SOURCES

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def script_by_id(script_id: str):
    for script in SCRIPTS:
        if script.id == script_id:
            return script
    raise KeyError(f"no script {script_id!r} in the training-script corpus")


def work_and_chosen(parser, work: str, names: list[str], scripts) -> tuple[str, list]:
    """The command's ``--work`` as an absolute path (a usage error inside the repository:
    the runs are other people's code) and the scripts ``names`` picks (all when none;
    a usage error for a name not in ``scripts``)."""
    work = os.path.abspath(work)
    if work == ROOT or work.startswith(ROOT + os.sep):
        parser.error("--work must be outside the repository")
    unknown = [n for n in names if n not in {s.id for s in scripts}]
    if unknown:
        parser.error("not in the corpus: " + ", ".join(unknown))
    return work, [s for s in scripts if not names or s.id in names]


__all__ = ["SCRIPTS", "SOURCES", "script_by_id", "work_and_chosen"]
