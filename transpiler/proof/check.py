"""``ms-migrate convert --check-imports``: import every converted module in a child
process and report import errors per file as ``path:line``.

One child imports the files one after another (MindSpore's import cost is paid
once) and reports each file as a JSON line when done; a file that does not
finish within the timeout is reported as hanging and a new child takes the
remaining files. Run the child as ``python -m transpiler.proof.check FILE...``.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass

from transpiler.convert.diagnostics import Diagnostic, Severity


@dataclass(frozen=True)
class ImportProblem:
    path: str
    line: int
    message: str

    def one_line(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def check_imports(paths: list[str], timeout: float = 60.0) -> list[ImportProblem]:
    problems: list[ImportProblem] = []
    pending = [os.path.abspath(p) for p in paths]
    while pending:
        done, hung = _run_child(pending, timeout, problems)
        pending = pending[done:]
        if hung:
            problems.append(ImportProblem(pending[0], 1, f"import did not finish within {timeout:g}s"))
            pending = pending[1:]
    return problems


def _run_child(paths: list[str], timeout: float, problems: list[ImportProblem]) -> tuple[int, bool]:
    """Import ``paths`` in one child; returns (files finished, whether one hung)."""
    env = {**os.environ, "GLOG_v": os.environ.get("GLOG_v", "3")}
    child = subprocess.Popen([sys.executable, "-m", "transpiler.proof.check", *paths], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, env=env)
    selector = selectors.DefaultSelector()
    selector.register(child.stdout, selectors.EVENT_READ)
    finished = 0
    deadline = time.monotonic() + timeout
    buffer = ""
    try:
        while finished < len(paths):
            if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
                return finished, True
            chunk = os.read(child.stdout.fileno(), 65536).decode("utf-8", "replace")
            if not chunk:  # the child died without reporting (e.g. a crash in native code)
                problems.append(ImportProblem(paths[finished], 1, f"the importing process died (exit {child.wait()})"))
                return finished + 1, False
            buffer += chunk
            while "\n" in buffer:
                line, buffer = buffer.split("\n", 1)
                if not line.startswith("{"):
                    continue
                record = json.loads(line)
                if record.get("error"):
                    problems.append(ImportProblem(record["path"], record["line"], record["error"]))
                finished += 1
                deadline = time.monotonic() + timeout
        return finished, False
    finally:
        selector.close()
        if child.poll() is None:
            child.kill()
        child.wait()


def as_diagnostics(problems: list[ImportProblem], display) -> list[Diagnostic]:
    return [Diagnostic(display(p.path), p.line, 0, "check", Severity.ERROR, f"import failed: {p.message}")
            for p in problems]


def _import_one(path: str) -> dict:
    """Import ``path`` as its own module (its folder on sys.path, as when a
    user runs it); errors point at the deepest frame inside ``path``'s tree."""
    try:
        _import_path(path)
    except SyntaxError as exc:
        return {"path": exc.filename or path, "line": exc.lineno or 1, "error": f"SyntaxError: {exc.msg}"}
    except BaseException as exc:  # anything the module raises on import
        folder = os.path.dirname(path)
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(folder + os.sep)]
        where = frames[-1] if frames else None
        return {"path": where.filename if where else path, "line": where.lineno if where else 1,
                "error": f"{type(exc).__name__}: {exc}".splitlines()[0]}
    return {"path": path, "line": 0, "error": None}


def _import_path(path: str) -> None:
    """A module inside packages is imported by its dotted name from the top
    package's parent, so its relative imports work; a plain file by path."""
    import importlib

    from transpiler.proof.verify import load_module

    folder = os.path.dirname(path)
    parts = [os.path.splitext(os.path.basename(path))[0]]
    while os.path.exists(os.path.join(folder, "__init__.py")):
        folder, package = os.path.split(folder)
        parts.insert(0, package)
    if len(parts) == 1:
        load_module(path, f"_ms_migrate_check_{abs(hash(path))}")
        return
    sys.path.insert(0, folder)
    try:
        importlib.import_module(".".join(parts))
    finally:
        sys.path.remove(folder)


def _child(paths: list[str]) -> None:
    out = sys.stdout
    sys.stdout = sys.stderr  # module-level prints must not mix with the protocol
    for path in paths:
        record = _import_one(path)
        out.write(json.dumps(record) + "\n")
        out.flush()


if __name__ == "__main__":
    _child(sys.argv[1:])
