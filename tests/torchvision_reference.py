"""What torchvision computes, written out with PIL and NumPy, and the small
dataset files it reads.

torchvision cannot be installed next to this machine's CPU build of torch (its
wheels need CUDA's libraries), so tests/rules/test_torchvision_rules.py compares the
converted MindSpore pipelines with this reference instead. Each function
follows the torchvision 0.28 code it names, line for line where it matters
(rounding of crop offsets, padding order, PIL's resampling, collate dtypes).

Files are written in the layouts torchvision reads: ``root/MNIST/raw`` idx
files, CIFAR-10's python pickles in ``root/cifar-10-batches-py`` (with the same
records in the binary version, ``root/cifar-10-batches-bin``, which is what
MindSpore reads), and an ImageFolder tree of tiny images.
"""

from __future__ import annotations

import os
import pickle
import struct
from pathlib import Path
from typing import Callable

import numpy as np
from PIL import Image

# -- files -------------------------------------------------------------------

IMAGE_SIZE = (13, 17)  # height, width of the ImageFolder images
# (class folder, file name, PIL mode it is saved in); "notes.txt" is not an image
# and ".PNG" is an upper-case extension: torchvision skips the first and keeps the second
FOLDER_FILES = (
    ("dog", "b.png", "RGB"),
    ("dog", "A.png", "RGB"),
    ("dog", "C.PNG", "RGB"),
    ("dog", "notes.txt", None),
    ("Cat", "x.png", "L"),
    ("Cat", "a1.png", "RGBA"),
    ("bird", "z.png", "P"),
    ("bird", "c.bmp", "RGB"),
    ("bird", "d.jpg", "RGB"),
)
MNIST_COUNTS = {"train": 7, "t10k": 5}
CIFAR_RECORDS = 10000  # MindSpore's Cifar10Dataset reads whole 10000-record files


def write_image_folder(root: Path) -> None:
    rng = np.random.default_rng(1)
    for folder, name, mode in FOLDER_FILES:
        (root / folder).mkdir(parents=True, exist_ok=True)
        if mode is None:
            (root / folder / name).write_text("not an image", encoding="utf-8")
            continue
        pixels = rng.integers(0, 256, (*IMAGE_SIZE, 3), dtype=np.uint8)
        Image.fromarray(pixels).convert(mode).save(root / folder / name)


def _write_idx(path: Path, array: np.ndarray) -> None:
    header = struct.pack(">HBB", 0, 8, array.ndim) + struct.pack(">" + "I" * array.ndim, *array.shape)
    path.write_bytes(header + array.astype(np.uint8).tobytes())


def write_mnist(root: Path) -> None:
    raw = root / "MNIST" / "raw"
    raw.mkdir(parents=True)
    rng = np.random.default_rng(2)
    for split, count in MNIST_COUNTS.items():
        _write_idx(raw / f"{split}-images-idx3-ubyte", rng.integers(0, 256, (count, 28, 28)))
        _write_idx(raw / f"{split}-labels-idx1-ubyte", rng.integers(0, 10, count))


def write_cifar10_test_batch(root: Path) -> None:
    """``test_batch`` in both versions: the python pickle (torchvision) and the binary file (MindSpore)."""
    index = np.arange(CIFAR_RECORDS * 3072, dtype=np.int64)
    data = ((index * 7919 + index // 3072 * 104729) % 251).astype(np.uint8).reshape(CIFAR_RECORDS, 3072)
    labels = [int(v) for v in np.arange(CIFAR_RECORDS) * 7 % 10]
    python, binary = root / "cifar-10-batches-py", root / "cifar-10-batches-bin"
    python.mkdir(parents=True)
    binary.mkdir(parents=True)
    with open(python / "test_batch", "wb") as handle:
        pickle.dump({"data": data, "labels": labels}, handle)  # the keys CIFAR-10's python-2 pickles load with
    with open(python / "batches.meta", "wb") as handle:
        pickle.dump({"label_names": [f"class{i}" for i in range(10)]}, handle)
    records = np.concatenate([np.array(labels, dtype=np.uint8)[:, None], data], axis=1)
    (binary / "test_batch.bin").write_bytes(records.tobytes())


# -- datasets: (PIL image, int label) in torchvision's order ------------------

# torchvision.datasets.folder.IMG_EXTENSIONS
IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def image_folder(root: Path) -> list[tuple[Image.Image, int]]:
    """DatasetFolder.find_classes / make_dataset / default_loader (pil_loader)."""
    classes = sorted(entry.name for entry in os.scandir(root) if entry.is_dir())
    samples = []
    for index, name in enumerate(classes):
        for folder, _, files in sorted(os.walk(root / name, followlinks=True)):
            for file in sorted(files):
                if file.lower().endswith(IMG_EXTENSIONS):
                    with open(os.path.join(folder, file), "rb") as handle:
                        samples.append((Image.open(handle).convert("RGB"), index))
    return samples


def _read_idx(path: Path) -> np.ndarray:
    data = path.read_bytes()
    ndim = data[3]
    shape = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(shape)


def mnist(root: Path, train: bool) -> list[tuple[Image.Image, int]]:
    """MNIST._load_data and __getitem__ (Image.fromarray(img, mode="L"))."""
    split = "train" if train else "t10k"
    raw = root / "MNIST" / "raw"
    images, labels = _read_idx(raw / f"{split}-images-idx3-ubyte"), _read_idx(raw / f"{split}-labels-idx1-ubyte")
    return [(Image.fromarray(image, mode="L"), int(label)) for image, label in zip(images, labels)]


def cifar10_test(root: Path, count: int) -> list[tuple[Image.Image, int]]:
    """CIFAR10.__init__ (train=False) and __getitem__: the first ``count`` records of test_batch."""
    with open(root / "cifar-10-batches-py" / "test_batch", "rb") as handle:
        entry = pickle.load(handle, encoding="latin1")
    data = np.vstack([entry["data"]]).reshape(-1, 3, 32, 32).transpose((0, 2, 3, 1))
    return [(Image.fromarray(data[i]), int(entry["labels"][i])) for i in range(count)]


# -- transforms (torchvision.transforms on PIL images) ------------------------

Transform = Callable


def resize(size) -> Transform:
    """Resize -> F.resize -> _compute_resized_output_size and F_pil.resize (BILINEAR)."""

    def apply(img: Image.Image) -> Image.Image:
        w, h = img.size
        if isinstance(size, int):
            short, long = (w, h) if w <= h else (h, w)
            new_short, new_long = size, int(size * long / short)
            new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
        else:
            new_h, new_w = size
        return img.resize((new_w, new_h), Image.BILINEAR)

    return apply


def center_crop(size) -> Transform:
    """F.center_crop for a crop no larger than the image (round() of the margins, as torchvision)."""
    crop_h, crop_w = (size, size) if isinstance(size, int) else size

    def apply(img: Image.Image) -> Image.Image:
        w, h = img.size
        top, left = int(round((h - crop_h) / 2.0)), int(round((w - crop_w) / 2.0))
        return img.crop((left, top, left + crop_w, top + crop_h))

    return apply


def pad(padding, fill=0) -> Transform:
    """F_pil.pad, constant mode: an int, (left/right, top/bottom) or (left, top, right, bottom)."""
    if isinstance(padding, int):
        left = top = right = bottom = padding
    elif len(padding) == 2:
        left = right = padding[0]
        top = bottom = padding[1]
    else:
        left, top, right, bottom = padding

    def apply(img: Image.Image) -> Image.Image:
        array = np.asarray(img)
        widths = ((top, bottom), (left, right)) + (((0, 0),) if array.ndim == 3 else ())
        return Image.fromarray(np.pad(array, widths, constant_values=fill))

    return apply


def hflip(img: Image.Image) -> Image.Image:
    return img.transpose(Image.FLIP_LEFT_RIGHT)


def vflip(img: Image.Image) -> Image.Image:
    return img.transpose(Image.FLIP_TOP_BOTTOM)


def to_tensor(img: Image.Image) -> np.ndarray:
    """F.to_tensor: CHW float32 in [0, 1]."""
    array = np.asarray(img, dtype=np.uint8)
    if array.ndim == 2:
        array = array[:, :, None]
    return (array.transpose(2, 0, 1).astype(np.float32) / 255).astype(np.float32)


def normalize(mean, std) -> Transform:
    mean, std = np.asarray(mean, np.float32)[:, None, None], np.asarray(std, np.float32)[:, None, None]
    return lambda x: ((x - mean) / std).astype(np.float32)


def compose(*transforms: Transform) -> Transform:
    def apply(img):
        for transform in transforms:
            img = transform(img)
        return img

    return apply


def batches(samples, transform: Transform, batch_size: int, limit: int | None = None) -> list[list[np.ndarray]]:
    """DataLoader(shuffle=False, drop_last=False) with default_collate: float32 images, int64 labels."""
    out = []
    for start in range(0, len(samples), batch_size):
        chunk = samples[start:start + batch_size]
        images = np.stack([transform(image) for image, _ in chunk])
        out.append([images, np.array([label for _, label in chunk], dtype=np.int64)])
        if limit is not None and len(out) == limit:
            break
    return out
