"""Random replay (transpiler/proof/replay*.py): torch's draws reach MindSpore's
random ops, so both sides compute the same values; a wrong parameter still
shows; draws that do not correspond fail loudly, naming both sides."""

from __future__ import annotations

import numpy as np
import pytest

from transpiler.proof.harness.cases import _split
from transpiler.proof.harness.values import compare as compare_values
from transpiler.proof.harness.worker import Job
from transpiler.proof import replay
from transpiler.proof.replay import ReplayMismatch, Tape

torch = pytest.importorskip("torch")
ms = pytest.importorskip("mindspore")
F = torch.nn.functional
ops = ms.ops
init = pytest.importorskip("mindspore.common.initializer")
replay.install()

X = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
X4 = np.random.default_rng(1).standard_normal((2, 3, 4, 5)).astype(np.float32)
P = np.random.default_rng(2).uniform(0.1, 1.0, (3, 4)).astype(np.float32)
W = np.zeros((16, 8, 3, 3), np.float32)


def _t(a):
    return torch.from_numpy(a.copy())


def _m(a):
    return ms.Tensor(a.copy())


def _numpy(value) -> np.ndarray:
    if hasattr(value, "detach"):
        return value.detach().double().numpy()
    return value.asnumpy().astype(np.float64)


def _replayed(torch_fn, ms_fn, seed=0):
    tape = Tape(seed)
    torch.manual_seed(seed)
    with tape.recording():
        expected = torch_fn()
    with tape.replaying_mindspore():
        actual = ms_fn()
    return _numpy(expected), _numpy(actual)


PAIRS = {
    "randn": (lambda: torch.randn(3, 4), lambda: ops.randn(3, 4)),
    "rand": (lambda: torch.rand(3, 4), lambda: ops.rand(3, 4)),
    "randn_like": (lambda: torch.randn_like(_t(X)), lambda: ops.randn_like(_m(X))),
    "normal_": (lambda: _t(X).normal_(0.5, 2.0), lambda: ops.randn_like(_m(X)) * 2.0 + 0.5),
    "torch.normal": (lambda: torch.normal(1.0, 3.0, (3, 4)), lambda: ops.normal((3, 4), 1.0, 3.0)),
    "uniform_": (lambda: _t(X).uniform_(-2, 3), lambda: ops.rand_like(_m(X)) * 5 - 2),
    "bernoulli_": (lambda: _t(X).bernoulli_(0.3), lambda: (ops.rand_like(_m(X)) < 0.3).astype(ms.float32)),
    "exponential_": (lambda: _t(X).exponential_(2.0), lambda: -(1 - ops.rand_like(_m(X))).log() / 2.0),
    "randint": (lambda: torch.randint(2, 9, (3, 4)), lambda: ops.randint(2, 9, (3, 4))),
    "randperm": (lambda: torch.randperm(20), lambda: ops.randperm(20)),
    "multinomial": (lambda: torch.multinomial(_t(P), 5, True), lambda: ops.multinomial(_m(P), 5, True)),
    "multinomial_no_replacement": (lambda: torch.multinomial(_t(P), 3), lambda: ops.multinomial(_m(P), 3, False)),
    "dropout": (lambda: F.dropout(_t(X), 0.3), lambda: ops.dropout(_m(X), 0.3)),
    "dropout2d": (lambda: F.dropout2d(_t(X4), 0.3), lambda: ops.dropout2d(_m(X4), 0.3)),
    "dropout1d": (lambda: F.dropout1d(_t(X4[0]), 0.3), lambda: ops.dropout1d(_m(X4[0]), 0.3)),
    "rrelu": (lambda: F.rrelu(_t(X), 0.1, 0.3, True), lambda: ops.rrelu(_m(X), 0.1, 0.3)),
    "gumbel_softmax": (lambda: F.gumbel_softmax(_t(X), 0.5), lambda: ops.gumbel_softmax(_m(X), 0.5)),
    "xavier_uniform_": (lambda: torch.nn.init.xavier_uniform_(_t(W), 2.0),
                        lambda: init.initializer(init.XavierUniform(gain=2.0), W.shape, ms.float32).init_data()),
    "kaiming_normal_": (lambda: torch.nn.init.kaiming_normal_(_t(W), 0.2, "fan_out"),
                        lambda: init.initializer(init.HeNormal(negative_slope=0.2, mode="fan_out"), W.shape,
                                                 ms.float32).init_data()),
    "trunc_normal_": (lambda: torch.nn.init.trunc_normal_(_t(W), 0.5, 2.0, -1.0, 1.5),
                      lambda: init.initializer(init.TruncatedNormal(sigma=2.0, mean=0.5, a=-1.0, b=1.5), W.shape,
                                               ms.float32).init_data()),
    "orthogonal_": (lambda: torch.nn.init.orthogonal_(_t(np.zeros((4, 6), np.float32)), 2.0),
                    lambda: init.initializer(init.Orthogonal(gain=2.0), (4, 6), ms.float32).init_data()),
    "sparse_": (lambda: torch.nn.init.sparse_(_t(np.zeros((10, 12), np.float32)), 0.3, 0.5),
                lambda: init.initializer(init.Sparse(sparsity=0.3, sigma=0.5), (10, 12), ms.float32).init_data()),
}


@pytest.mark.parametrize("name", PAIRS)
def test_each_random_op_replays(name):
    expected, actual = _replayed(*PAIRS[name])
    np.testing.assert_allclose(actual, expected, rtol=1e-3 if name == "exponential_" else 1e-6, atol=1e-6)


# the same op with one parameter changed on the MindSpore side: other values
WRONG = {
    "normal std": (lambda: _t(X).normal_(0.5, 2.0), lambda: ops.randn_like(_m(X)) * 3.0 + 0.5),
    "bernoulli p": (lambda: _t(np.zeros((50, 40), np.float32)).bernoulli_(0.3),
                    lambda: (ops.rand_like(_m(np.zeros((50, 40), np.float32))) < 0.35).astype(ms.float32)),
    "randint high": (lambda: torch.randint(0, 10, (200,)), lambda: ops.randint(0, 11, (200,))),
    "multinomial probabilities": (lambda: torch.multinomial(_t(P), 50, True),
                                  lambda: ops.multinomial(_m(P[::-1].copy()), 50, True)),
    "dropout keep_prob": (lambda: F.dropout(_t(X), 0.3), lambda: ops.dropout(_m(X), 0.7)),
    "xavier gain": (lambda: torch.nn.init.xavier_uniform_(_t(W), 2.0),
                    lambda: init.initializer(init.XavierUniform(gain=1.0), W.shape, ms.float32).init_data()),
}


@pytest.mark.parametrize("name", WRONG)
def test_a_wrong_parameter_gives_other_values(name):
    expected, actual = _replayed(*WRONG[name])
    assert not np.allclose(actual, expected, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("torch_fn, ms_fn, message", [
    (lambda: torch.randn(3, 4), lambda: ops.rand(3, 4),
     "MindSpore UniformReal asks for a uniform draw of shape (3, 4); torch's draw #1 is torch.randn "
     "(normal draw of shape (3, 4))"),
    (lambda: torch.randn(3, 4), lambda: ops.randn(4, 4),
     "MindSpore StandardNormal asks for a normal draw of shape (4, 4); torch's draw #1 is torch.randn"),
    (lambda: torch.randn(3, 4), lambda: (ops.randn(3, 4), ops.randn(2)),
     "MindSpore StandardNormal asks for a normal draw of shape (2,), but torch made only 1 random draw"),
    (lambda: (torch.randn(3, 4), torch.rand(2)), lambda: ops.randn(3, 4),
     "MindSpore never asked for torch's draw #2 torch.rand (uniform draw of shape (2,))"),
])
def test_draws_that_do_not_correspond_fail_naming_both_sides(torch_fn, ms_fn, message):
    with pytest.raises(ReplayMismatch) as error:
        _replayed(torch_fn, ms_fn)
    assert message in str(error.value)


def test_patched_ops_are_unchanged_without_a_tape():
    assert not torch.equal(torch.randn(5), torch.randn(5))
    assert ops.randn(3).shape == (3,) and not np.array_equal(ops.rand(8).asnumpy(), ops.rand(8).asnumpy())
    assert F.dropout(torch.ones(10), 0.0, True).sum() == 10


def test_torch_replay_gives_the_recorded_values_and_notes_what_it_cannot_replay():
    tape = Tape(0)

    def model(x):
        return F.dropout(x, 0.5) + torch.randn_like(x), torch.poisson(torch.full((50,), 3.0))

    x = _t(X)
    with tape.recording():
        first, noisy = model(x)
    torch.manual_seed(123)
    with tape.replaying_torch():
        again, noisy_again = model(x)
    assert torch.equal(first, again)
    assert not torch.equal(noisy, noisy_again) and tape.unreplayable == ["torch.poisson"]
    with tape.replaying_torch():
        model(x)
        torch.randn(2)
    assert "the torch run makes more random draws than recorded (torch.randn)" in tape.torch_divergence


def test_dropout_gradients_match():
    w = np.random.default_rng(3).standard_normal((4, 5)).astype(np.float32)
    tape = Tape(0)
    x = _t(X).requires_grad_()
    with tape.recording():
        (F.dropout(x, 0.4) * _t(w)).sum().backward()

    def forward(m):
        return (ops.dropout(m, 0.4) * _m(w)).sum()

    with tape.replaying_mindspore():
        grad = ms.grad(forward)(_m(X))
    np.testing.assert_allclose(grad.asnumpy(), x.grad.numpy(), rtol=1e-6)


# --- in the execution harness -------------------------------------------------------------------------

_TORCH_IMPORTS = "import torch\nimport torch.nn as nn\n"
_MS_IMPORTS = "import mindspore\nfrom mindspore import nn, ops\nfrom mindspore.common.initializer import *\n"


@pytest.fixture(scope="module")
def worker_pool():
    from transpiler.proof.harness import WorkerPool

    pool = WorkerPool()
    yield pool
    pool.close()


def _run(pool, torch_code, ms_code, inputs=None):
    job = Job("replay-test", _TORCH_IMPORTS, _split(torch_code)[1], _MS_IMPORTS, _split(ms_code)[1],
              inputs or {}, ("result",), 5)
    return pool.run(job)


def _problems(outcome):
    assert outcome.ok, outcome.error
    return compare_values(outcome.torch["result"], outcome.mindspore["result"], rtol=0.0, atol=0.0, dtype_map={})


def test_harness_replays_draws(worker_pool):
    outcome = _run(worker_pool, "w = torch.zeros(20, 30)\nnn.init.normal_(w, 0.5, 2.0)\nresult = w + torch.randn(20, 30)\n",
                   "w = ops.zeros((20, 30))\nops.assign(w, initializer(Normal(sigma=2.0, mean=0.5), w.shape, w.dtype)"
                   ".init_data())\nresult = w + ops.randn(20, 30)\n")
    assert _problems(outcome) == []


def test_harness_drops_the_draws_of_a_layer_whose_weights_it_copies(worker_pool):
    outcome = _run(worker_pool, "layer = nn.Linear(3, 2)\nresult = layer(x) + torch.rand(2)\n",
                   "layer = nn.Dense(3, 2)\nresult = layer(x) + ops.rand(2)\n", {"x": "randn(4, 3)"})
    assert outcome.ok, outcome.error
    assert compare_values(outcome.torch["result"], outcome.mindspore["result"], rtol=1e-6, atol=1e-6, dtype_map={}) == []


def test_harness_sabotaged_initializer_fails(worker_pool):
    """Sabotage: Normal's sigma and mean swapped."""
    outcome = _run(worker_pool, "w = torch.zeros(20, 30)\nnn.init.normal_(w, 0.5, 2.0)\nresult = w\n",
                   "w = ops.zeros((20, 30))\nops.assign(w, initializer(Normal(sigma=0.5, mean=2.0), w.shape, w.dtype)"
                   ".init_data())\nresult = w\n")
    assert any("values differ" in p for p in _problems(outcome))


def test_harness_draws_that_do_not_correspond_fail_the_case(worker_pool):
    outcome = _run(worker_pool, "result = torch.randn(2, 3)\n", "result = ops.rand(2, 3)\n")
    assert not outcome.ok and outcome.side == "mindspore"
    assert "MindSpore UniformReal asks for a uniform draw of shape (2, 3); torch's draw #1 is torch.randn" in outcome.error
    outcome = _run(worker_pool, "result = torch.randn(2, 3)\n", "result = ops.zeros((2, 3))\n")
    assert not outcome.ok and "random draws do not correspond: MindSpore never asked for torch's draw #1" in outcome.error


def test_torch_distributions_sample_through_the_recorded_ops():
    """VAEs and diffusion models sample through torch.distributions: the draws
    are recorded through the ops it calls (normal_, torch.normal, multinomial,
    bernoulli), Gamma-family sampling is noted as not replayable."""
    D = torch.distributions
    probs = np.array([[0.2, 0.5, 0.3], [0.6, 0.3, 0.1]], np.float32)
    mu, sigma = _t(X), _t(np.abs(X) + 0.5)

    def sample():
        return (D.Normal(mu, sigma).rsample(), D.Categorical(probs=_t(probs)).sample((4,)),
                D.Bernoulli(probs=torch.full((3, 2), 0.3)).sample())

    def mindspore_sample():
        return (_m(X) + ops.randn_like(_m(X)) * _m(np.abs(X) + 0.5), ops.multinomial(_m(probs), 4, True).T,
                (ops.rand(3, 2) < 0.3).astype(ms.float32))

    tape = Tape(0)
    with tape.recording():
        expected = sample()
        D.Gamma(torch.ones(3), torch.ones(3)).sample()
    assert [d.source for d in tape.draws] == ["Tensor.normal_", "torch.multinomial", "torch.bernoulli"]
    assert tape.unreplayable == ["torch._standard_gamma"]
    with tape.replaying_mindspore():
        actual = mindspore_sample()
    for e, a in zip(expected, actual):
        np.testing.assert_allclose(_numpy(a), _numpy(e), rtol=1e-6, atol=1e-6)
