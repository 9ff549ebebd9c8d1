"""``ms-migrate convert SRC [-o OUT] [--diff] [--check] [-j N]``

Options come from the command line, then from ``[tool.ms-migrate]`` in the
closest pyproject.toml above the input (transpiler.config), then defaults.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from dataclasses import dataclass

from transpiler.batch.runner import UsageError, check_paths, display_path, run
from transpiler.batch.cache import default_cache_root, open_cache, record_run, runs_directory
from transpiler.batch.written import CHANGES, CONFLICTED, MERGED, REFUSED, bases_directory
from transpiler.commands._tree_options import add_tree_arguments, first, tree_options
from transpiler.config import ConfigError
from transpiler.batch.diffs import DiffWriter, diff_path, file_diff
from transpiler.batch.discovery import Exclusions, discover
from transpiler.batch.progress import Progress
from transpiler.convert.diagnostics import MARKER_PREFIX
from transpiler.convert.formatting import project_line_length
from transpiler.convert.project import with_siblings
from transpiler.batch.report import RunReport


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("convert", help="convert a file or a tree from PyTorch to MindSpore")
    parser.add_argument("source", help="a .py or .ipynb file, or a directory")
    parser.add_argument("-o", "--output", help="output file or directory (mirrors the input tree)")
    parser.add_argument("--diff", action="store_true",
                        help="print a unified diff (applies with git apply / patch -p1 in the input directory); "
                             "write nothing")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour the --diff output (default auto: on a terminal, unless NO_COLOR is set)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if the conversion would change anything (the input, or with -o "
                             "the output), as black --check does; with --diff, print the diff too")
    parser.add_argument("--force", action="store_true",
                        help="write into an existing output that ms-migrate did not write, overwriting its files "
                             "(files it wrote and you edited are merged, never overwritten)")
    parser.add_argument("--report", action="append", metavar="PATH",
                        help="write a report: .json for tools, .md for people (repeatable)")
    parser.add_argument("--keep-outputs", action=argparse.BooleanOptionalAction, default=None,
                        help="notebooks: keep the cells' outputs (default: clear them; they came from torch)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar, summary only")
    parser.add_argument("--emit-tests", action="store_true",
                        help="write next to each converted module a pytest file comparing each Cell with its torch original")
    parser.add_argument("--check-imports", action="store_true",
                        help="after writing, import each converted module in a child process; report errors as path:line")
    parser.add_argument("--check-timeout", type=float, default=60.0, metavar="SECONDS",
                        help="per-module import timeout for --check-imports (default 60)")
    parser.add_argument("--no-cache", action="store_true", help="convert every file again (default: reuse cached results)")
    parser.add_argument("--cache-dir", metavar="DIR",
                        help="keep the cache here (default: the user cache directory, or $MS_MIGRATE_CACHE_DIR)")
    parser.add_argument("--jit", action="store_true",
                        help="compile each converted training step with mindspore.jit, as the migration "
                             "guide's Trainer writes it (@mindspore.jit def train_step: value_and_grad and the "
                             "optimizer; the optimizer stays outside where clipping, loss scaling or a changing "
                             "learning rate sit between them): several times faster on CPU after seconds of "
                             "compilation (benchmarks/README.md); the forward pass must compile in graph mode. "
                             "A step function called once a batch gets its compiled step from a cached factory; "
                             "one reading objects it makes itself stays uncompiled (the report says so)")
    parser.add_argument("--server", action="store_true",
                        help="convert a single file through a warm ms-migrate server, started in the background "
                             "when none runs (as $MS_MIGRATE_SERVER=1 does; see `ms-migrate server`)")
    add_tree_arguments(parser)
    parser.set_defaults(run=run_convert)


@dataclass(frozen=True)
class Settings:
    """The options of one run: command line over configuration over defaults."""

    jobs: int
    exclusions: Exclusions
    reports: tuple[str, ...]
    cache_root: str
    keep_outputs: bool
    rules: tuple[str, ...]  # the project's rule files
    config_path: str | None  # the pyproject.toml these came from
    line_length: int  # black's, as the project sets it ([tool.black] line-length)


def settings_for(args) -> Settings:
    tree = tree_options(args)
    config = tree.config
    reports = tuple(first(args.report, config.report, ()))
    cache_root = first(args.cache_dir, config.cache_dir, default_cache_root())
    own = frozenset(os.path.abspath(path) for path in (*reports, cache_root))  # written into the tree, maybe
    return Settings(
        jobs=tree.jobs,
        exclusions=dataclasses.replace(tree.exclusions, own=own),
        reports=reports,
        cache_root=cache_root,
        keep_outputs=first(args.keep_outputs, config.keep_outputs, False),
        rules=tree.rules,
        config_path=config.path,
        line_length=project_line_length(args.source),
    )


def _cache_for(args, settings: Settings, target):
    """Results are cached for tree conversions (and wherever --cache-dir says)."""
    if args.no_cache or target is None:
        return None
    if not (args.cache_dir or os.path.isdir(args.source)):
        return None
    try:
        options = f"keep_outputs={settings.keep_outputs} line_length={settings.line_length}" + (" jit" if args.jit else "")
        return open_cache(settings.cache_root, options=options, rules=settings.rules)
    except OSError as exc:  # a read-only home, say: the conversion does not need the cache
        print(f"ms-migrate: warning: converting without a cache: {settings.cache_root}: {exc.strerror or exc}",
              file=sys.stderr)
        return None


def _usage_problem(args) -> str | None:
    if not args.diff and not args.output and not args.check:
        return "convert needs -o OUTPUT, --diff or --check"
    if args.jobs is not None and args.jobs < 1:
        return "-j must be at least 1"
    if args.check and (args.check_imports or args.emit_tests):
        return "--check writes nothing: --check-imports and --emit-tests need the files written"
    return None


def run_convert(args) -> int:
    problem = _usage_problem(args)
    if problem:
        print(f"ms-migrate: error: {problem}", file=sys.stderr)
        return 2
    target = None if args.diff else args.output
    try:
        settings = settings_for(args)
        check_paths(args.source, target, args.force, settings.cache_root)
    except (UsageError, ConfigError) as exc:
        print(f"ms-migrate: error: {exc}", file=sys.stderr)
        return 2
    jobs = with_siblings(args.source, discover(args.source, target, settings.exclusions))
    if os.path.isdir(args.source) and not any(job.kind != "copy" for job in jobs):
        print(f"ms-migrate: error: {args.source}: no Python files to convert (.py, .ipynb)"
              + (f"; {len(jobs)} other file{'s' * (len(jobs) != 1)}" if jobs else ": the directory is empty"),
              file=sys.stderr)
        return 2
    cache = _cache_for(args, settings, target)
    bases = bases_directory(runs_directory(settings.cache_root)) if target else None
    jobs = [dataclasses.replace(job, want_text=args.diff, cache=cache, keep_outputs=settings.keep_outputs,
                                rules=settings.rules, bases=bases, force=args.force, dry_run=args.check,
                                line_length=settings.line_length, jit_steps=args.jit, runtime_settings=True)
            for job in jobs]
    diff_root = os.path.abspath(args.source) if os.path.isdir(args.source) else None
    diffs = DiffWriter(args.color) if args.diff else None
    report = RunReport()
    done = {"files": 0, "cached": 0}
    would_change: list[str] = []
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
            if summary.written in (MERGED, CONFLICTED) and not args.check:
                progress.print(f"ms-migrate: {summary.target}: {summary.note}")
            if args.check and _would_change(summary, target):
                would_change.append(summary.target or summary.display)
                what = {MERGED: "would merge your edits into", CONFLICTED: "would conflict with your edits in"}
                progress.print(f"ms-migrate: {what.get(summary.written, 'would convert' if target is None else 'would write')}"
                               f" {summary.target or summary.display}")
            if diffs is not None and summary.original is not None and summary.output is not None:
                diffs.write(file_diff(summary.original, summary.output, diff_path(summary.display, diff_root)))

        try:
            run(jobs, settings.jobs, on_result)
        except KeyboardInterrupt:
            interrupted = True
    if interrupted:
        _remember(args, settings, target)
        return _interrupted(report, done, len(jobs), cache is not None)
    import_failures = 0
    if target and not args.check and (args.emit_tests or args.check_imports):
        from transpiler.batch.post_convert import after_write

        import_failures = after_write(args, jobs, report)
    report.elapsed = time.perf_counter() - start
    for path in settings.reports:
        report.write(path)
    _print_summary(args, report, settings, done, target, would_change)
    _remember(args, settings, target)
    if report.failed or report.refused or report.conflicted or import_failures:
        return 1
    return 1 if args.check and would_change else 0


def _would_change(summary, target) -> bool:
    if target is None:
        return summary.changed
    return summary.written in CHANGES


def _print_summary(args, report: RunReport, settings: Settings, done: dict, target, would_change: list) -> None:
    def say(line: str) -> None:
        print(f"ms-migrate: {line}", file=sys.stderr)

    verb = "not written" if target and not args.check else "not converted"
    for path, reason in report.not_written:
        say(f"{verb}: {path}: {reason}")
    for line in report.summary_lines():
        say(line)
    markers, more = report.marker_lines()
    if markers:
        say(f"marked for manual migration (a {MARKER_PREFIX.strip()} comment above each in the output):")
        for line in markers:
            print(f"  {line}", file=sys.stderr)
        if more:
            see = f"see {settings.reports[0]}" if settings.reports else "--report report.md lists them all"
            print(f"  and {more} more, {see}", file=sys.stderr)
    if done["cached"]:
        say(f"{done['cached']} of {done['files']} files unchanged since the last run (from the cache)")
    if args.check:
        files = done["files"]
        if would_change:
            say(f"check: {len(would_change)} of {files} file{'s' * (files != 1)} would change"
                + (f" in {display_path(os.path.abspath(target))}" if target else "") + "; nothing was written")
        else:
            say(f"check: nothing would change ({files} file{'s' * (files != 1)})")
    elif target and not args.quiet:
        say(f"output written to {display_path(os.path.abspath(target))}")


def _remember(args, settings: Settings, target) -> None:
    """Record the output tree as it is now, so the same command continues into it."""
    if target and not args.check and os.path.isdir(args.source) and os.path.isdir(target):
        record_run(settings.cache_root, args.source, target)


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
