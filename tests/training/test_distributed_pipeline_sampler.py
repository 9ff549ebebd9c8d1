"""DataLoader(dataset, sampler=DistributedSampler(dataset)) over a dataset the conversion makes a
mindspore.dataset pipeline (torchvision's MNIST -> MnistDataset(...).map(...)): the sampler draws
the rows of the pipeline's source, so each rank reads the rows torch's loader gives it, epoch by
epoch (aurotripathy/pytorch-distributed-tut's mnist-distributed.py; it was marked).

torch's side is torch's DistributedSampler over the same number of rows, indexing the labels the
MNIST files hold (torchvision is not installed here); the MindSpore side runs the converted program
on those files. No msrun: the world size and the rank are given.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from tests.snippets import convert_full

SOURCE = """\
import torch
import torchvision
import torchvision.transforms as transforms


def read(root, replicas, rank, epochs, shuffle):
    dataset = torchvision.datasets.MNIST(root=root, train=True, transform=transforms.ToTensor(), download=True)
    sampler = torch.utils.data.distributed.DistributedSampler(dataset, num_replicas=replicas, rank=rank,
                                                              shuffle=shuffle)
    loader = torch.utils.data.DataLoader(dataset=dataset, batch_size=4, shuffle=False, sampler=sampler)
    seen = []
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        seen.append([[int(y) for y in labels] for images, labels in loader])
    return seen, len(loader)
"""

ROWS = 22


def _mnist(root: str) -> np.ndarray:
    """MNIST's raw IDX files with ROWS digits whose labels are their row numbers modulo 10 ... read back by row."""
    folder = os.path.join(root, "MNIST", "raw")
    os.makedirs(folder)
    labels = (np.arange(ROWS) * 7 % 10).astype(np.uint8)
    images = np.zeros((ROWS, 28, 28), dtype=np.uint8)
    images[:, 0, :ROWS] = np.eye(ROWS, dtype=np.uint8)[:, :ROWS] * 255  # each image its own row number
    for prefix in ("train", "t10k"):
        with open(os.path.join(folder, f"{prefix}-images-idx3-ubyte"), "wb") as handle:
            handle.write(np.array([2051, ROWS, 28, 28], dtype=">i4").tobytes() + images.tobytes())
        with open(os.path.join(folder, f"{prefix}-labels-idx1-ubyte"), "wb") as handle:
            handle.write(np.array([2049, ROWS], dtype=">i4").tobytes() + labels.tobytes())
    return labels


def _torch_reads(labels: np.ndarray, replicas: int, rank: int, epochs: int, shuffle: bool):
    import torch

    sampler = torch.utils.data.distributed.DistributedSampler(list(range(ROWS)), num_replicas=replicas, rank=rank,
                                                              shuffle=shuffle)
    seen = []
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        order = list(sampler)
        seen.append([[int(labels[i]) for i in order[start:start + 4]] for start in range(0, len(order), 4)])
    return seen, -(-len(sampler) // 4)


@pytest.fixture(scope="module")
def converted():
    code = convert_full(SOURCE)
    assert "TODO(ms-migrate)" not in code, code
    assert not [line for line in code.splitlines() if "torch" in line.split("#")[0].replace("torch's", "")], code
    namespace: dict = {}
    exec(compile(code, "pipeline_sampler.py", "exec"), namespace)
    return code, namespace


def test_each_rank_reads_torchs_rows(converted, tmp_path):
    code, namespace = converted
    assert "sampled_by(" in code and "MnistDataset(" in code
    labels = _mnist(str(tmp_path))
    for shuffle in (True, False):
        for replicas in (2, 3):
            for rank in range(replicas):
                ours = namespace["read"](str(tmp_path), replicas, rank, 3, shuffle)
                theirs = _torch_reads(labels, replicas, rank, 3, shuffle)
                assert ours == theirs, (shuffle, replicas, rank)
    shuffled, _ = _torch_reads(labels, 2, 0, 2, True)
    assert shuffled[0] != shuffled[1]  # a new order each epoch, read as torch reads it


def test_several_sources_are_refused(converted):
    """A zip of two pipelines has no one source to draw from: the helper says so instead of guessing."""
    import mindspore.dataset as ds

    _, namespace = converted
    left = ds.NumpySlicesDataset({"a": np.arange(4)}, shuffle=False)
    right = ds.NumpySlicesDataset({"b": np.arange(4)}, shuffle=False)
    with pytest.raises(ValueError, match="several sources"):
        namespace["sampled_by"](ds.zip((left, right)), [0, 1])
