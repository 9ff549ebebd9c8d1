"""A dataset one file of a project builds, loaded in another: the project index says
the name holds a mindspore.dataset pipeline.

data.py makes ``train_dataset = datasets.MNIST(...)`` (converted: a MnistDataset
pipeline); train.py imports it and wraps it in ``DataLoader(train_dataset,
sampler=DistributedSampler(...))``, as Minimindy/DP-DDP's ddp_train.py does (the
benchmark's minimindy_mnist row). Converted as one project, the loader is that
pipeline read through the sampler and batched, not a GeneratorDataset over it
(which needs ``__getitem__``). Run: the converted loaders, with torch
unimportable, give the rows torch's DistributedSampler draws for rank 1 of 2,
read as torchvision reads MNIST (tests/torchvision_reference.py), and a plain
loader over ``module.test_dataset`` (``import data as d``) the test rows in
order. The sabotage converts train.py without its project: a GeneratorDataset.
"""

from __future__ import annotations

import pathlib
import pickle
import subprocess
import sys
import textwrap

import numpy as np

from tests import torchvision_reference as R
from transpiler.convert.pipeline import convert_source
from transpiler.convert.project import ProjectIndex

ROOT = pathlib.Path(__file__).resolve().parents[2]

DATA = '''\
from torchvision import datasets, transforms

train_dataset = datasets.MNIST(root='./data/', train=True, download=True, transform=transforms.ToTensor())
test_dataset = datasets.MNIST(root='./data/', train=False, download=True, transform=transforms.ToTensor())
'''

TRAIN = '''\
import torch
from torch.utils.data.distributed import DistributedSampler

from data import train_dataset

train_sampler = DistributedSampler(train_dataset, num_replicas=2, rank=1)
train_loader = torch.utils.data.DataLoader(train_dataset, sampler=train_sampler, batch_size=3)
'''

EVALUATE = '''\
import torch

import data as d

test_loader = torch.utils.data.DataLoader(d.test_dataset, batch_size=4)
'''

_DRIVER = r"""
import pickle, runpy, sys
sys.path.insert(0, sys.argv[2])
from transpiler.proof.no_torch import block_torch
sys.path.pop(0)
block_torch()
sys.path.insert(0, ".")
found = {}
for script, name in (("train.py", "train_loader"), ("evaluate.py", "test_loader")):
    loader = runpy.run_path(script)[name]
    found[name] = [[column.asnumpy() for column in batch] for batch in loader]
with open(sys.argv[1], "wb") as handle:
    pickle.dump(found, handle)
"""


def _project(tmp_path):
    source = tmp_path / "source"
    source.mkdir()
    for name, text in (("data.py", DATA), ("train.py", TRAIN), ("evaluate.py", EVALUATE)):
        (source / name).write_text(text)
    return source


def _torch_rows(count: int) -> list[int]:
    """The rows torch's DistributedSampler(shuffle=True, seed=0) gives rank 1 of 2."""
    import torch.utils.data

    return list(torch.utils.data.DistributedSampler(range(count), num_replicas=2, rank=1))


def _compare(got, want):
    assert len(got) == len(want)
    for batch, expected in zip(got, want):
        for g, e in zip(batch, expected):
            assert g.dtype == e.dtype and g.shape == e.shape
            np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)


def test_loader_over_a_sibling_files_dataset(tmp_path):
    source = _project(tmp_path)
    out = tmp_path / "converted"
    done = subprocess.run([sys.executable, "-m", "transpiler", "convert", str(source), "-o", str(out), "-q",
                           "--force"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    train, evaluate = (out / "train.py").read_text(), (out / "evaluate.py").read_text()
    assert "train_loader = sampled_by(train_dataset, train_sampler).batch(" in train, train
    assert "test_loader = d.test_dataset.batch(4, drop_remainder=False)" in evaluate, evaluate
    assert "GeneratorDataset" not in train + evaluate and "TODO(ms-migrate)" not in train + evaluate

    R.write_mnist(out / "data")
    result = tmp_path / "batches.pickle"
    done = subprocess.run([sys.executable, "-c", _DRIVER, str(result), str(ROOT)], cwd=out, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    with open(result, "rb") as handle:
        found = pickle.load(handle)
    samples = R.mnist(out / "data", train=True)
    rows = _torch_rows(len(samples))
    assert sorted(set(rows)) != rows  # shuffled: the order is compared, not only the rows
    _compare(found["train_loader"], R.batches([samples[i] for i in rows], R.to_tensor, 3))
    _compare(found["test_loader"], R.batches(R.mnist(out / "data", train=False), R.to_tensor, 4))


def test_without_the_project_the_loader_wraps_a_source(tmp_path):
    """The sabotage: train.py alone does not know what train_dataset holds."""
    alone = convert_source(TRAIN, str(tmp_path / "train.py")).output
    assert "sampled_by" not in alone and "mindspore.dataset.GeneratorDataset(" in alone, alone


def test_index_follows_imports_and_rebindings(tmp_path):
    files = {
        "data.py": DATA + "\ntest_dataset = list(test_dataset)\n",  # rebound: no longer a pipeline
        "parts.py": textwrap.dedent('''\
            import torch
            import torchvision

            __all__ = ["train_part"]
            train_part, val_part = torch.utils.data.random_split(torchvision.datasets.MNIST("."), [5, 2])
        '''),
        "again.py": "from data import train_dataset as ds\n",  # re-exported under another name
        "use.py": "import data\nimport data as d2\nfrom again import ds\nfrom parts import *\n"
                  "from data import test_dataset\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    index = ProjectIndex.build(str(tmp_path), [str(tmp_path / name) for name in files])
    facts = index.facts(str(tmp_path / "use.py"))
    assert facts.datasets == {"data.train_dataset", "d2.train_dataset", "ds", "train_part"}
    assert facts.digest() != index.facts(str(tmp_path / "again.py")).digest()
