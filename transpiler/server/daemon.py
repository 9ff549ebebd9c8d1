"""The server: one per user cache directory, holding a lock on it for its
life; it converts one request at a time, as ``ms-migrate`` run in the
client's directory with the client's environment would, and exits after an
idle timeout, on ``ms-migrate server stop``, or when the code or rules on
disk change under it (it refuses that request: the client converts
in-process and starts a fresh server)."""

from __future__ import annotations

import fcntl
import io
import os
import secrets
import signal
import sys
import tempfile
import time
import warnings
from multiprocessing.connection import Listener

from transpiler.batch import collector
from transpiler.server import freshness
from transpiler.server.client import address, authkey_path, code_identity, server_directory

LOCK_WAIT = 5.0  # seconds to wait for a server that is exiting to let go of the directory
_WARM_UP_MODEL = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return F.gelu(self.norm(self.proj(x))).transpose(1, 2).contiguous()
'''


class _Idle(Exception):
    """The idle timeout passed."""


def _on_alarm(signum, frame):
    raise _Idle


def _on_terminate(signum, frame):
    raise SystemExit(0)


def _lock(directory: str):
    """The directory's lock, held until this process exits; None when another
    server holds it (after waiting a little for one that is exiting)."""
    handle = open(os.path.join(directory, "lock"), "a+b")  # noqa: SIM115 - kept open: it is the lock
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return handle
        except BlockingIOError:
            if time.monotonic() > deadline:
                handle.close()
                return None
            time.sleep(0.05)


class Server:
    def __init__(self, idle_timeout: float):
        self.idle_timeout = idle_timeout
        self.identity = code_identity()
        self.snapshot = freshness.Snapshot()
        self.parser = None  # built by the first conversion, then reused
        self.started = time.time()
        self.served = 0
        self.running = True

    def warm_up(self) -> None:
        """Import everything a conversion uses and convert once, so the
        first request is as fast as the next."""
        from rewrite_rules.registry import load_rules

        rules = load_rules()
        for table in (rules.calls, rules.attributes, rules.methods):
            for _ in table.values():  # loads every rule module
                pass
        umask = os.umask(0)
        os.umask(umask)
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "model.py")
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(_WARM_UP_MODEL)
            self.convert({"argv": ["convert", path, "--diff", "--color", "never"], "cwd": directory,
                          "env": dict(os.environ), "umask": umask,
                          "streams": {"stdout": ("utf-8", "strict"), "stderr": ("utf-8", "strict")}})
        collector.tune()  # what is loaded now lives as long as the server

    def answer(self, message) -> dict:
        """The reply to ``message``; a server that fails outside a conversion
        (say, a file removed while its code was checked) makes way."""
        try:
            return self.handle(message)
        except Exception:  # noqa: BLE001 - the client converts in-process and starts a fresh server
            self.running = False
            return {"status": "stale"}

    def handle(self, message: dict) -> dict:
        op = message.get("op")
        if op == "stop":
            self.running = False
            return {"status": "stopping"}
        identity = {key: message.get(key) for key in self.identity}
        fresh = identity == self.identity and self.snapshot.still_on_disk()
        if not fresh:
            self.running = False  # its code is not the code on disk (or not the client's): make way
        if op == "status":
            return {"status": "running", "fresh": fresh, "pid": os.getpid(), "code": self.identity["code"],
                    "started": self.started, "served": self.served, "idle_timeout": self.idle_timeout,
                    "cpu_seconds": sum(os.times()[:2])}
        if op != "convert":
            return {"status": "declined", "reason": f"unknown request {op!r}"}
        if not fresh:
            return {"status": "stale"}
        reply = self.convert(message)
        self.served += reply["status"] == "done"
        return reply

    def convert(self, message: dict) -> dict:
        """Run the command as ``ms-migrate`` in the client's place, capturing
        its output; decline what only an in-process run does right."""
        from transpiler.cli import build_parser

        with warnings.catch_warnings():  # warnings filters as they were, and each warning shown again as in a new process
            return self._convert(message, build_parser)

    def _convert(self, message: dict, build_parser) -> dict:
        saved = (os.getcwd(), dict(os.environ), sys.stdout, sys.stderr, sys.argv)
        umask = os.umask(message["umask"])
        out, err = (io.TextIOWrapper(io.BytesIO(), *message["streams"][name], write_through=True)
                    for name in ("stdout", "stderr"))
        try:
            try:
                os.chdir(message["cwd"])
            except OSError:
                return {"status": "declined", "reason": "no working directory"}
            os.environ.clear()
            os.environ.update(message["env"])
            sys.argv = ["ms-migrate", *message["argv"]]
            sys.stdout, sys.stderr = out, err
            try:
                self.parser = self.parser or build_parser()
                args = self.parser.parse_args(message["argv"])
            except SystemExit:
                return {"status": "declined", "reason": "not a valid command line"}
            reason = _not_served(args)
            if reason:
                return {"status": "declined", "reason": reason}
            try:
                code = int(args.run(args) or 0)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                if not isinstance(exc.code, (int, type(None))):
                    print(exc.code, file=sys.stderr)
            except Exception as exc:  # noqa: BLE001 - let the client run it and show the traceback
                return {"status": "declined", "reason": f"failed: {exc!r}"}
            out.flush()
            err.flush()
            return {"status": "done", "code": code, "stdout": out.buffer.getvalue(), "stderr": err.buffer.getvalue()}
        finally:
            sys.stdout, sys.stderr, sys.argv = saved[2], saved[3], saved[4]
            os.environ.clear()
            os.environ.update(saved[1])
            os.chdir(saved[0])
            os.umask(umask)


def _not_served(args) -> str | None:
    """Single-file conversions are served; trees use worker processes and
    gain little, and --check-imports/--emit-tests run child processes."""
    if getattr(args, "command", None) != "convert":
        return "only convert is served"
    if not os.path.isfile(args.source):
        return "only single files are served"
    if args.check_imports or args.emit_tests:
        return "--check-imports and --emit-tests run in-process"
    return None


def serve(idle_timeout: float, directory: str | None = None, expected_code: str | None = None) -> int:
    if expected_code and code_identity()["code"] != expected_code:
        return 1  # another checkout is imported here (an editable install's, say): it would only be stale
    directory = directory or server_directory()
    os.makedirs(directory, mode=0o700, exist_ok=True)
    lock = _lock(directory)
    if lock is None:
        return 0  # another server has the directory
    signal.signal(signal.SIGTERM, _on_terminate)
    server = Server(idle_timeout)
    server.warm_up()
    path = address(directory)
    authkey = secrets.token_bytes(32)
    _write_private(authkey_path(directory), authkey)
    if os.path.exists(path):
        os.unlink(path)  # left by a server that died: we hold the lock, so it is ours to remove
    signal.signal(signal.SIGALRM, _on_alarm)
    old_umask = os.umask(0o077)  # the socket: the user's only
    listener = Listener(path, family="AF_UNIX", authkey=authkey)
    os.umask(old_umask)
    try:
        while server.running:
            signal.alarm(max(1, round(idle_timeout)))
            try:
                connection = listener.accept()
            except _Idle:
                break
            except Exception:  # noqa: BLE001 - a client that failed to authenticate, or went away
                continue
            signal.alarm(0)
            with connection:
                try:
                    if connection.poll(5):
                        connection.send(server.answer(connection.recv()))
                except (OSError, EOFError):
                    pass  # the client went away; the next one is served
    except _Idle:
        pass  # the alarm fired while a connection was accepted: that client converts in-process
    finally:
        signal.alarm(0)
        listener.close()  # removes the socket
        try:
            os.unlink(authkey_path(directory))
        except OSError:
            pass
        lock.close()
    return 0


def _write_private(path: str, data: bytes) -> None:
    """Write a file only the user can read, atomically."""
    temporary = f"{path}.{os.getpid()}.tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
    os.replace(temporary, path)
