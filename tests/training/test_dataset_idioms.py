"""Dataset idioms of training scripts, run under torch and, converted, under
MindSpore with torch unimportable.

- ``len(loader.dataset)``: the loader's dataset is the object the DataLoader
  was made from; where the file names it (``DataLoader(train_set, ...)``, or
  ``self.ds`` set once in the class) the read becomes that name, which holds
  whatever pipeline MindSpore builds around it (shuffled, or a
  mindspore.dataset source).
- torchvision.datasets.FashionMNIST and KMNIST keep MNIST's idx files under
  root/<name>/raw: they read as MnistDataset does, through FashionMnistDataset
  and KMnistDataset (torchvision cannot be installed here: the reference is
  torchvision's reading written out in tests/torchvision_reference.py).
"""

from __future__ import annotations

import pickle
import shutil
import subprocess
import sys

import numpy as np

from tests import torchvision_reference as R
from tests.snippets import convert_full
from tests.training.test_public_script_idioms import convert_and_run

LOADER_DATASET = '''
    import torch
    from torch.utils.data import DataLoader, Dataset


    class Pairs(Dataset):
        def __init__(self, n):
            self.x = torch.arange(n * 2, dtype=torch.float32).reshape(n, 2)

        def __len__(self):
            return len(self.x)

        def __getitem__(self, i):
            return self.x[i], self.x[i].sum()


    class Holder:
        def __init__(self):
            self.ds = Pairs(5)
            self.loader = DataLoader(self.ds, batch_size=2, shuffle=True)

        def count(self):
            return len(self.loader.dataset)


    def evaluate():
        return len(loader.dataset)


    train_set = Pairs(7)
    loader = DataLoader(train_set, batch_size=2, shuffle=True)
    print("module", len(loader.dataset))
    print("function", evaluate())
    print("method", Holder().count())
    print("batches", sum(1 for _ in loader))
'''


def test_loader_dataset_length(tmp_path):
    torch_out, converted, ms_out = convert_and_run(tmp_path, LOADER_DATASET)
    assert torch_out == "module 7\nfunction 7\nmethod 5\nbatches 4\n"
    assert ms_out == torch_out, converted
    assert "children" not in converted and "len(train_set)" in converted and "len(self.ds)" in converted, converted


_DRIVER = r"""
import pickle, sys
sys.modules["torch"] = None
import numpy as np
code, root, out = pickle.loads(sys.stdin.buffer.read())
scope = {"root": root}
exec(code, scope)
batches = [[column.asnumpy() for column in batch] for batch in scope["loader"]]
with open(out, "wb") as handle:
    pickle.dump((batches, scope["n"]), handle)
"""

_MNIST_LIKE = (
    "import torch\nimport torchvision.transforms as T\nfrom torchvision import datasets\n"
    "data = datasets.{name}(root, train={train}, transform=T.ToTensor(), download=True)\n"
    "loader = torch.utils.data.DataLoader(data, batch_size=3, shuffle=False)\n"
    "n = len(loader.dataset)\n"
)


def _check_mnist_like(tmp_path, name, train):
    R.write_mnist(tmp_path)
    shutil.copytree(tmp_path / "MNIST", tmp_path / name)  # torchvision's layout: root/<class name>/raw
    converted = convert_full(_MNIST_LIKE.format(name=name, train=train))
    assert "TODO(ms-migrate)" not in converted and "torch" not in converted, converted
    out = tmp_path / "batches.pickle"
    done = subprocess.run([sys.executable, "-c", _DRIVER], input=pickle.dumps((converted, str(tmp_path), str(out))),
                          capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    with open(out, "rb") as handle:
        got, length = pickle.load(handle)
    want = R.batches(R.mnist(tmp_path, train), R.to_tensor, 3)
    assert length == R.MNIST_COUNTS["train" if train else "t10k"]
    assert len(got) == len(want)
    for batch, expected in zip(got, want):
        for g, e in zip(batch, expected):
            assert g.dtype == e.dtype and g.shape == e.shape
            np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-6)


def test_fashionmnist(tmp_path):
    _check_mnist_like(tmp_path, "FashionMNIST", False)


def test_kmnist(tmp_path):
    _check_mnist_like(tmp_path, "KMNIST", True)
