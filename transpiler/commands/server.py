"""``ms-migrate server start|stop|status``: the warm server that
``convert --server`` (or $MS_MIGRATE_SERVER=1) uses (transpiler.server)."""

from __future__ import annotations

import sys
import time

START_WAIT = 120.0  # seconds to wait for a new server to answer (it imports and converts once first)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("server", help="start, stop or show the warm server for single-file converts")
    parser.add_argument("action", choices=("start", "stop", "status"))
    parser.add_argument("--idle-timeout", type=float, default=None, metavar="SECONDS",
                        help="start: exit after this long without a request "
                             "(default: $MS_MIGRATE_SERVER_IDLE_TIMEOUT, else 1800)")
    parser.set_defaults(run=run_server)


def run_server(args) -> int:
    import os

    if os.name != "posix":
        print("ms-migrate: error: the server needs a Unix socket (convert runs in-process here)", file=sys.stderr)
        return 2
    from transpiler.server.client import code_identity, request, spawn

    status = request({"op": "status", **code_identity()}, timeout=30)
    running = status is not None and status.get("fresh")
    if args.action == "status":
        if not running:
            print("ms-migrate: no server running" + (" (it was stale and is exiting)" if status else ""))
            return 1
        print(f"ms-migrate: server running: pid {status['pid']}, code {status['code']}, "
              f"{status['served']} conversions served, exits after {status['idle_timeout']:g} s idle")
        return 0
    if args.action == "stop":
        if status is None:
            print("ms-migrate: no server running")
            return 0
        request({"op": "stop"}, timeout=30)
        print(f"ms-migrate: server stopped (pid {status['pid']})")
        return 0
    if running:
        print(f"ms-migrate: server already running (pid {status['pid']})")
        return 0
    process = spawn(args.idle_timeout)
    deadline = time.monotonic() + START_WAIT
    while time.monotonic() < deadline:
        status = request({"op": "status", **code_identity()}, timeout=30)
        if status is not None and status.get("fresh"):
            print(f"ms-migrate: server started (pid {status['pid']})")
            return 0
        if process.poll() not in (None, 0):
            break  # it failed (0: another server holds the directory and is starting up)
        time.sleep(0.1)
    print("ms-migrate: error: the server did not start", file=sys.stderr)
    return 1
