"""``ms-migrate convert SRC [-o OUT] [--diff] [-j N]``"""

from __future__ import annotations

import dataclasses
import os
import sys
import time

from transpiler.batch import UsageError, check_paths, discover, display_path, run, unified_diff
from transpiler.cache import CACHE_DIRNAME, open_cache
from transpiler.progress import Progress
from transpiler.project import with_siblings
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
    parser.add_argument("--emit-tests", action="store_true",
                        help="write next to each converted module a pytest file comparing each Cell with its torch original")
    parser.add_argument("--check", action="store_true",
                        help="after writing, import each converted module in a child process; report errors as path:line")
    parser.add_argument("--check-timeout", type=float, default=60.0, metavar="SECONDS",
                        help="per-module import timeout for --check (default 60)")
    parser.add_argument("--no-cache", action="store_true",
                        help=f"convert every file again (default: reuse results kept in OUTPUT/{CACHE_DIRNAME})")
    parser.add_argument("--cache-dir", metavar="DIR", help=f"keep the cache here instead of OUTPUT/{CACHE_DIRNAME}")
    parser.set_defaults(run=run_convert)


def _cache_for(args, target):
    """Results are cached for tree conversions (and wherever --cache-dir says)."""
    if args.no_cache or target is None:
        return None
    if args.cache_dir:
        return open_cache(args.cache_dir, args.source)
    if os.path.isdir(args.source):
        return open_cache(os.path.join(target, CACHE_DIRNAME), args.source)
    return None


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
    jobs = with_siblings(args.source, discover(args.source, target, tuple(args.exclude)))
    if args.diff:
        jobs = [job.__class__(**{**job.__dict__, "want_text": True}) for job in jobs]
    cache = _cache_for(args, target)
    if cache is not None:
        jobs = [dataclasses.replace(job, cache=cache) for job in jobs]
    report = RunReport()
    done = {"files": 0, "cached": 0}
    interrupted = False
    start = time.perf_counter()
    with Progress(len(jobs), enabled=not args.quiet and sys.stderr.isatty()) as progress:

        def on_result(summary):
            report.add(summary)
            done["files"] += 1
            done["cached"] += summary.cached
            progress.advance()
            for diagnostic in summary.diagnostics:
                if diagnostic.severity.value == "error":
                    progress.print(diagnostic.one_line())
            if args.diff:
                text = unified_diff(summary)
                if text:
                    sys.stdout.write(text)

        try:
            run(jobs, args.jobs, on_result)
        except KeyboardInterrupt:
            interrupted = True
    if interrupted:
        return _interrupted(report, done, len(jobs), cache is not None)
    import_failures = 0
    if target and (args.emit_tests or args.check):
        from transpiler.post_convert import after_write

        import_failures = after_write(args, jobs, report)
    report.elapsed = time.perf_counter() - start
    for path in args.report:
        report.write(path)
    for line in report.summary_lines():
        print(f"ms-migrate: {line}", file=sys.stderr)
    if done["cached"]:
        print(f"ms-migrate: {done['cached']} of {done['files']} files unchanged since the last run (from the cache)",
              file=sys.stderr)
    if target and not args.quiet:
        print(f"ms-migrate: output written to {display_path(os.path.abspath(target))}", file=sys.stderr)
    return 1 if report.failed or import_failures else 0


def _interrupted(report: RunReport, done: dict, total: int, cached: bool) -> int:
    """Ctrl-C: say what was done and how to go on; exit 130 like a shell."""
    print(f"ms-migrate: interrupted after {done['files']} of {total} files "
          "(files that workers had already started were finished)", file=sys.stderr)
    for line in report.summary_lines():
        print(f"ms-migrate: {line}", file=sys.stderr)
    if cached:
        print("ms-migrate: run the same command again to continue: finished files are not converted again",
              file=sys.stderr)
    return 130
