"""Synthetic data in the layouts the scripts read, small and learnable (the
labels depend on the inputs, so a loss that falls means the model learns).
Each function takes the run directory (the script's working directory) and
writes the files there; the same seed gives the same files on both sides."""

from __future__ import annotations

import os

import numpy as np


def cora(run: str, nodes: int = 1500, features: int = 24, classes: int = 3) -> None:
    """``data/cora/cora.content`` (``id f_1 .. f_F label`` per line) and
    ``cora.cites`` (``cited citing`` id pairs), as pyGAT's ``load_data``
    reads them (it takes nodes 0-139 to train, 200-499 to validate, 500-1499
    to test: 1500 nodes at least)."""
    rng = np.random.default_rng(0)
    folder = os.path.join(run, "data", "cora")
    os.makedirs(folder, exist_ok=True)
    labels = rng.integers(0, classes, nodes)
    # bag-of-words features: each class favours its own block of words
    probability = np.full((nodes, features), 0.05)
    block = features // classes
    for node, label in enumerate(labels):
        probability[node, label * block:(label + 1) * block] = 0.6
    words = (rng.random((nodes, features)) < probability).astype(int)
    words[words.sum(1) == 0, 0] = 1
    ids = rng.permutation(100000)[:nodes] + 1000
    with open(os.path.join(folder, "cora.content"), "w") as handle:
        for node in range(nodes):
            handle.write("\t".join([str(ids[node]), *map(str, words[node]), f"class_{labels[node]}"]) + "\n")
    edges = set()
    while len(edges) < nodes * 2:
        a, b = rng.integers(0, nodes, 2)
        if a != b and (labels[a] == labels[b] or rng.random() < 0.2):
            edges.add((int(a), int(b)))
    with open(os.path.join(folder, "cora.cites"), "w") as handle:
        for a, b in sorted(edges):
            handle.write(f"{ids[a]}\t{ids[b]}\n")


def image_folder(run: str, classes: int = 2, per_class: int = 8, size: int = 16, folder: str = "images") -> None:
    """``images/<class>/<n>.png``: an ImageFolder (RGB PNGs; each class its own colour and pattern)."""
    rng = np.random.default_rng(0)
    for label in range(classes):
        _class_images(os.path.join(run, folder, f"class{label}"), label, per_class, size, rng)


def cifar10_batches(run: str, per_batch: int = 16) -> None:
    """``datasets/cifar10/cifar-10-batches-py``: the pickled batches torchvision's
    CIFAR10 reads (``data_batch_1..5``, ``test_batch``, ``batches.meta``)."""
    import pickle

    rng = np.random.default_rng(0)
    folder = os.path.join(run, "datasets", "cifar10", "cifar-10-batches-py")
    os.makedirs(folder, exist_ok=True)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        labels = rng.integers(0, 10, per_batch)
        images = np.zeros((per_batch, 3, 32, 32), dtype=np.float64)
        for row, label in enumerate(labels):
            images[row, label % 3] = 40 + 20 * label
        images = np.clip(images + rng.normal(0, 10, images.shape), 0, 255).astype(np.uint8)
        with open(os.path.join(folder, name), "wb") as handle:
            pickle.dump({b"data": images.reshape(per_batch, -1), b"labels": labels.tolist()}, handle)
    with open(os.path.join(folder, "batches.meta"), "wb") as handle:
        pickle.dump({"label_names": [f"c{i}" for i in range(10)]}, handle)


def gpt2_token_shards(run: str, tokens: int = 20000, vocab: int = 64) -> None:
    """llm.c's token shards ``data/train_000.bin``/``val_000.bin``: a 256 int32
    header (magic 20240520, version 1, token count) then uint16 tokens; the
    text repeats short patterns so a tiny model learns it."""
    rng = np.random.default_rng(0)
    folder = os.path.join(run, "data")
    os.makedirs(folder, exist_ok=True)
    patterns = [rng.integers(0, vocab, 8) for _ in range(6)]
    for name in ("train_000.bin", "val_000.bin"):
        stream = np.concatenate([patterns[i] for i in rng.integers(0, len(patterns), tokens // 8)]).astype(np.uint16)
        header = np.zeros(256, dtype=np.int32)
        header[:3] = (20240520, 1, len(stream))
        with open(os.path.join(folder, name), "wb") as handle:
            handle.write(header.tobytes())
            handle.write(stream.tobytes())


def planetoid(run: str, dataset: str = "cora", train: int = 60, known: int = 700, test: int = 300,
              features: int = 32, classes: int = 3) -> None:
    """The Planetoid files ``data/ind.<dataset>.{x,y,tx,ty,allx,ally,graph}``
    (pickled scipy CSR features, one-hot label arrays, a dict-of-lists graph)
    and ``ind.<dataset>.test.index``, as GCN-family loaders read them: ``known``
    nodes (the first ``train`` labelled), then ``test`` nodes."""
    import pickle

    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    folder = os.path.join(run, "data")
    os.makedirs(folder, exist_ok=True)
    nodes = known + test
    labels = rng.integers(0, classes, nodes)
    probability = np.full((nodes, features), 0.05)
    block = features // classes
    for node, label in enumerate(labels):
        probability[node, label * block:(label + 1) * block] = 0.5
    words = (rng.random((nodes, features)) < probability).astype(np.float32)
    words[words.sum(1) == 0, 0] = 1
    onehot = np.eye(classes)[labels]
    graph: dict[int, list[int]] = {node: [] for node in range(nodes)}
    for _ in range(nodes * 2):
        a, b = (int(v) for v in rng.integers(0, nodes, 2))
        if a != b and (labels[a] == labels[b] or rng.random() < 0.2):
            graph[a].append(b)
            graph[b].append(a)
    parts = {"x": sp.csr_matrix(words[:train]), "y": onehot[:train], "allx": sp.csr_matrix(words[:known]),
             "ally": onehot[:known], "tx": sp.csr_matrix(words[known:]), "ty": onehot[known:], "graph": graph}
    for name, value in parts.items():
        with open(os.path.join(folder, f"ind.{dataset}.{name}"), "wb") as handle:
            pickle.dump(value, handle)
    with open(os.path.join(folder, f"ind.{dataset}.test.index"), "w") as handle:
        handle.write("\n".join(str(i) for i in range(known, nodes)) + "\n")


def imagenet_folder(run: str, classes: int = 2, per_class: int = 8, size: int = 40) -> None:
    """``imnet/train/<class>/*.png`` and ``imnet/val/<class>/*.png``: the
    ImageNet folder layout (ImageFolder on each split)."""
    for split in ("train", "val"):
        image_folder(os.path.join(run, "imnet", split), classes, per_class, size, folder="")


def _class_images(folder: str, label: int, count: int, size: int, rng) -> None:
    from PIL import Image

    os.makedirs(folder, exist_ok=True)
    for index in range(count):
        base = np.zeros((size, size, 3), dtype=np.float64)
        base[..., label % 3] = 160
        base[::2 + label, :, (label + 1) % 3] = 90
        pixels = np.clip(base + rng.normal(0, 20, base.shape), 0, 255).astype(np.uint8)
        Image.fromarray(pixels).save(os.path.join(folder, f"{index}.png"))


def mnist_raw(run: str) -> None:
    """``data/MNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte``: the
    uncompressed IDX files torchvision's MNIST finds before it downloads (digits
    drawn as a class-dependent bar, so they are learnable)."""
    _idx_files(os.path.join(run, "data", "MNIST", "raw"))


def mnist_raw_ddp(run: str) -> None:
    """``data/MNIST/raw/...`` as ``mnist_raw``, with 4000 training and 5000 test
    digits: enough batches of 100 per rank, with 2 ranks, for scripts that print
    every 10th training step and every 50th test step."""
    _idx_files(os.path.join(run, "data", "MNIST", "raw"), train=4000, test=5000)


def fashion_mnist_raw(run: str) -> None:
    """``../datasets/FashionMNIST/raw/...``: FashionMNIST's IDX files where a
    script one directory down reads them (``root='../datasets'``)."""
    _idx_files(os.path.join(run, os.pardir, "datasets", "FashionMNIST", "raw"))


def _idx_files(folder: str, train: int = 256, test: int = 64) -> None:
    rng = np.random.default_rng(0)
    os.makedirs(folder, exist_ok=True)
    for prefix, count in (("train", train), ("t10k", test)):
        labels = rng.integers(0, 10, count).astype(np.uint8)
        images = rng.integers(0, 40, (count, 28, 28)).astype(np.uint8)
        for row, label in enumerate(labels):
            images[row, 2 + 2 * label:4 + 2 * label, 4:24] = 255
        with open(os.path.join(folder, f"{prefix}-images-idx3-ubyte"), "wb") as handle:
            handle.write(np.array([2051, count, 28, 28], dtype=">i4").tobytes() + images.tobytes())
        with open(os.path.join(folder, f"{prefix}-labels-idx1-ubyte"), "wb") as handle:
            handle.write(np.array([2049, count], dtype=">i4").tobytes() + labels.tobytes())


def mnist_gz(run: str) -> None:
    """``datasets/mnist/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz``: gzipped
    IDX files at MNIST's own sizes (60000 and 10000 digits: loaders that reshape
    to those counts), each digit a class-dependent bar on a dark background
    (compresses to a few hundred kilobytes)."""
    import gzip

    rng = np.random.default_rng(0)
    folder = os.path.join(run, "datasets", "mnist")
    os.makedirs(folder, exist_ok=True)
    for prefix, count in (("train", 60000), ("t10k", 10000)):
        labels = rng.integers(0, 10, count).astype(np.uint8)
        images = np.zeros((count, 28, 28), dtype=np.uint8)
        for digit in range(10):
            images[labels == digit, 2 + 2 * digit:4 + 2 * digit, 4:24] = 255
        for name, header, body in (("images-idx3", [2051, count, 28, 28], images),
                                   ("labels-idx1", [2049, count], labels)):
            with gzip.open(os.path.join(folder, f"{prefix}-{name}-ubyte.gz"), "wb", compresslevel=1) as handle:
                handle.write(np.array(header, dtype=">i4").tobytes() + body.tobytes())
