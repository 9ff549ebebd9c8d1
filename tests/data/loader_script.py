"""A torch data pipeline exercising what the DataLoader conversion must keep:
a custom Dataset holding tensors, batching, drop_last, len(), enumerate(),
the loader's .dataset and .batch_size, TensorDataset, random_split (seeded by
a generator), loader arguments passed as **kwargs, a sampler and worker
threads."""

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, SubsetRandomSampler, TensorDataset, random_split


class Pairs(Dataset):
    def __init__(self, count=10):
        self.features = torch.arange(count * 2, dtype=torch.float32).reshape(count, 2)
        self.targets = torch.arange(count)

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, idx):
        return self.features[idx], self.targets[idx]


def as_lists(loader):
    return [[column.numpy().tolist() for column in batch] for batch in loader]


def summary():
    pairs = Pairs()
    loader = DataLoader(pairs, batch_size=4, shuffle=False)
    dropped = DataLoader(pairs, batch_size=4, drop_last=True)
    indexed = [(i, y.numpy().tolist()) for i, (x, y) in enumerate(loader)]
    tensors = TensorDataset(torch.ones(6, 3), torch.arange(6))
    tensor_loader = DataLoader(tensors, batch_size=5)
    train, val = random_split(pairs, [7, 3], generator=torch.Generator().manual_seed(0))
    loader_args = dict(batch_size=7, num_workers=0, pin_memory=True)
    train_loader = DataLoader(train, shuffle=True, **loader_args)
    sampled = DataLoader(pairs, batch_size=3, sampler=SubsetRandomSampler([1, 3, 5]))
    threaded = DataLoader(pairs, batch_size=4, num_workers=2)
    return {
        "batches": as_lists(loader),
        "len": len(loader),
        "dataset_len": len(loader.dataset),
        "dataset_item": loader.dataset[3][1].tolist(),
        "batch_size": loader.batch_size,
        "split_loader": [len(train_loader), len(train_loader.dataset), train_loader.batch_size],
        "dropped": as_lists(dropped),
        "indexed": indexed,
        "tensor_batches": as_lists(tensor_loader),
        # random_split is random in both frameworks: compare what it guarantees
        "split_distinct_labels": len({v for batch in train_loader for v in batch[1].numpy().tolist()}),
        "split_sizes": [len(train), len(val)],
        "sampled": sorted(v for batch in sampled for v in batch[1].numpy().tolist()),
        "threaded": as_lists(threaded),
    }
