"""The client side of the server: decide whether to ask it, ask it, start it.

Imports only the standard library (and platformdirs, through cache_root):
this runs before ms-migrate imports libcst, black or any rule.
"""

from __future__ import annotations

import os
import sys

from transpiler.cache_root import default_cache_root

SERVER_VARIABLE = "MS_MIGRATE_SERVER"  # "1": use the server as --server does
IDLE_TIMEOUT_VARIABLE = "MS_MIGRATE_SERVER_IDLE_TIMEOUT"
IDLE_TIMEOUT = 30 * 60  # seconds without a request after which a server exits (default)
REPLY_TIMEOUT = 120  # seconds to wait for a conversion (a hung server) before converting in-process
_SOCKET_PATH_MAX = 100  # sun_path holds 108 bytes on Linux, 104 on macOS


def server_directory(root: str | None = None) -> str:
    return os.path.join(root or default_cache_root(), "server")


def address(directory: str) -> str:
    """The socket's path: in the server directory, or (when that path is too
    long for a Unix socket) in the temporary directory under a digest of it."""
    path = os.path.join(directory, "socket")
    if len(path.encode()) <= _SOCKET_PATH_MAX:
        return path
    import hashlib
    import tempfile

    digest = hashlib.blake2b(os.path.realpath(directory).encode(), digest_size=8).hexdigest()
    return os.path.join(tempfile.gettempdir(), f"ms-migrate-{os.getuid()}-{digest}.socket")


def authkey_path(directory: str) -> str:
    return os.path.join(directory, "authkey")


def code_identity() -> dict:
    """Which ms-migrate this is: a server serves clients of its own checkout
    and Python only."""
    import transpiler

    return {"code": os.path.dirname(os.path.abspath(transpiler.__file__)), "environment": sys.prefix,
            "python": sys.version}


def wants_server(argv: list[str]) -> bool:
    """``convert ... --server`` or $MS_MIGRATE_SERVER=1, with output going to
    files or pipes (editors and hooks): a terminal gets colours and a
    progress display that only an in-process run draws the same."""
    if os.name != "posix" or not argv or argv[0] != "convert":
        return False  # a Unix socket, and a command the server serves
    if "--server" not in argv and os.environ.get(SERVER_VARIABLE, "").lower() not in ("1", "true", "yes", "on"):
        return False
    return not (_isatty(sys.stdout) or _isatty(sys.stderr))


def _isatty(stream) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):
        return False


def request(message: dict, directory: str | None = None, timeout: float = REPLY_TIMEOUT) -> dict | None:
    """Send ``message`` to the server and return its reply; None when there
    is no server or it does not answer."""
    from multiprocessing.connection import Client

    directory = directory or server_directory()
    try:
        with open(authkey_path(directory), "rb") as handle:
            authkey = handle.read()
        with Client(address(directory), family="AF_UNIX", authkey=authkey) as connection:
            connection.send(message)
            if not connection.poll(timeout):
                return None
            reply = connection.recv()
    except Exception:  # noqa: BLE001 - a missing, dead or foreign server, a broken reply: no server
        return None
    return reply if isinstance(reply, dict) else None


def convert_request(argv: list[str]) -> dict:
    umask = os.umask(0)
    os.umask(umask)
    return {
        "op": "convert", **code_identity(), "argv": list(argv), "cwd": os.getcwd(), "env": dict(os.environ),
        "umask": umask, "streams": {name: _encoding(getattr(sys, name)) for name in ("stdout", "stderr")},
    }


def _encoding(stream) -> tuple[str, str]:
    return getattr(stream, "encoding", None) or "utf-8", getattr(stream, "errors", None) or "strict"


def run_through_server(argv: list[str]) -> int | None:
    """Convert through the server: its exit code once its output is printed,
    or None to convert in-process (no server, a stale one, or a command it
    does not serve). A missing or stale server is started in the background
    for the next run."""
    try:
        message = convert_request(argv)
    except OSError:  # no working directory (removed): let the in-process run say so
        return None
    reply = request(message)
    status = reply.get("status") if reply else None
    if status == "done":
        for name in ("stdout", "stderr"):
            stream = getattr(sys, name)
            stream.flush()
            stream.buffer.write(reply[name])
            stream.buffer.flush()
        return int(reply["code"])
    if status != "declined":  # none answered, or it was stale and is exiting
        try:
            spawn()
        except OSError:
            pass  # no process to spare: this run converts in-process all the same
    return None


def default_idle_timeout() -> float:
    """$MS_MIGRATE_SERVER_IDLE_TIMEOUT seconds, else half an hour."""
    try:
        return float(os.environ.get(IDLE_TIMEOUT_VARIABLE) or IDLE_TIMEOUT)
    except ValueError:
        return IDLE_TIMEOUT


def spawn(idle_timeout: float | None = None):
    """Start a server in the background, detached from this process and its
    terminal; it exits soon if another one holds the server directory."""
    import subprocess

    import transpiler

    root = os.path.dirname(os.path.dirname(os.path.abspath(transpiler.__file__)))  # -m imports this very checkout
    return subprocess.Popen(
        [sys.executable, "-m", "transpiler.server", "--idle-timeout", str(idle_timeout or default_idle_timeout()),
         "--code", code_identity()["code"]],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        cwd=root, start_new_session=True, close_fds=True,
    )
