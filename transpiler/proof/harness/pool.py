"""Runs Jobs in a replaceable worker process.

One worker per test process (so ``pytest -n 2`` has two). A worker that dies
(segfault, abort) or hangs fails only the case it was running; the next case
gets a fresh worker.
"""

from __future__ import annotations

import os
import subprocess
import sys
from multiprocessing.connection import Connection
from pathlib import Path

from transpiler.proof.harness.worker import Job, Outcome

_ROOT = Path(__file__).resolve().parents[3]  # the directory holding the transpiler package
# Not ``-m transpiler.proof.harness.worker``: pickled Outcomes must name their real module.
_WORKER_MAIN = "import sys; from transpiler.proof.harness.worker import main; main(sys.argv[1:])"

START_TIMEOUT = 300.0  # importing both frameworks on a loaded 2-core machine
CASE_TIMEOUT = 120.0


class WorkerPool:
    def __init__(self, case_timeout: float = CASE_TIMEOUT, paths: tuple[str, ...] = (), cwd: str | None = None):
        """``paths``: directories the snippets import from (a project's own
        packages, for its rules' examples); ``cwd``: where they run."""
        self.case_timeout = case_timeout
        self.paths = tuple(paths)
        self.cwd = cwd or str(_ROOT)
        self._process = None
        self._conn = None
        self.started = 0  # how many workers were started (for figures)

    def _start(self) -> None:
        # A plain subprocess (not multiprocessing's spawn, which re-imports the
        # caller's __main__) talking pickles over its own pair of pipes.
        to_worker_r, to_worker_w = os.pipe()
        from_worker_r, from_worker_w = os.pipe()
        env = dict(os.environ, GLOG_v=os.environ.get("GLOG_v", "3"))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (*self.paths, str(_ROOT), env.get("PYTHONPATH", "")) if p)
        process = subprocess.Popen(
            [sys.executable, "-c", _WORKER_MAIN, str(to_worker_r), str(from_worker_w)],
            pass_fds=(to_worker_r, from_worker_w),
            cwd=self.cwd,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        os.close(to_worker_r)
        os.close(from_worker_w)
        conn = _Duplex(Connection(from_worker_r, writable=False), Connection(to_worker_w, readable=False))
        self.started += 1
        if not conn.poll(START_TIMEOUT):
            process.kill()
            raise RuntimeError("the harness worker did not start (importing torch and MindSpore timed out)")
        try:
            assert conn.recv() == "ready"
        except EOFError:
            raise RuntimeError(f"the harness worker died while starting (exit code {process.wait()})") from None
        self._process, self._conn = process, conn

    def run(self, job: Job) -> Outcome:
        if self._process is None or self._process.poll() is not None:
            self._start()
        self._conn.send(job)
        if not self._conn.poll(self.case_timeout):
            self._stop(kill=True)
            return Outcome(False, side="worker", error=f"timed out after {self.case_timeout:.0f}s")
        try:
            outcome = self._conn.recv()
        except EOFError:
            try:
                code = self._process.wait(5)
            except subprocess.TimeoutExpired:
                code = None
            self._stop(kill=True)
            return Outcome(False, side="worker", error=f"the worker process died (exit code {code}): crashing kernel")
        if outcome.restart:
            self._stop(kill=False)
        return outcome

    def _stop(self, kill: bool) -> None:
        if self._process is None:
            return
        if kill:
            self._process.kill()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._conn.close()
        self._process = self._conn = None

    def close(self) -> None:
        if self._process is not None and self._process.poll() is None:
            try:
                self._conn.send(None)
            except (BrokenPipeError, OSError):
                pass
        self._stop(kill=False)


class _Duplex:
    """One reading and one writing Connection used as a pair."""

    def __init__(self, reader: Connection, writer: Connection):
        self.reader, self.writer = reader, writer

    def send(self, obj) -> None:
        self.writer.send(obj)

    def recv(self):
        return self.reader.recv()

    def poll(self, timeout: float) -> bool:
        return self.reader.poll(timeout)

    def close(self) -> None:
        self.reader.close()
        self.writer.close()
