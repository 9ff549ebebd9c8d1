"""Run the execution cases without pytest and print figures.

    python -m transpiler.proof.harness                 # every case
    python -m transpiler.proof.harness -k torch.cat    # cases whose id contains the text
    python -m transpiler.proof.harness -m torch_functions   # cases of rule modules whose name contains the text
    python -m transpiler.proof.harness -v              # print every failure in full
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from transpiler.proof.harness import WorkerPool, collect_cases, report, run_case


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m transpiler.proof.harness")
    parser.add_argument("-k", action="append", default=[], help="only case ids containing this text")
    parser.add_argument("-m", "--module", action="append", default=[], help="only cases of rule modules containing this text")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each failure in full")
    args = parser.parse_args()
    started = time.perf_counter()
    cases = [
        c
        for c in collect_cases()
        if (not args.k or any(k in c.case_id for k in args.k)) and (not args.module or any(m in c.module for m in args.module))
    ]
    pool = WorkerPool()
    failed: Counter[str] = Counter()
    passed = 0
    try:
        for case in cases:
            prepared, problems = run_case(pool, case)
            if problems:
                failed[case.api] += 1
                if args.verbose:
                    print(report(prepared, problems), end="\n\n")
                else:
                    last = [line for line in problems[0].splitlines() if line.strip()][-1]
                    print(f"FAIL {case.case_id}: {last.strip()[:200]}")
            else:
                passed += 1
    finally:
        pool.close()
    elapsed = time.perf_counter() - started
    apis = {c.api for c in cases}
    print(
        f"{len(cases)} cases of {len(apis)} APIs in {elapsed:.1f}s "
        f"({pool.started} worker start(s)); APIs with failures: {len(failed)}"
    )
    print(f"{passed} passed, {len(cases) - passed} failed")
    return 0 if passed == len(cases) else 1


if __name__ == "__main__":
    raise SystemExit(main())
