"""Command-line entry point: ``ms-migrate <command> ...``.

Each command is a module in ``transpiler.commands`` with ``add_parser`` and
``run``; they are found by walking that package.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from transpiler import __version__


def _commands():
    import transpiler.commands as package

    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            yield importlib.import_module(f"transpiler.commands.{info.name}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ms-migrate", description="Migrate PyTorch programs to MindSpore.")
    parser.add_argument("--version", action="version", version=f"ms-migrate {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _commands():
        module.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        if argv is None:  # the command line: maybe a warm server converts it (decided before importing the converter)
            from transpiler.server.client import run_through_server, wants_server

            if wants_server(sys.argv[1:]):
                code = run_through_server(sys.argv[1:])
                if code is not None:
                    return code
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "run", None):
            parser.print_help(sys.stderr)
            return 2
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        print("ms-migrate: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
