"""Converted samplers are iterables of indices like torch's, drawn afresh on
every iteration, and a GeneratorDataset takes them as its sampler.

The rule cases compare direct iteration with torch draw for draw (replayed);
MindSpore's data pipeline draws at other moments than torch's DataLoader, so
the loader path is checked here, in MindSpore alone. The replay also hides
whether a converted draw changes from call to call (it feeds torch's draws),
which is checked here too: MindSpore's ops.randperm repeats one permutation.
"""

from __future__ import annotations

import pytest

from tests.snippets import convert_full

_LOADER = """\
import torch


class Indexed(torch.utils.data.Dataset):
    def __len__(self):
        return 20

    def __getitem__(self, i):
        return torch.zeros(1), i


data = Indexed()
sampler = {sampler}
loader = torch.utils.data.DataLoader(data, batch_size=1, sampler=sampler)
epochs = [[int(y) for _, y in loader] for _ in range(2)]
direct = [list(sampler), list(sampler)]
"""


def _run(sampler: str) -> dict:
    code = convert_full(_LOADER.format(sampler=sampler))
    assert "TODO(ms-migrate)" not in code and "import torch" not in code, code
    namespace: dict = {}
    exec(compile(code, "converted.py", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("sampler, expected", [
    ("torch.utils.data.RandomSampler(data)", list(range(20))),
    ("torch.utils.data.SubsetRandomSampler([1, 3, 5, 7, 9, 11])", [1, 3, 5, 7, 9, 11]),
])
def test_random_order_changes_between_epochs(sampler, expected):
    ran = _run(sampler)
    for indices in (*ran["epochs"], *ran["direct"]):
        assert sorted(indices) == expected
    assert ran["epochs"][0] != ran["epochs"][1] and ran["direct"][0] != ran["direct"][1]


def test_sequential_sampler_keeps_the_order():
    ran = _run("torch.utils.data.SequentialSampler(data)")
    assert ran["epochs"] == ran["direct"] == [list(range(20))] * 2


def test_weighted_sampler_draws_only_weighted_indices():
    ran = _run("torch.utils.data.WeightedRandomSampler([0.0, 1.0] * 10, 30)")
    for indices in (*ran["epochs"], *ran["direct"]):
        assert len(indices) == 30 and set(indices) <= set(range(1, 20, 2))


def test_random_sampler_with_replacement_draws_its_count():
    ran = _run("torch.utils.data.RandomSampler(data, replacement=True, num_samples=70)")
    for indices in (*ran["epochs"], *ran["direct"]):
        assert len(indices) == 70 and set(indices) <= set(range(20))


def test_randperm_gives_a_new_permutation_on_every_call():
    namespace: dict = {}
    exec(compile(convert_full("import torch\nperms = [torch.randperm(30).tolist() for _ in range(3)]\n"), "c.py", "exec"),
         namespace)
    perms = namespace["perms"]
    assert all(sorted(p) == list(range(30)) for p in perms) and len({tuple(p) for p in perms}) == 3
