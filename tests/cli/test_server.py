"""The warm server (`convert --server`, `ms-migrate server ...`): what it
prints and the exit code are those of an in-process run, byte for byte; a
stale, dead or missing server never changes a result. No timings here: the
benchmark measures the speed."""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import subprocess
import sys
import tempfile

import pytest

from transpiler.server import client, daemon, freshness

MODEL = """import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)  # kept

    def forward(self, x):
        return torch.relu(self.fc(x)).sum(dim=1)
"""
REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
START_TIMEOUT = 300  # seconds: a cap against hanging, not a timing (the machine may be loaded)


def _environment(root: str, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("MS_MIGRATE_SERVER", "NO_COLOR", "FORCE_COLOR")}
    return {**env, "MS_MIGRATE_CACHE_DIR": root, client.IDLE_TIMEOUT_VARIABLE: "120", **extra}


def ms_migrate(root: str, *args: str, cwd=None, python=sys.executable, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-m", "transpiler", *args], capture_output=True, cwd=cwd,
                          env=_environment(root, **extra), timeout=START_TIMEOUT)


def status(root: str) -> dict | None:
    return client.request({"op": "status", **client.code_identity()}, client.server_directory(root), timeout=60)


def served(root: str) -> int:
    return status(root)["served"]


def stop_servers(root: str) -> None:
    """Stop whatever server a test started there (one may still be warming up)."""
    ms_migrate(root, "server", "start")
    ms_migrate(root, "server", "stop")


@pytest.fixture(scope="module")
def server_root():
    root = tempfile.mkdtemp(prefix="msm-")  # short: the socket's path must fit a Unix socket address
    started = ms_migrate(root, "server", "start")
    assert started.returncode == 0, started.stderr
    yield root
    ms_migrate(root, "server", "stop")
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    (tmp_path / "broken.py").write_text("import torch\n\ndef f(:\n    return torch.zeros(2)\n")
    return tmp_path


def same_through_server(root: str, workdir, *args: str, **extra: str) -> subprocess.CompletedProcess:
    """Run the command in-process and through the server; both print the same and exit the same."""
    before = served(root)
    direct = ms_migrate(root, *args, cwd=workdir, **extra)
    through = ms_migrate(root, *args, "--server", cwd=workdir, **extra)
    assert served(root) == before + 1, "the server did not convert it"
    assert (through.stdout, through.stderr, through.returncode) == (direct.stdout, direct.stderr, direct.returncode)
    return through


def test_diff_is_the_same_through_the_server(server_root, workdir):
    result = same_through_server(server_root, workdir, "convert", "model.py", "--diff")
    assert result.returncode == 0
    assert b"+class Net(nn.Cell):" in result.stdout


def test_coloured_diff_and_environment_are_the_clients(server_root, workdir):
    result = same_through_server(server_root, workdir, "convert", "model.py", "--diff", "--color", "always")
    assert b"\x1b[" in result.stdout
    plain = same_through_server(server_root, workdir, "convert", "model.py", "--diff", FORCE_COLOR="1", NO_COLOR="1")
    assert b"\x1b[" not in plain.stdout


def test_syntax_error_is_the_same_through_the_server(server_root, workdir):
    result = same_through_server(server_root, workdir, "convert", "broken.py", "--diff")
    assert result.returncode == 1
    assert b"broken.py:3" in result.stderr


def test_written_output_is_the_same_through_the_server(server_root, workdir):
    direct = ms_migrate(server_root, "convert", "model.py", "-o", "direct.py", cwd=workdir)
    before = served(server_root)
    through = ms_migrate(server_root, "convert", "model.py", "-o", "through.py", "--server", cwd=workdir)
    assert served(server_root) == before + 1
    assert through.returncode == direct.returncode == 0
    assert through.stderr == direct.stderr.replace(b"direct.py", b"through.py")
    assert (workdir / "through.py").read_bytes() == (workdir / "direct.py").read_bytes()
    assert oct((workdir / "through.py").stat().st_mode) == oct((workdir / "direct.py").stat().st_mode)


def test_the_environment_variable_asks_the_server(server_root, workdir):
    before = served(server_root)
    result = ms_migrate(server_root, "convert", "model.py", "--diff", cwd=workdir, MS_MIGRATE_SERVER="1")
    assert result.returncode == 0 and served(server_root) == before + 1


def test_what_it_does_not_serve_runs_in_process(server_root, workdir):
    before = served(server_root)
    for args in (("convert", "missing.py", "--diff"), ("convert", ".", "--diff"), ("convert", "--bogus")):
        direct = ms_migrate(server_root, *args, cwd=workdir)
        through = ms_migrate(server_root, *args, "--server", cwd=workdir)
        assert (through.stdout, through.stderr, through.returncode) == (direct.stdout, direct.stderr,
                                                                         direct.returncode)
    assert served(server_root) == before


def test_one_server_per_cache_directory(server_root):
    pid = status(server_root)["pid"]
    second = subprocess.run([sys.executable, "-m", "transpiler.server"], env=_environment(server_root),
                            timeout=START_TIMEOUT)
    assert second.returncode == 0  # it found the directory taken and left
    assert status(server_root)["pid"] == pid


def test_a_dead_socket_falls_back_to_converting_in_process(workdir):
    root = tempfile.mkdtemp(prefix="msm-")
    try:
        directory = client.server_directory(root)
        os.makedirs(directory)
        with open(client.authkey_path(directory), "wb") as handle:
            handle.write(b"k" * 32)
        dead = socket.socket(socket.AF_UNIX)
        dead.bind(client.address(directory))
        dead.close()  # the socket file stays, nobody listens: as after a crash
        direct = ms_migrate(root, "convert", "model.py", "--diff", cwd=workdir)
        through = ms_migrate(root, "convert", "model.py", "--diff", "--server", cwd=workdir)
        assert (through.stdout, through.stderr, through.returncode) == (direct.stdout, direct.stderr, 0)
    finally:
        stop_servers(root)  # the fallback started one in the background
        shutil.rmtree(root, ignore_errors=True)


def test_a_server_of_other_code_refuses_and_exits(workdir):
    root = tempfile.mkdtemp(prefix="msm-")
    try:
        assert ms_migrate(root, "server", "start").returncode == 0
        directory = client.server_directory(root)
        message = {**client.convert_request(["convert", str(workdir / "model.py"), "--diff"]), "code": "/elsewhere"}
        assert client.request(message, directory)["status"] == "stale"
        _wait_until_unlocked(directory)
        assert not os.path.exists(client.address(directory))
        assert status(root) is None
    finally:
        ms_migrate(root, "server", "stop")
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.parametrize("changed", [("code_stamp", "code_digest"), ("installed_stamp",)])
def test_edited_code_or_installed_packages_make_the_server_stale(monkeypatch, changed):
    server = daemon.Server(idle_timeout=60)
    request = {**client.convert_request(["convert", "model.py", "--diff"]), "env": {}}
    assert server.handle({**request, "op": "status"})["fresh"]
    for name in changed:
        monkeypatch.setattr(freshness, name, lambda: "edited")
    assert server.handle(request) == {"status": "stale"}
    assert not server.running


def test_touched_code_leaves_the_server_fresh(monkeypatch):
    server = daemon.Server(idle_timeout=60)
    monkeypatch.setattr(freshness, "code_stamp", lambda: "touched")
    assert server.handle({"op": "status", **client.code_identity()})["fresh"]
    assert server.running


def test_an_idle_server_exits_and_cleans_up():
    root = tempfile.mkdtemp(prefix="msm-")
    try:
        process = subprocess.run([sys.executable, "-m", "transpiler.server", "--idle-timeout", "1"],
                                 env=_environment(root), timeout=START_TIMEOUT)
        assert process.returncode == 0
        directory = client.server_directory(root)
        assert not os.path.exists(client.address(directory))
        assert not os.path.exists(client.authkey_path(directory))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_only_convert_to_files_or_pipes_asks_the_server(monkeypatch):
    class Stream:
        def __init__(self, tty):
            self.tty = tty

        def isatty(self):
            return self.tty

    monkeypatch.delenv(client.SERVER_VARIABLE, raising=False)
    monkeypatch.setattr(sys, "stdout", Stream(False))
    monkeypatch.setattr(sys, "stderr", Stream(False))
    assert client.wants_server(["convert", "m.py", "--diff", "--server"])
    assert not client.wants_server(["convert", "m.py", "--diff"])
    assert not client.wants_server(["rules", "--server"])
    monkeypatch.setenv(client.SERVER_VARIABLE, "1")
    assert client.wants_server(["convert", "m.py", "--diff"])
    monkeypatch.setattr(sys, "stdout", Stream(True))
    assert not client.wants_server(["convert", "m.py", "--diff"])  # a terminal: colours and progress as drawn here


def test_a_long_cache_path_gets_a_short_socket_address():
    directory = "/" + "d" * 200
    assert len(client.address(directory).encode()) <= 100
    assert client.address(directory) != client.address(directory + "x")


def test_the_client_imports_no_converter():
    code = ("import sys\nfrom transpiler.server import client\nimport transpiler.cli\n"
            "client.wants_server(['convert', 'm.py'])\n"
            "print(sorted(m for m in ('libcst', 'black', 'rich', 'rewrite_rules') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def _wait_until_unlocked(directory: str) -> None:
    """Until the server lets go of its directory (its last act)."""
    with open(os.path.join(directory, "lock"), "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)  # blocks while the server lives
        fcntl.flock(handle, fcntl.LOCK_UN)


def test_a_server_whose_rules_were_edited_is_replaced(tmp_path, workdir):
    """End to end, on a copy of ms-migrate (run by the base Python, with this
    environment's packages: the editable install would import the original):
    edit a rule file under a running server; the next convert is right
    (in-process) and a fresh server follows."""
    import libcst

    code = tmp_path / "code"
    for package in ("transpiler", "rewrite_rules"):
        shutil.copytree(os.path.join(REPOSITORY, package), code / package, ignore=shutil.ignore_patterns("__pycache__"))
    packages = os.path.dirname(os.path.dirname(libcst.__file__))
    root = tempfile.mkdtemp(prefix="msm-")
    copy = {"python": sys._base_executable, "PYTHONPATH": os.pathsep.join([str(code), packages]),
            "cwd": workdir}  # not this checkout: python -m imports from the working directory first

    def server_pid() -> str:
        shown = ms_migrate(root, "server", "status", **copy).stdout.decode()
        assert f"code {code / 'transpiler'}," in shown, shown  # the copy's server
        return shown.split("pid ")[1].split(",")[0]

    try:
        assert ms_migrate(root, "server", "start", **copy).returncode == 0
        first = server_pid()
        direct = ms_migrate(root, "convert", "model.py", "--diff", **copy)
        assert direct.returncode == 0, direct.stderr
        rule_file = code / "rewrite_rules" / "nn" / "layers.py"
        rule_file.write_text(rule_file.read_text() + "\n# edited\n")
        through = ms_migrate(root, "convert", "model.py", "--diff", "--server", **copy)
        assert (through.stdout, through.stderr, through.returncode) == (direct.stdout, direct.stderr, 0)
        assert ms_migrate(root, "server", "start", **copy).returncode == 0  # waits for the fresh one
        assert server_pid() != first
    finally:
        ms_migrate(root, "server", "stop", **copy)
        shutil.rmtree(root, ignore_errors=True)
