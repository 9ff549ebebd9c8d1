"""Every runnable rule example, run in both frameworks and compared
(see transpiler/proof/harness/__init__.py for how)."""

from __future__ import annotations

import pytest

from transpiler.proof.harness import WorkerPool, collect_cases, report, run_case

CASES = collect_cases()


@pytest.fixture(scope="session")
def worker_pool():
    pool = WorkerPool()  # one worker per pytest (xdist) process
    yield pool
    pool.close()


@pytest.mark.parametrize("case", CASES, ids=[c.case_id for c in CASES])
def test_case(worker_pool, case):
    prepared, problems = run_case(worker_pool, case)
    if problems:
        pytest.fail(report(prepared, problems), pytrace=False)


def test_there_are_cases():
    assert len(CASES) > 0


# -- the harness itself ----------------------------------------------------

from transpiler.proof.harness.cases import PRELUDE, _split  # noqa: E402
from transpiler.proof.harness.inputs import InputSpecError, build_all  # noqa: E402
from transpiler.proof.harness.values import compare  # noqa: E402
from transpiler.proof.harness.worker import Job  # noqa: E402

_TORCH_IMPORTS = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
_MS_IMPORTS = "import mindspore\nfrom mindspore import nn, ops\n"


def _job(torch_code: str, ms_code: str, inputs: dict, results=("result",)) -> Job:
    return Job("self-test", _TORCH_IMPORTS, _split(torch_code)[1], _MS_IMPORTS, _split(ms_code)[1], inputs, results, 7)


def _differences(outcome, **tolerances):
    assert outcome.ok, outcome.error
    options = {"rtol": 1e-5, "atol": 1e-6, "dtype_map": {}, **tolerances}
    return [p for name in outcome.torch for p in compare(outcome.torch[name], outcome.mindspore[name], **options)]


def test_inputs_are_deterministic_and_literal_only():
    specs = {"x": "randn(2, 3)", "i": "randint(0, 5, (4,))", "t": "tensor([[1, 2]])", "b": "bool(3)", "k": "3"}
    first, again = build_all(specs, 11), build_all(specs, 11)
    assert (first["x"] == again["x"]).all() and first["x"].dtype.name == "float32"
    assert first["i"].dtype.name == "int64" and first["t"].dtype.name == "int64" and first["b"].dtype.name == "bool"
    assert first["k"] == 3
    with pytest.raises(InputSpecError):
        build_all({"x": "__import__('os').getcwd()"}, 0)


def test_value_difference_is_reported(worker_pool):
    outcome = worker_pool.run(_job("result = x + 1\n", "result = x + 2\n", {"x": "randn(2, 3)"}))
    (problem,) = _differences(outcome)
    assert "values differ" in problem and "max abs diff 1" in problem


def test_dtype_difference_needs_dtype_map(worker_pool):
    outcome = worker_pool.run(_job("result = x.long()\n", "result = x.astype(mindspore.int32)\n", {"x": "randn(3)"}))
    assert any("dtype" in p for p in _differences(outcome))
    assert _differences(outcome, dtype_map={"int64": "int32"}) == []


def test_tuples_and_scalars_are_compared(worker_pool):
    outcome = worker_pool.run(
        _job("result = (x.shape, x.sum().item(), True)\n", "result = (x.shape, x.sum().item(), False)\n", {"x": "ones(2)"})
    )
    assert _differences(outcome) == ["result[2]: torch gives True, MindSpore gives False"]


def test_weights_are_copied_between_construction_and_use(worker_pool):
    outcome = worker_pool.run(
        _job(
            "layer = nn.Linear(3, 4)\nresult = layer(x)\n",
            "layer = nn.Dense(3, 4)\nresult = layer(x)\n",
            {"x": "randn(2, 3)"},
        )
    )
    assert _differences(outcome) == []


def test_a_crashing_case_fails_alone(worker_pool):
    crash = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)\nresult = 1\n"
    outcome = worker_pool.run(_job("result = 1\n", crash, {}))
    assert not outcome.ok and "died" in outcome.error
    after = worker_pool.run(_job("result = x * 2\n", "result = x * 2\n", {"x": "randn(2)"}))
    assert _differences(after) == []


def test_a_mindspore_error_surfaces_in_its_own_case(worker_pool):
    outcome = worker_pool.run(_job("result = x\n", "result = ops.reshape(x, (7,))\n", {"x": "randn(2, 3)"}))
    assert not outcome.ok and outcome.side == "mindspore"


REFERENCE_CASES = [c for c in CASES if c.example.torch_reference is not None]


@pytest.mark.parametrize("case", REFERENCE_CASES, ids=[c.case_id for c in REFERENCE_CASES])
def test_torch_still_cannot_run_a_reference_case(worker_pool, case):
    """A case compared with torch's documented result (``Example.torch_reference``) is one
    torch cannot run here; its notes quote the error. Once torch runs it, compare with torch."""
    torch_imports, torch_statements = _split(PRELUDE + case.example.torch + "\n")
    job = Job(case.case_id, torch_imports, torch_statements, _MS_IMPORTS, ("result = None\n",),
              dict(case.example.inputs), ("result",), case.seed)
    outcome = worker_pool.run(job)
    assert not outcome.ok and outcome.side == "torch", "torch runs it now: drop torch_reference"
    error = case.example.notes.split(": ", 1)[1]
    assert error in outcome.error, outcome.error


def test_reference_cases_exist():
    assert {c.api for c in REFERENCE_CASES} >= {"torch.cuda.synchronize", "torch.Tensor.pin_memory"}
