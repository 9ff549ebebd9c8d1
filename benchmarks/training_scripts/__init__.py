"""The training-script benchmark's corpus (corpus.py: sources and scripts;
spec.py: what a script entry holds; data.py: the synthetic data) and the
pieces that run it (run.py, launch.py, table.py); benchmarks/training_scripts.py
is the command."""

from __future__ import annotations

from benchmarks.training_scripts.corpus import SCRIPTS, SOURCES


def script_by_id(script_id: str):
    for script in SCRIPTS:
        if script.id == script_id:
            return script
    raise KeyError(f"no script {script_id!r} in the training-script corpus")


__all__ = ["SCRIPTS", "SOURCES", "script_by_id"]
