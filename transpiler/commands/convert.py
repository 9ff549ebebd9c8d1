"""``ms-migrate convert SRC [-o OUT] [--diff] [-j N]``"""

from __future__ import annotations

import os
import sys
import time

from transpiler.batch import UsageError, check_paths, discover, display_path, run, unified_diff
from transpiler.progress import Progress
from transpiler.report import RunReport


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("convert", help="convert a file or a tree from PyTorch to MindSpore")
    parser.add_argument("source", help="a .py file or a directory")
    parser.add_argument("-o", "--output", help="output file or directory (mirrors the input tree)")
    parser.add_argument("--diff", action="store_true", help="print a unified diff; write nothing")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--force", action="store_true", help="overwrite an existing output")
    parser.add_argument("--report", action="append", default=[], metavar="PATH",
                        help="write a report: .json for tools, .md for people (repeatable)")
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB", help="skip matching names")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar, summary only")
    parser.set_defaults(run=run_convert)


def run_convert(args) -> int:
    if not args.diff and not args.output:
        print("ms-migrate: error: convert needs -o OUTPUT or --diff", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print("ms-migrate: error: -j must be at least 1", file=sys.stderr)
        return 2
    target = None if args.diff else args.output
    try:
        check_paths(args.source, target, args.force)
    except UsageError as exc:
        print(f"ms-migrate: error: {exc}", file=sys.stderr)
        return 2
    jobs = discover(args.source, target, tuple(args.exclude))
    if args.diff:
        jobs = [job.__class__(**{**job.__dict__, "want_text": True}) for job in jobs]
    report = RunReport()
    start = time.perf_counter()
    with Progress(len(jobs), enabled=not args.quiet and sys.stderr.isatty()) as progress:

        def on_result(summary):
            report.add(summary)
            progress.advance()
            for diagnostic in summary.diagnostics:
                if diagnostic.severity.value == "error":
                    progress.print(diagnostic.one_line())
            if args.diff:
                text = unified_diff(summary)
                if text:
                    sys.stdout.write(text)

        run(jobs, args.jobs, on_result)
    report.elapsed = time.perf_counter() - start
    for path in args.report:
        report.write(path)
    for line in report.summary_lines():
        print(f"ms-migrate: {line}", file=sys.stderr)
    if target and not args.quiet:
        print(f"ms-migrate: output written to {display_path(os.path.abspath(target))}", file=sys.stderr)
    return 1 if report.failed else 0
