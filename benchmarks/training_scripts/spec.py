"""What the training-script benchmark runs: a public training script, the
source it comes from, the data it reads and how to read its losses."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Script:
    """One training script, run as its README says, with a tiny configuration.

    id: a unique row name; source: ``Source.name`` of the repository (a
    ``benchmarks.research.spec.Source``); path: the script inside the source,
    run from ``cwd`` (a directory of the source, default its top) as
    ``python <path> <argv>``: the script is the repository's file, byte for
    byte, and the repository around it too.
    data: a function of ``benchmarks.training_scripts.data`` that writes the
    synthetic data into the run directory, in the layout the script reads
    (``data(run_dir)``); argv may hold ``{run}`` (the run directory).
    loss: a regular expression whose first group is a loss the script prints;
    every match (stdout and stderr) is one logged loss, in order.
    stop_after: scripts without a command-line argument for the number of
    steps (constants in the file) are stopped once they have printed that many
    losses (0: the script ends by itself). The wall time is then measured up
    to that line, on both sides alike.
    packages: registry packages (``name==version``) the original imports that
    this environment lacks; downloaded with ``pip download --no-deps`` and put
    on the path of both sides (never installed).
    note: what the configuration changes or why the row is what it is.
    by_hand: a file of ``benchmarks/training_scripts/by_hand`` that writes the same
    training by hand in MindSpore (same model, data and printed losses): it runs as a
    third side, in a copy of the converted run directory, and the table gives the
    converted script's time against it (issue 26's speed target where MindSpore itself
    is the limit).
    by_hand_argv: the hand-written file's command-line arguments, where one file
    writes several scripts (default: ``argv``).
    """

    id: str
    source: str
    path: str
    loss: str
    argv: tuple[str, ...] = ()
    cwd: str = "."
    data: str = ""
    stop_after: int = 0
    packages: tuple[str, ...] = ()
    timeout: int = 900
    note: str = ""
    by_hand: str = ""
    by_hand_argv: tuple[str, ...] = ()
