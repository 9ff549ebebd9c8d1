"""The execution harness: proves rules by running both frameworks.

For every rule example with ``inputs`` set (``Example.runs``):

1. the torch snippet (with the standard prelude) is converted by ms-migrate;
   a conversion that fails, carries a marker or still imports torch fails the case;
2. the inputs are built from their specs (``transpiler.proof.harness.inputs``) with numpy,
   seeded per case, and given as torch tensors to the torch snippet and as
   MindSpore tensors to the converted snippet;
3. both snippets run in a worker process (``transpiler.proof.harness.worker``), statement
   by statement in lockstep: after a statement binds a torch ``nn.Module`` to a
   name, its weights are copied into the MindSpore Cell of the same name.
   Convention for snippets: construct a layer in its own statement
   (``layer = nn.Linear(3, 4)`` then ``result = layer(x)``);
4. every name in ``Example.results`` is compared (``transpiler.proof.harness.values``):
   shape, dtype (torch int64 may be MindSpore int32 only through
   ``Example.dtype_map``) and, with ``compare="values"``, values within
   ``rtol``/``atol``. Results may be tensors, (nested) tuples/lists, Python
   scalars, bools and dtypes.

A worker that crashes or hangs fails only the current case and is replaced; a
worker that saw an exception is replaced too. Run it standalone with
``python -m transpiler.proof.harness [-k TEXT]`` (prints figures), or through pytest
(``tests/rules/test_execution.py``).
"""

from __future__ import annotations

from transpiler.proof.harness.cases import Case, Prepared, collect_cases, prepare, problems_of, report
from transpiler.proof.harness.pool import WorkerPool


def run_case(pool: WorkerPool, case: Case, rules=None) -> tuple[Prepared, list[str]]:
    """Convert (with ``rules``, default: the rule set) and run one case; (the
    prepared case, the problems found)."""
    prepared = prepare(case, rules)
    if prepared.job is None:
        return prepared, [prepared.problem]
    outcome = pool.run(prepared.job)
    return prepared, problems_of(prepared, outcome)


__all__ = ["Case", "WorkerPool", "collect_cases", "report", "run_case"]
