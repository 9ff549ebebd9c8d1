"""``ms-migrate rules --check``: a project's own rules (rule files, rules of
installed packages) proven the way ms-migrate's are.

Every ``Example`` of those rules is converted with the full rule set: golden
text (``mindspore=``) must match and a ``marked=`` case must carry its marker;
an example with ``inputs`` runs under both frameworks in the execution harness
(``transpiler.proof.harness``) and its results are compared. A converting rule
without an execution case is not proven, and fails the check as it fails
ms-migrate's own test suite.
"""

from __future__ import annotations

from dataclasses import dataclass

from rewrite_rules.registry import RuleSet, converts
from transpiler.convert.pipeline import convert_source
from transpiler.convert.diagnostics import MARKER_PREFIX
from transpiler.proof.harness import WorkerPool, collect_cases, report, run_case
from transpiler.proof.harness.cases import PRELUDE, _split

_BUILT_IN = "rewrite_rules."


@dataclass(frozen=True)
class Check:
    name: str  # what was checked: "mylib.layers.ConvBNAct-0 (golden text)"
    origin: str  # the rule file or entry point
    problem: str = ""  # empty: passed

    @property
    def ok(self) -> bool:
        return not self.problem


def project_rules(rules: RuleSet) -> list[tuple[object, str]]:
    """(rule, origin) of every rule that does not come with ms-migrate."""
    seen: set[int] = set()
    found = []
    all_rules = [*rules.calls.values(), *rules.attributes.values(), *(r for rs in rules.methods.values() for r in rs)]
    for rule in all_rules:
        origin = _origin(rules, rule)
        if id(rule) in seen or origin.startswith(_BUILT_IN):
            continue
        seen.add(id(rule))
        found.append((rule, origin))
    return found


def check_rules(rules: RuleSet, pool: WorkerPool, on_check=None) -> list[Check]:
    """Check every example of the project's rules; ``on_check(check)`` sees each as it is done."""
    checks: list[Check] = []

    def done(check: Check) -> None:
        checks.append(check)
        if on_check is not None:
            on_check(check)

    ours = project_rules(rules)
    for rule, origin in ours:
        for index, example in enumerate(rule.examples):
            if example.mindspore is not None or example.marked is not None:
                done(Check(f"{rule.torch}-{index} (golden text)", origin, _text_problem(rules, example)))
        if converts(rule) and not any(example.runs for example in rule.examples):
            done(Check(f"{rule.torch} (execution)", origin,
                       "no execution case: give an Example inputs={...} so that it runs under both frameworks"))
    origins = {origin for _, origin in ours}
    for case in collect_cases(rules):
        if case.module not in origins:
            continue
        prepared, problems = run_case(pool, case, rules)
        done(Check(f"{case.case_id} (execution)", case.module, report(prepared, problems) if problems else ""))
    return checks


def _text_problem(rules: RuleSet, example) -> str:
    result = convert_source(PRELUDE + example.torch, "<example>", rules)
    if result.output is None:
        return "conversion failed: " + "; ".join(d.one_line() for d in result.diagnostics)
    converted = "".join(_split(result.output)[1])
    if example.marked is not None:
        markers = [line for line in converted.splitlines() if MARKER_PREFIX in line]
        if not any(example.marked in line for line in markers):
            return f"expected a marker containing {example.marked!r}; got:\n{converted.rstrip()}"
    if example.mindspore is not None and converted.strip() != example.mindspore.strip():
        return f"expected:\n{example.mindspore.strip()}\ngot:\n{converted.strip()}"
    return ""


def _origin(rules: RuleSet, rule) -> str:
    key = rule.torch if not hasattr(rule, "receiver") else f"method:{rule.name}:{rule.receiver}"
    return rules.modules.get(key) or rules.modules.get(rule.torch, "")
