"""Steps of ``ms-migrate convert`` that run after the files are written:
``--emit-tests`` (per-Cell pytest files) and ``--check-imports`` (import each
converted module in a child process). Their findings go into the run report
as diagnostics."""

from __future__ import annotations

import os
import sys

from transpiler.batch.runner import display_path
from transpiler.proof.check import as_diagnostics, check_imports
from transpiler.proof.emit_tests import emit_tests


def after_write(args, jobs, report) -> int:
    """Returns the number of files whose import failed."""
    written = [job for job in jobs if job.kind == "python" and job.target and os.path.exists(job.target)]
    if getattr(args, "emit_tests", False):
        for job in written:
            diagnostics = emit_tests(job.source, job.target, job.display)
            report.diagnostics.extend(diagnostics)
            for diagnostic in diagnostics:
                if not args.quiet or diagnostic.severity.value != "info":
                    print(f"ms-migrate: {diagnostic.one_line()}", file=sys.stderr)
    if not getattr(args, "check_imports", False):
        return 0
    problems = check_imports([job.target for job in written], timeout=args.check_timeout)
    report.diagnostics.extend(as_diagnostics(problems, display_path))
    for problem in problems:
        print(f"ms-migrate: {display_path(problem.path)}:{problem.line}: import failed: {problem.message}",
              file=sys.stderr)
    print(f"ms-migrate: check: {len(written) - len({p.path for p in problems})}/{len(written)} converted modules "
          "import cleanly", file=sys.stderr)
    return len({p.path for p in problems})
