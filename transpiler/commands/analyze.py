"""``ms-migrate analyze SRC [--format text|json|markdown|sarif|html] [-o FILE] [--converted OUT]``"""

from __future__ import annotations

import os
import sys

from transpiler.commands._tree_options import add_tree_arguments, tree_options
from transpiler.config import ConfigError
from transpiler.batch.source_io import write_atomic

_ALIASES = {"md": "markdown", "terminal": "text"}


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "analyze", help="analyse a PyTorch file or tree before migrating: API support, restricted functions, "
        "training tricks")
    parser.add_argument("source", help="a .py file or a directory")
    parser.add_argument("-f", "--format", default="text",
                        help="text (default), json, markdown, sarif or html")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout")
    parser.add_argument("--converted", metavar="OUT_DIR",
                        help="the output of `ms-migrate convert` for SRC: the HTML report shows each file's diff")
    parser.add_argument("--import-timeout", type=float, default=60.0, metavar="SECONDS",
                        help="import the files in a child process to count parameters; 0 disables (default 60)")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour in the text report (default: only on a terminal)")
    add_tree_arguments(parser)
    parser.set_defaults(run=run_analyze)


def run_analyze(args) -> int:
    from transpiler.analyze.formats import formats, render  # not needed by the other commands

    name = _ALIASES.get(args.format, args.format)
    if name not in formats():
        print(f"ms-migrate: error: unknown format {args.format!r}; choose from "
              f"{', '.join(sorted(formats()))}", file=sys.stderr)
        return 2
    if not os.path.exists(args.source):
        print(f"ms-migrate: error: {args.source}: no such file or directory", file=sys.stderr)
        return 2
    if args.converted is not None and not os.path.exists(args.converted):
        print(f"ms-migrate: error: {args.converted}: no such file or directory", file=sys.stderr)
        return 2
    if args.jobs is not None and args.jobs < 1:
        print("ms-migrate: error: -j must be at least 1", file=sys.stderr)
        return 2
    try:
        tree = tree_options(args)  # the same files and workers as convert, from the same configuration
    except ConfigError as exc:
        print(f"ms-migrate: error: {exc}", file=sys.stderr)
        return 2
    from transpiler.analyze.runner import analyze_tree  # heavy: only when this command runs

    project = analyze_tree(args.source, jobs=tree.jobs, excludes=tree.exclusions, converted=args.converted,
                           import_timeout=args.import_timeout, rules=tree.rules)
    to_terminal = args.output is None and sys.stdout.isatty()
    color = args.color == "always" or (args.color == "auto" and to_terminal and not os.environ.get("NO_COLOR"))
    text = render(project, name, color=color)
    if args.output:
        write_atomic(args.output, text.encode("utf-8"))
        print(f"ms-migrate: {name} report written to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 1 if any(f.status == "failed" for f in project.files) else 0
