"""Check tests/torchvision_reference.py against torchvision's own code.

    python -m tests.check_torchvision_reference                   # an importable torchvision
    python -m tests.check_torchvision_reference --package DIR     # DIR/torchvision from a wheel

torchvision's wheels need CUDA's libraries, so on a machine with a CPU build
of torch ``import torchvision`` fails while registering its C operators.
``--package`` loads the pure-Python modules used here (datasets, transforms)
from an unpacked wheel without running the package's __init__ (e.g.
``pip install --no-deps --target DIR torchvision==0.28.0``). Prints one line
per check and exits 1 if any differs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import types
from pathlib import Path

import numpy as np


def _import_torchvision(package: str | None):
    if package is not None:
        stub = types.ModuleType("torchvision")
        stub.__path__ = [str(Path(package) / "torchvision")]
        stub.get_image_backend = lambda: "PIL"
        sys.modules["torchvision"] = stub
    import torchvision.datasets as datasets
    import torchvision.datasets.cifar as cifar
    import torchvision.transforms as transforms

    cifar.check_integrity = lambda *args, **kwargs: True  # the test's files are not CIFAR-10's (md5)
    return datasets, transforms


def _same(a, b) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.abs(a - b).max() < 1e-6)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.check_torchvision_reference")
    parser.add_argument("--package", help="directory holding an unpacked torchvision package")
    args = parser.parse_args()
    datasets, T = _import_torchvision(args.package)
    import torch

    from tests import torchvision_reference as R

    root = Path(tempfile.mkdtemp())
    R.write_image_folder(root / "folder")
    R.write_mnist(root)
    R.write_cifar10_test_batch(root)
    checks = {
        "ImageFolder": (list(datasets.ImageFolder(root / "folder")), R.image_folder(root / "folder")),
        "MNIST train": (list(datasets.MNIST(root, train=True)), R.mnist(root, True)),
        "MNIST test": (list(datasets.MNIST(root, train=False)), R.mnist(root, False)),
        "CIFAR10 test": ([datasets.CIFAR10(root, train=False)[i] for i in range(20)], R.cifar10_test(root, 20)),
    }
    failed = 0
    for name, (theirs, ours) in checks.items():
        ok = len(theirs) == len(ours) and all(_same(a[0], b[0]) and a[1] == b[1] for a, b in zip(theirs, ours))
        failed += not ok
        print(f"{'ok  ' if ok else 'DIFF'} {name}")
    images = [image for image, _ in R.image_folder(root / "folder")]
    transforms = [
        (T.Resize((6, 8)), R.resize((6, 8))), (T.Resize(7), R.resize(7)), (T.Resize((20, 30)), R.resize((20, 30))),
        (T.CenterCrop((6, 9)), R.center_crop((6, 9))), (T.CenterCrop(5), R.center_crop(5)),
        (T.RandomCrop((17, 21), padding=2), R.pad(2)), (T.RandomCrop((15, 21), (2, 1), fill=9), R.pad((2, 1), 9)),
        (T.RandomCrop((16, 20), padding=(1, 2, 2, 1)), R.pad((1, 2, 2, 1))),
        (T.RandomHorizontalFlip(1.0), R.hflip), (T.RandomVerticalFlip(1.0), R.vflip), (T.ToTensor(), R.to_tensor),
        (T.Compose([T.ToTensor(), T.Normalize((0.5, 0.4, 0.3), (0.2, 0.3, 0.4))]),
         R.compose(R.to_tensor, R.normalize((0.5, 0.4, 0.3), (0.2, 0.3, 0.4)))),
    ]
    for theirs, ours in transforms:
        results = [(theirs(image), ours(image)) for image in images]
        ok = all(_same(a.numpy() if isinstance(a, torch.Tensor) else a, b) for a, b in results)
        failed += not ok
        print(f"{'ok  ' if ok else 'DIFF'} {' '.join(repr(theirs).split())}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
