"""A progress bar on stderr for long runs (rich), silent when disabled."""

from __future__ import annotations

import sys


class Progress:
    def __init__(self, total: int, enabled: bool):
        self.total = total
        self.enabled = enabled and total > 1
        self._bar = None

    def __enter__(self) -> "Progress":
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress as RichProgress, TimeRemainingColumn

            self._bar = RichProgress(
                "[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                console=Console(file=sys.stderr), transient=True,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task("converting", total=self.total)
        return self

    def advance(self) -> None:
        if self._bar is not None:
            self._bar.advance(self._task)

    def print(self, line: str) -> None:
        if self._bar is not None:
            self._bar.console.print(line, markup=False, highlight=False)
        else:
            print(line, file=sys.stderr)

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)
