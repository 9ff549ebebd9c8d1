"""One side of one script: copy, write data, run, read losses and the verdict."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

from benchmarks.training_scripts import data as data_module
from benchmarks.training_scripts.spec import Script

LAUNCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launch.py")
MARKER = "TODO(ms-migrate)"
_FRAME = re.compile(r'^\s*File "([^"]+)", line (\d+)')
_ERROR = re.compile(r"^([A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit|Warning)|AssertionError|StopIteration)\b")


def prepare_run(script: Script, tree: str, run_dir: str) -> str:
    """Copy the source tree (original or converted) into ``run_dir`` and write the
    script's data there; returns the directory the script runs from."""
    shutil.rmtree(run_dir, ignore_errors=True)
    shutil.copytree(tree, run_dir, symlinks=True, ignore=shutil.ignore_patterns(".git", ".complete"))
    cwd = os.path.join(run_dir, script.cwd)
    if script.data:
        getattr(data_module, script.data)(cwd)
    return cwd


def run_side(script: Script, side: str, cwd: str, paths: list[str], timeout: int, torchvision: str = "") -> dict:
    """Run the script under one framework; returns the side's result. Its output
    goes to ``runs/<script>/<side>.log`` as it runs."""
    argv = [a.replace("{run}", cwd) for a in script.argv]
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONPATH=os.pathsep.join(paths), PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTHONSTARTUP", None)
    if torchvision:
        env["TRAINING_SCRIPTS_TORCHVISION"] = torchvision
    command = [sys.executable, LAUNCH, side, os.path.join(cwd, os.path.relpath(script.path, script.cwd)), *argv]
    pattern = re.compile(script.loss, re.MULTILINE)
    losses: list[float] = []
    chunks: dict[int, list[str]] = {1: [], 2: []}
    lock = threading.Lock()
    state = {"stopped": False}
    end = {"time": None}
    root = _run_root(os.path.realpath(cwd))
    log = open(root + ".log", "w", encoding="utf-8")
    before = _files(root)
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               stdin=subprocess.DEVNULL, start_new_session=True)

    def take(line: str) -> None:
        for match in pattern.finditer(line):
            try:
                value = float(match.group(1))
            except ValueError:
                continue
            with lock:
                losses.append(value)
                if script.stop_after and len(losses) >= script.stop_after and not state["stopped"]:
                    state["stopped"] = True
                    end["time"] = time.perf_counter()
                    _kill(process)

    def read(stream, number: int) -> None:
        # stdout and stderr apart: a progress bar on stderr (\r, no newline) never glues onto a printed loss
        pending = ""
        for raw in iter(lambda: stream.read1(65536), b""):
            text = raw.decode("utf-8", "replace")
            with lock:
                chunks[number].append(text)
                log.write(text)
                log.flush()
            pending += text
            *lines, pending = re.split(r"[\r\n]", pending)
            for line in lines:
                take(line)
        take(pending)

    readers = [threading.Thread(target=read, args=(stream, number), daemon=True)
               for number, stream in ((1, process.stdout), (2, process.stderr))]
    for reader in readers:
        reader.start()
    try:
        process.wait(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        _kill(process)
        process.wait()
        timed_out = True
    for reader in readers:
        reader.join(timeout=10)
    log.close()
    seconds = (end["time"] or time.perf_counter()) - start
    output = "".join(chunks[1]) + "".join(chunks[2])  # a traceback is on stderr, whole
    result = verdict(side, process.returncode, state["stopped"], timed_out, losses, output, cwd, seconds)
    result["written"] = sorted(_files(root) - before)
    return result


def _files(root: str) -> set[str]:
    """The files under a run directory (relative paths), leaving out Python's caches and
    MindSpore's own dumps (``rank_0/``: the graph it could not compile)."""
    found = set()
    for directory, subdirectories, names in os.walk(root):
        subdirectories[:] = [d for d in subdirectories if d != "__pycache__" and not d.startswith("rank_")]
        found.update(os.path.relpath(os.path.join(directory, name), root) for name in names)
    return found


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def verdict(side: str, returncode: int, stopped: bool, timed_out: bool, losses: list[float], output: str,
            cwd: str, seconds: float) -> dict:
    """trains (ran; the last logged loss is below the first), flat (ran; it is not),
    no-loss (ran; no loss printed), fails, marked (failed in a statement the
    converter marked), timeout."""
    result = {"side": side, "seconds": round(seconds, 1), "losses": len(losses),
              "first": losses[0] if losses else None, "last": losses[-1] if losses else None, "where": "",
              "error": ""}
    if timed_out:
        result["verdict"] = "timeout"
    elif returncode == 0 or stopped:
        if len(losses) < 2:
            result["verdict"] = "no-loss"
        else:
            result["verdict"] = "trains" if losses[-1] < losses[0] else "flat"
    else:
        where, error = failure(output, cwd)
        result["where"], result["error"] = where, error
        result["verdict"] = "marked" if is_marked(where, cwd, error) else "fails"
    if result["verdict"] in ("fails", "marked", "timeout"):
        result["tail"] = output[-3000:]
    return result


def failure(output: str, cwd: str) -> tuple[str, str]:
    """The innermost traceback frame in the run's own files (``path:line``) and
    the error line."""
    lines = output.splitlines()
    start = max((i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")),
                default=-1)
    where = ""
    error = ""
    if start >= 0:
        root = _run_root(os.path.realpath(cwd))
        for line in lines[start:]:
            frame = _FRAME.match(line)
            if frame and os.path.realpath(frame.group(1)).startswith(root + os.sep):
                where = f"{os.path.relpath(os.path.realpath(frame.group(1)), root)}:{frame.group(2)}"
        for line in lines[start + 1:]:
            if _ERROR.match(line.strip()) and not line.startswith(" "):
                error = line.strip()
    if not error:
        error = next((line.strip() for line in reversed(lines) if line.strip()), "")
    return where, error[:300]


def _run_root(cwd: str) -> str:
    # the run directory is WORK/runs/<id>/<side>; cwd may be below it
    parts = cwd.split(os.sep)
    for index in range(len(parts) - 1, 0, -1):
        if parts[index] in ("torch", "mindspore") and parts[index - 2] == "runs":
            return os.sep.join(parts[:index + 1])
    return cwd


def is_marked(where: str, cwd: str, error: str) -> bool:
    """The failing line is a statement under a ``# TODO(ms-migrate)`` marker
    (the marker comment sits directly above it), or the error names a marker."""
    if MARKER in error:
        return True
    if not where:
        return False
    path, line = where.rsplit(":", 1)
    try:
        with open(os.path.join(_run_root(os.path.realpath(cwd)), path), encoding="utf-8") as handle:
            text = handle.read().splitlines()
    except OSError:
        return False
    index = int(line) - 2
    while index >= 0 and text[index].strip().startswith("#"):
        if MARKER in text[index]:
            return True
        index -= 1
    return False
