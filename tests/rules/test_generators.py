"""torch.Generator draws: the converted code draws from numpy.random.RandomState
(MindSpore 2.10's generator-taking ops, mint.rand/randn/randint/randperm/
multinomial, have no CPU kernel). The values cannot equal torch's (another
generator), so these tests prove what the program relies on: the same seed gives
the same sequence, consecutive draws differ, and each draw has torch's shape,
dtype and range."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conversion import convert_to, load

SOURCE = '''
import torch


class Batches:
    def __init__(self, n, seed):
        self.n = n
        self.rng = torch.Generator()
        self.rng.manual_seed(seed)

    def draw(self):
        return (torch.randint(self.n - 4, (6,), generator=self.rng),
                torch.randint(3, 9, (2, 3), generator=self.rng, dtype=torch.int32),
                torch.randperm(self.n, generator=self.rng),
                torch.rand(2, 3, generator=self.rng),
                torch.randn((4,), generator=self.rng, dtype=torch.float64))


def chained(seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randperm(10, generator=g)
'''


@pytest.fixture(scope="module")
def sides(tmp_path_factory):
    root = tmp_path_factory.mktemp("generators")
    (root / "torch").mkdir()
    (root / "ms").mkdir()
    source = root / "torch" / "batches.py"
    source.write_text(SOURCE)
    converted = convert_to(source, root / "ms")
    text = converted.read_text()
    assert "import torch" not in text and "TODO(ms-migrate)" not in text, text
    return load(source), load(converted), text


def _arrays(draws):
    return [d.asnumpy() if hasattr(d, "asnumpy") else d.numpy() for d in draws]


def test_the_generator_and_its_draws_are_converted(sides):
    _, _, text = sides
    assert "self.rng = np.random.RandomState()" in text or "self.rng = numpy.random.RandomState()" in text
    assert "self.rng.seed(seed)" in text
    assert "RandomState(seed)" in text  # torch.Generator().manual_seed(seed)


def test_same_seed_same_sequence_and_draws_advance(sides):
    _, ms_side, _ = sides
    a, b, c = ms_side.Batches(20, 7), ms_side.Batches(20, 7), ms_side.Batches(20, 8)
    first_a, first_b, first_c = _arrays(a.draw()), _arrays(b.draw()), _arrays(c.draw())
    second_a, second_b = _arrays(a.draw()), _arrays(b.draw())
    for x, y in zip(first_a + second_a, first_b + second_b):
        np.testing.assert_array_equal(x, y)  # deterministic per seed
    assert any(not np.array_equal(x, y) for x, y in zip(first_a, second_a))  # the state advances
    assert any(not np.array_equal(x, y) for x, y in zip(first_a, first_c))  # another seed, other draws
    np.testing.assert_array_equal(ms_side.chained(3).asnumpy(), ms_side.chained(3).asnumpy())


def test_shapes_dtypes_and_ranges_are_torchs(sides):
    torch_side, ms_side, _ = sides
    for _ in range(3):
        expected, got = _arrays(torch_side.Batches(20, 1).draw()), _arrays(ms_side.Batches(20, 1).draw())
        for e, g in zip(expected, got):
            assert e.shape == g.shape and e.dtype == g.dtype, (e, g)
    ix, small, order, uniform, normal = got
    assert ix.min() >= 0 and ix.max() < 16
    assert small.min() >= 3 and small.max() < 9
    assert sorted(order.tolist()) == list(range(20))
    assert uniform.min() >= 0.0 and uniform.max() < 1.0
    assert np.isfinite(normal).all()
    assert sorted(ms_side.chained(5).asnumpy().tolist()) == list(range(10))


def test_multinomial_with_a_generator_is_marked(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import torch\ng = torch.Generator().manual_seed(0)\nb = torch.multinomial(torch.ones(4), 2, generator=g)\n")
    (tmp_path / "out").mkdir()
    text = convert_to(source, tmp_path / "out").read_text()
    assert "TODO(ms-migrate): torch.multinomial" in text and "choice(n, k, replace, p)" in text


SAMPLERS = '''
import torch

data = list(range(10))


def orders(seed):
    g = torch.Generator()
    g.manual_seed(seed)
    s = torch.utils.data.RandomSampler(data, generator=g)
    r = torch.utils.data.RandomSampler(data, replacement=True, num_samples=7, generator=g)
    sub = torch.utils.data.SubsetRandomSampler([1, 3, 5, 7], generator=g)
    return [list(s), list(s), list(r), list(sub), len(s), len(r), len(sub)]
'''


def test_samplers_draw_from_the_generator(tmp_path):
    source = tmp_path / "samplers.py"
    source.write_text(SAMPLERS)
    (tmp_path / "out").mkdir()
    converted = convert_to(source, tmp_path / "out")
    text = converted.read_text()
    assert "TODO(ms-migrate)" not in text and "import torch" not in text, text
    ms_side = load(converted)
    first, again, other = ms_side.orders(1), ms_side.orders(1), ms_side.orders(2)
    assert first == again and first != other
    whole, second, drawn, subset, *lengths = first
    assert sorted(whole) == list(range(10)) and sorted(second) == list(range(10)) and whole != second
    assert len(drawn) == 7 and all(0 <= i < 10 for i in drawn)
    assert sorted(subset) == [1, 3, 5, 7]
    assert lengths == [10, 7, 4]
