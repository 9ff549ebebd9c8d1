"""A converted DistributedSampler gives each rank the indices torch's gives it, epoch by epoch.

torch's sampler shuffles with ``torch.randperm`` under a generator seeded with
``seed + epoch``, then pads (or, with drop_last, truncates) to a multiple of the
replicas and takes every ``num_replicas``-th index from ``rank``. The converted
sampler (rewrite_rules/training/data.py) must give the same list for every
(size, replicas, rank, seed, epoch, drop_last, shuffle), through ``set_epoch``
on the sampler and on ``loader.sampler`` (also behind ``hasattr``/``isinstance``
checks of it), and through a GeneratorDataset that
iterates it once per epoch. No msrun here: the world size and the rank are
given (tests/training/test_distributed_msrun.py runs the defaults under msrun).
"""

from __future__ import annotations

import itertools

import pytest

from tests.snippets import convert_full

SOURCE = """\
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class Indexed(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.zeros(1), i


def shard(n, replicas, rank, seed, epoch, drop_last, shuffle):
    sampler = DistributedSampler(Indexed(n), num_replicas=replicas, rank=rank, shuffle=shuffle, seed=seed,
                                 drop_last=drop_last)
    sampler.set_epoch(epoch)
    return list(sampler), len(sampler), list(sampler)


def fixed_shard(n, replicas, rank, drop_last):
    sampler = DistributedSampler(Indexed(n), num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
    sampler.set_epoch(3)
    return list(sampler), len(sampler)


def loaded(n, replicas, rank, seed, epochs):
    data = Indexed(n)
    loader = DataLoader(data, batch_size=2, drop_last=True,
                        sampler=DistributedSampler(data, num_replicas=replicas, rank=rank, seed=seed))
    seen = []
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)
        seen.append([[int(i) for i in y] for _, y in loader])
    return seen, len(loader)


def guarded(n, replicas, rank, seed, epochs):
    data = Indexed(n)
    loader = DataLoader(data, batch_size=2, drop_last=True,
                        sampler=DistributedSampler(data, num_replicas=replicas, rank=rank, seed=seed))
    seen = []
    for epoch in range(epochs):
        if hasattr(loader.sampler, "set_epoch") and isinstance(loader.sampler, DistributedSampler):
            loader.sampler.set_epoch(epoch)
        seen.append([[int(i) for i in y] for _, y in loader])
    return seen
"""

SIZES = (1, 2, 5, 10, 33, 1000)
REPLICAS = (1, 2, 3, 4)
SEEDS = (0, 7, 2**31 + 5)
EPOCHS = (0, 1, 5)


@pytest.fixture(scope="module")
def sides():
    import torch

    theirs: dict = {"torch": torch}
    exec(compile("import torch\n" + SOURCE, "ddp_torch.py", "exec"), theirs)
    code = convert_full(SOURCE)
    assert not [line for line in code.splitlines() if "torch" in line.split("#")[0].replace("torch's", "")], code
    assert "TODO(ms-migrate)" not in code, code
    ours: dict = {}
    exec(compile(code, "ddp_converted.py", "exec"), ours)
    return theirs, ours, code


def test_converted_sampler_draws_torchs_shards(sides):
    theirs, ours, code = sides
    assert "class TorchOrderDistributedSampler(mindspore.dataset.dataloader.DistributedSampler)" in code
    assert "sampler.set_epoch(epoch)" in code
    compared = 0
    for n, replicas, seed, epoch, drop_last, shuffle in itertools.product(SIZES, REPLICAS, SEEDS, EPOCHS,
                                                                          (False, True), (True, False)):
        if drop_last and n < replicas:
            continue  # torch's shards are then empty
        for rank in range(replicas):
            args = (n, replicas, rank, seed, epoch, drop_last, shuffle)
            expected = theirs["shard"](*args)
            assert ours["shard"](*args) == expected, args
            compared += 1
    assert compared > 1000


def test_unshuffled_sampler_is_mindsporeS_own(sides):
    theirs, ours, code = sides
    assert "mindspore.dataset.dataloader.DistributedSampler(\n" in code or \
        "= mindspore.dataset.dataloader.DistributedSampler(Indexed(n)" in code
    for n, replicas, drop_last in itertools.product(SIZES, REPLICAS, (False, True)):
        if drop_last and n < replicas:
            continue
        for rank in range(replicas):
            assert ours["fixed_shard"](n, replicas, rank, drop_last) == \
                theirs["fixed_shard"](n, replicas, rank, drop_last), (n, replicas, rank, drop_last)


def test_loader_reads_torchs_batches_each_epoch(sides):
    """loader.sampler.set_epoch(epoch) reaches the sampler under the converted loader, and the
    GeneratorDataset iterates it afresh each epoch: the batches are torch's, epoch by epoch."""
    theirs, ours, code = sides
    assert "loader.children[0].sampler.sampler.set_epoch(epoch)" in code
    for rank in range(2):
        expected = theirs["loaded"](11, 2, rank, 3, 3)
        assert ours["loaded"](11, 2, rank, 3, 3) == expected
        epochs, batches = expected
        assert batches == 3 and len(epochs) == 3 and epochs[0] != epochs[1]  # a new order each epoch


def test_every_read_of_loader_sampler_is_the_sampler(sides):
    """hasattr(loader.sampler, "set_epoch") and isinstance(loader.sampler, DistributedSampler) are true of
    the converted loader's sampler too: the guarded set_epoch runs, and each epoch has torch's order."""
    theirs, ours, code = sides
    assert 'hasattr(loader.children[0].sampler.sampler, "set_epoch")' in code, code
    for rank in range(2):
        expected = theirs["guarded"](11, 2, rank, 3, 3)
        assert ours["guarded"](11, 2, rank, 3, 3) == expected and expected[0] != expected[1]


def test_mindspores_own_shuffle_is_not_torchs(sides):
    """Sabotage: MindSpore's DistributedSampler with shuffle=True (its own generator) fails the comparison."""
    theirs, ours, _ = sides
    import mindspore.dataset.dataloader

    differs = 0
    for epoch in EPOCHS:
        own = mindspore.dataset.dataloader.DistributedSampler(list(range(33)), num_replicas=2, rank=0, seed=7)
        own.set_epoch(epoch)
        differs += list(own) != theirs["shard"](33, 2, 0, 7, epoch, False, True)[0]
    assert differs == len(EPOCHS)
