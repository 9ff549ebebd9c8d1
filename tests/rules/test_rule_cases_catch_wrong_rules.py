"""The execution cases of a rule fail when the rule is wrong.

Each test converts a rule's own execution cases with a sabotaged copy of the
rule (a mistake the rule once had, or an easy one to make) and checks that the
harness reports the difference; the unsabotaged cases pass in
tests/rules/test_execution.py.
"""

from __future__ import annotations

import dataclasses

import pytest

from rewrite_rules.registry import load_rules
from rewrite_rules.spec import Arg, Drop
from tests.conversion import with_rule
from transpiler.proof.harness import WorkerPool, collect_cases, run_case

CASES = collect_cases()


def _case(api: str, text: str):
    """The first execution case of ``api`` whose torch snippet contains ``text``."""
    found = [case for case in CASES if case.api == api and text in case.example.torch]
    assert found, f"no execution case of {api} contains {text!r}"
    return found[0]


@pytest.fixture(scope="module")
def pool():
    workers = WorkerPool()
    yield workers
    workers.close()


def _problems(pool, rules, case) -> list[str]:
    _, problems = run_case(pool, case, rules)
    return problems


def _method_rule(rules, name: str, **changes):
    """A copy of ``rules`` with the method rule ``name`` changed."""
    methods = {key: [dataclasses.replace(r, **changes) if key == name else r for r in group]
               for key, group in rules.methods.items()}
    return dataclasses.replace(rules, methods=methods)


def _with_args(api: str, **changes):
    return lambda rules: with_rule(rules, api, args={**rules.calls[api].args, **changes})


# mistake -> (the sabotaged rule set, the case that must catch it: api, text of its snippet)
SABOTAGE = {
    # MindSpore's Adam (eps inside the bias correction): the rule before its fix
    "plain MindSpore Adam": (lambda rules: with_rule(rules, "torch.optim.Adam", hook=None),
                             ("torch.optim.Adam", "Adam([w, b], 0.05, (0.8, 0.99), 1e-4")),
    "Adamax betas dropped": (_with_args("torch.optim.Adamax", betas=Drop()),
                             ("torch.optim.Adamax", "betas=(0.5, 0.99)")),
    "ConstantLR factor dropped": (_with_args("torch.optim.lr_scheduler.ConstantLR", factor=Drop()),
                                  ("torch.optim.lr_scheduler.ConstantLR", "ConstantLR(opt, 0.5, 3)")),
    "DataLoader drop_last ignored": (_with_args("torch.utils.data.DataLoader", drop_last=Drop()),
                                     ("torch.utils.data.DataLoader", "drop_last=True")),
    # nn.Dropout's first MindSpore parameter is keep_prob
    "Dropout p passed as keep_prob": (_with_args("torch.nn.Dropout", p=Arg(to="keep_prob", explicit=True)),
                                      ("torch.nn.Dropout", "nn.Dropout(0.3)\nlayer.train()")),
    # parameters_and_names() also yields BatchNorm's moving statistics: the rule before its fix
    "named_parameters as parameters_and_names": (
        lambda rules: _method_rule(rules, "named_parameters", hook=None, rename="parameters_and_names"),
        ("torch.nn.Module.named_parameters", "class Norm")),
}


@pytest.mark.parametrize("mistake", sorted(SABOTAGE))
def test_a_wrong_rule_fails_its_cases(pool, mistake):
    sabotage, (api, text) = SABOTAGE[mistake]
    case = _case(api, text)
    assert _problems(pool, None, case) == [], f"{case.case_id} fails with the real rule"
    assert _problems(pool, sabotage(load_rules()), case), f"{mistake}: {case.case_id} still passes"
