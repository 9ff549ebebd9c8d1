"""``ms-migrate lsp``: the language server for editors, on stdio (transpiler.lsp)."""

from __future__ import annotations

import sys


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "lsp", help="run the language server on stdin/stdout (diagnostics, hover, convert code actions) "
        "for an editor to start")
    parser.add_argument("--stdio", action="store_true",
                        help="talk over stdin/stdout (the default and only transport; accepted as editors pass it)")
    parser.set_defaults(run=run_lsp)


def run_lsp(args) -> int:
    try:
        from transpiler.lsp.server import serve
    except ImportError as exc:  # pygls is a dependency; a stripped environment says what is missing
        print(f"ms-migrate: error: the language server needs pygls ({exc}); pip install pygls", file=sys.stderr)
        return 2
    return serve()
