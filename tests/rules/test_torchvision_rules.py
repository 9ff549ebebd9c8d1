"""The torchvision rules, proven by running the converted pipelines on files.

Each case is torchvision code (a dataset, its transforms, a DataLoader); it is
converted, run under MindSpore on the files tests/torchvision_reference.py
writes (MNIST idx files, CIFAR-10 pickles and binaries, an ImageFolder tree),
and the batches it yields are compared (values, dtypes, order, count) with
what torchvision yields for the same files. torchvision cannot be installed
next to this machine's CPU build of torch, so its side is the reference in
tests/torchvision_reference.py, which follows torchvision's code (checked
against torchvision 0.28's own code: tests/check_torchvision_reference.py).

Random transforms are compared exactly where their draws decide nothing
(p=0 or p=1, a crop as large as the padded image) and structurally otherwise:
each output must be one of the images torchvision could have produced.
These tests are the ``proven_by`` of the rules in rewrite_rules/vision/torchvision.py.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

from tests import torchvision_reference as R
from tests.golden_files import ROOT
from tests.snippets import convert_full

_PRELUDE = "import torchvision.transforms as T\nfrom torchvision import datasets\n"
_LOADER = "loader = torch.utils.data.DataLoader(data, batch_size=3)\n"


def _folder(transform: str, loader: str = _LOADER) -> str:
    return _PRELUDE + f"data = datasets.ImageFolder(folder, transform={transform})\n" + loader


MEAN, STD = (0.5, 0.4, 0.3), (0.2, 0.3, 0.4)

# name -> (torchvision snippet binding `loader`, its batches under torchvision (root -> batches))
EXACT = {
    "image_folder": (_folder("T.ToTensor()"), lambda root: R.batches(R.image_folder(root / "folder"), R.to_tensor, 3)),
    "image_folder_keywords": (
        _PRELUDE + "data = datasets.ImageFolder(root=folder, transform=T.ToTensor(), target_transform=lambda y: y * 10)\n"
        + _LOADER,
        lambda root: [[x, y * 10] for x, y in R.batches(R.image_folder(root / "folder"), R.to_tensor, 3)],
    ),
    "mnist_test": (
        _PRELUDE + "data = datasets.MNIST(root, train=False, transform=T.ToTensor())\n" + _LOADER,
        lambda root: R.batches(R.mnist(root, False), R.to_tensor, 3),
    ),
    "mnist_train": (
        _PRELUDE + "data = datasets.MNIST(root, transform=T.Compose([T.ToTensor(), T.Normalize((0.1307,), (0.3081,))]), "
        "download=True)\n" + "loader = torch.utils.data.DataLoader(data, batch_size=4, drop_last=True)\n",
        lambda root: R.batches(R.mnist(root, True), R.compose(R.to_tensor, R.normalize((0.1307,), (0.3081,))), 4)[:1],
    ),
    "cifar10_test": (
        _PRELUDE + "data = datasets.CIFAR10(root, train=False, transform=T.Compose([T.ToTensor(), "
        f"T.Normalize({MEAN}, {STD})]))\n" + "loader = torch.utils.data.DataLoader(data, batch_size=4)\n",
        lambda root: R.batches(R.cifar10_test(root, 12), R.compose(R.to_tensor, R.normalize(MEAN, STD)), 4),
    ),
    "resize_pair": (_folder("T.Compose([T.Resize((6, 8)), T.ToTensor()])"),
                    lambda root: R.batches(R.image_folder(root / "folder"), R.compose(R.resize((6, 8)), R.to_tensor), 3)),
    "resize_short_side": (_folder("T.Compose([T.Resize(size=7), T.ToTensor()])"),
                          lambda root: R.batches(R.image_folder(root / "folder"), R.compose(R.resize(7), R.to_tensor), 3)),
    "resize_up": (_folder("T.Compose([T.Resize((20, 30), antialias=True), T.ToTensor()])"),
                  lambda root: R.batches(R.image_folder(root / "folder"), R.compose(R.resize((20, 30)), R.to_tensor), 3)),
    # margins 7 and 8: round(3.5) = 4 decides the top row
    "center_crop_odd_margin": (
        _folder("T.Compose([T.CenterCrop((6, 9)), T.ToTensor()])"),
        lambda root: R.batches(R.image_folder(root / "folder"), R.compose(R.center_crop((6, 9)), R.to_tensor), 3)),
    "center_crop_square": (
        _folder("T.Compose([T.CenterCrop(size=5), T.ToTensor()])"),
        lambda root: R.batches(R.image_folder(root / "folder"), R.compose(R.center_crop(5), R.to_tensor), 3)),
    # a crop as large as the padded image: the position drawn decides nothing
    "random_crop_padding": (
        _folder("T.Compose([T.RandomCrop((17, 21), padding=2), T.ToTensor()])"),
        lambda root: R.batches(R.image_folder(root / "folder"), R.compose(R.pad(2), R.to_tensor), 3)),
    "random_crop_padding_pair_fill": (
        _folder("T.Compose([T.RandomCrop((15, 21), (2, 1), fill=9), T.ToTensor()])"),
        lambda root: R.batches(R.image_folder(root / "folder"), R.compose(R.pad((2, 1), 9), R.to_tensor), 3)),
    "random_crop_padding_four": (
        _folder("T.Compose([T.RandomCrop(size=(16, 20), padding=(1, 2, 2, 1), padding_mode='constant'), T.ToTensor()])"),
        lambda root: R.batches(R.image_folder(root / "folder"), R.compose(R.pad((1, 2, 2, 1)), R.to_tensor), 3)),
    "horizontal_flip_always": (
        _folder("T.Compose([T.RandomHorizontalFlip(p=1.0), T.ToTensor()])"),
        lambda root: R.batches(R.image_folder(root / "folder"), R.compose(R.hflip, R.to_tensor), 3)),
    "horizontal_flip_never": (
        _folder("T.Compose([T.RandomHorizontalFlip(0.0), T.ToTensor()])"),
        lambda root: R.batches(R.image_folder(root / "folder"), R.to_tensor, 3)),
    "vertical_flip_always": (
        _folder("T.Compose([T.RandomVerticalFlip(1.0), T.ToTensor()])"),
        lambda root: R.batches(R.image_folder(root / "folder"), R.compose(R.vflip, R.to_tensor), 3)),
    "vertical_flip_never": (
        _folder("T.Compose([T.RandomVerticalFlip(p=0), T.ToTensor()])"),
        lambda root: R.batches(R.image_folder(root / "folder"), R.to_tensor, 3)),
    "normalize": (
        _folder(f"T.Compose([T.ToTensor(), T.Normalize(mean={MEAN}, std={STD}, inplace=True)])"),
        lambda root: R.batches(R.image_folder(root / "folder"), R.compose(R.to_tensor, R.normalize(MEAN, STD)), 3)),
    "compose_chain": (
        _PRELUDE + "tf = T.Compose([T.Resize(9), T.CenterCrop((8, 10)), T.RandomHorizontalFlip(1.0), T.ToTensor(), "
        f"T.Normalize({MEAN}, {STD})])\n" + "data = datasets.ImageFolder(folder, tf)\n" + _LOADER,
        lambda root: R.batches(R.image_folder(root / "folder"), R.compose(
            R.resize(9), R.center_crop((8, 10)), R.hflip, R.to_tensor, R.normalize(MEAN, STD)), 3)),
}

# Random draws that decide the output: name -> (snippet, the outputs torchvision could give for one image)
STRUCTURAL = {
    "random_crop_position": (
        _folder("T.Compose([T.RandomCrop((9, 11), padding=1), T.ToTensor()])"),
        lambda image: [window for window in _windows(R.to_tensor(R.pad(1)(image)), 9, 11)],
    ),
    "horizontal_flip_half": (_folder("T.Compose([T.RandomHorizontalFlip(), T.ToTensor()])"),
                             lambda image: [R.to_tensor(image), R.to_tensor(R.hflip(image))]),
    "vertical_flip_half": (_folder("T.Compose([T.RandomVerticalFlip(), T.ToTensor()])"),
                           lambda image: [R.to_tensor(image), R.to_tensor(R.vflip(image))]),
}


# Conversions the rules once made: name -> (the case, how its converted text goes wrong)
SABOTAGE = {
    # transforms on the NumPy path (MindSpore's datasets yield arrays; torchvision hands PIL images)
    "numpy_path_resize": ("resize_pair", lambda code: code.replace("vision.Decode(to_pil=True)", "vision.Decode()")),
    "numpy_path_center_crop": ("center_crop_odd_margin",
                               lambda code: code.replace("vision.Decode(to_pil=True)", "vision.Decode()")),
    # MindSpore's datasets shuffle unless told not to
    "dataset_shuffles": ("cifar10_test", lambda code: code.replace("shuffle=False", "shuffle=None")),
    # MnistDataset's labels are uint32
    "uint32_labels": ("mnist_test", lambda code: code.replace("TypeCast(mindspore.int64)", "TypeCast(mindspore.uint32)")),
}


def _windows(chw: np.ndarray, height: int, width: int):
    for top in range(chw.shape[1] - height + 1):
        for left in range(chw.shape[2] - width + 1):
            yield chw[:, top:top + height, left:left + width]


# Runs in a subprocess (MindSpore): each converted snippet binds `loader`; its batches are pickled.
_DRIVER = r"""
import pickle, sys
import numpy as np
import mindspore
from mindspore import nn, ops
cases, root, out = pickle.loads(sys.stdin.buffer.read())
results = {}
for name, code in cases.items():
    scope = {"root": root, "folder": root + "/folder"}
    try:
        exec(code, scope)
        batches = []
        for batch in scope["loader"]:
            batches.append([column.asnumpy() for column in batch])
            if len(batches) == 3:  # CIFAR-10's test_batch has 10000 images
                break
        results[name] = batches
    except Exception as error:
        results[name] = f"{type(error).__name__}: {error}"
with open(out, "wb") as handle:
    pickle.dump(results, handle)
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("torchvision")
    R.write_image_folder(root / "folder")
    R.write_mnist(root)
    R.write_cifar10_test_batch(root)
    converted = {name: convert_full(snippet) for name, (snippet, _) in {**EXACT, **STRUCTURAL}.items()}
    for name, (case, wrong) in SABOTAGE.items():
        converted[name] = wrong(converted[case])
    out = root / "batches.pickle"
    env = {**os.environ, "GLOG_v": "3"}
    process = subprocess.run([sys.executable, "-c", _DRIVER], input=pickle.dumps((converted, str(root), str(out))),
                             cwd=ROOT, env=env, capture_output=True, timeout=900)
    assert process.returncode == 0, process.stderr.decode()[-3000:]
    with open(out, "rb") as handle:
        return root, converted, pickle.load(handle)


def _converted_without_torch(converted: str) -> None:
    assert "TODO(ms-migrate)" not in converted and "torch" not in converted, converted


def _differences(got, want) -> list[str]:
    """How MindSpore's batches differ from torchvision's (empty if they agree)."""
    if isinstance(got, str):
        return [f"MindSpore failed: {got}"]
    if len(got) != len(want):
        return [f"{len(got)} batches, torchvision {len(want)}"]
    problems = []
    for index, (batch, expected) in enumerate(zip(got, want)):
        for column, (g, e) in enumerate(zip(batch, expected)):
            where = f"batch {index} column {column}"
            if g.dtype != e.dtype or g.shape != e.shape:
                problems.append(f"{where}: {g.dtype}{g.shape}, torchvision {e.dtype}{e.shape}")
            elif not np.allclose(g, e, rtol=1e-6, atol=1e-6):
                problems.append(f"{where}: values differ by up to {np.abs(g.astype(float) - e.astype(float)).max():.3g}")
    return problems


def _check_exact(run, *names: str) -> None:
    root, converted, results = run
    for name in names:
        _converted_without_torch(converted[name])
        problems = _differences(results[name], EXACT[name][1](root))
        assert problems == [], f"{name}: " + "; ".join(problems) + f"\n{converted[name]}"


def _check_structural(run, name: str) -> None:
    root, converted, results = run
    _converted_without_torch(converted[name])
    got = results[name]
    assert not isinstance(got, str), f"{name}: MindSpore failed: {got}\n{converted[name]}"
    samples = R.image_folder(root / "folder")
    images = [image for batch in got for image in batch[0]]
    labels = [int(label) for batch in got for label in batch[1]]
    assert labels == [label for _, label in samples]
    for index, (image, (source, _)) in enumerate(zip(images, samples)):
        options = STRUCTURAL[name][1](source)
        assert any(o.shape == image.shape and np.allclose(o, image, atol=1e-6) for o in options), (
            f"{name}: image {index} is none of the {len(options)} outputs torchvision could give")


def test_image_folder(run):
    _check_exact(run, "image_folder", "image_folder_keywords")


def test_mnist(run):
    _check_exact(run, "mnist_test", "mnist_train")


def test_cifar10(run):
    _check_exact(run, "cifar10_test")


def test_resize(run):
    _check_exact(run, "resize_pair", "resize_short_side", "resize_up")


def test_center_crop(run):
    _check_exact(run, "center_crop_odd_margin", "center_crop_square")


def test_random_crop(run):
    _check_exact(run, "random_crop_padding", "random_crop_padding_pair_fill", "random_crop_padding_four")
    _check_structural(run, "random_crop_position")


def test_random_horizontal_flip(run):
    _check_exact(run, "horizontal_flip_always", "horizontal_flip_never")
    _check_structural(run, "horizontal_flip_half")


def test_random_vertical_flip(run):
    _check_exact(run, "vertical_flip_always", "vertical_flip_never")
    _check_structural(run, "vertical_flip_half")


def test_to_tensor(run):
    _check_exact(run, "image_folder", "mnist_test")


def test_normalize(run):
    _check_exact(run, "normalize", "mnist_train", "cifar10_test")


def test_compose(run):
    _check_exact(run, "compose_chain")


@pytest.mark.parametrize("mistake", sorted(SABOTAGE))
def test_a_wrong_conversion_fails(run, mistake):
    root, converted, results = run
    case, _ = SABOTAGE[mistake]
    assert converted[mistake] != converted[case], f"{mistake}: the sabotage changed nothing"
    assert _differences(results[mistake], EXACT[case][1](root)), f"{mistake}: still gives torchvision's batches"
