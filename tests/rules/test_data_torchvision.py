"""torchvision transforms and datasets -> mindspore.dataset. torchvision is not
installed here (no CPU build on this machine's mirror), so the converted
transforms run under mindspore.dataset on synthetic images and are compared
with what torchvision computes, written out in NumPy."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np

from tests.snippets import convert_snippet

TRANSFORMS = (
    "import torchvision.transforms as T\n"
    "tf = T.Compose([T.CenterCrop(4), T.ToTensor(), T.Normalize((0.5, 0.4, 0.3), (0.25, 0.2, 0.1))])"
)


def test_transform_pipeline_converts_and_computes_what_torchvision_does(tmp_path):
    converted = convert_snippet(TRANSFORMS)
    assert "torchvision" not in converted and "TODO(ms-migrate)" not in converted
    image = np.arange(6 * 6 * 3, dtype=np.uint8).reshape(6, 6, 3) * 2
    # torchvision: crop the centre (HWC), ToTensor -> CHW in [0, 1], normalise per channel
    expected = image[1:5, 1:5].transpose(2, 0, 1) / 255.0
    expected = (expected - np.array([0.5, 0.4, 0.3])[:, None, None]) / np.array([0.25, 0.2, 0.1])[:, None, None]
    script = (
        "import json, numpy as np, mindspore\nfrom mindspore import nn, ops\n"
        + converted
        + "\nimage = np.arange(6 * 6 * 3, dtype=np.uint8).reshape(6, 6, 3) * 2\n"
        "data = mindspore.dataset.GeneratorDataset([(image,)], column_names=['image'], shuffle=False)\n"
        "data = data.map(operations=tf, input_columns='image')\n"
        "out = next(iter(data))[0].asnumpy()\n"
        "print('RESULT ' + json.dumps(out.tolist()))\n"
    )
    env = {**os.environ, "GLOG_v": "3"}
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    actual = np.array(json.loads(next(l for l in run.stdout.splitlines() if l.startswith("RESULT "))[7:]))
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


def test_datasets_become_mindspore_pipelines_and_their_loaders_batch():
    converted = convert_snippet(
        "from torchvision import datasets, transforms\n"
        "train_set = datasets.MNIST('data', train=True, download=True, transform=transforms.ToTensor())\n"
        "loader = torch.utils.data.DataLoader(train_set, batch_size=64, shuffle=True)\n"
        "folder = datasets.ImageFolder('images', transform=tf)\n"
        "aug = transforms.ColorJitter(0.4)\n"
    )
    lines = converted.strip().splitlines()
    last = lines[-1]
    assert lines[0] == "class NotConverted:"  # what the marked statement defines fails where it is used
    assert lines[lines.index("train_set = ("):] == [
        "train_set = (",
        '    mindspore.dataset.MnistDataset("data/MNIST/raw", usage="train", shuffle=False)',
        "    .map(",
        "        operations=mindspore.dataset.transforms.TypeCast(mindspore.int64),",
        '        input_columns="label",',
        "    )",
        "    .map(",
        "        operations=mindspore.dataset.transforms.Compose(",
        "            [mindspore.dataset.vision.ToPIL(), mindspore.dataset.vision.ToTensor()]",
        "        ),",
        '        input_columns="image",',
        "    )",
        ")",
        "loader = train_set.shuffle(train_set.get_dataset_size()).batch(64, drop_remainder=False)",
        "folder = (",
        "    mindspore.dataset.ImageFolderDataset(",
        '        "images",',
        "        shuffle=False,",
        '        extensions=".jpg .jpeg .png .ppm .bmp .pgm .tif .tiff .webp .JPG .JPEG .PNG .PPM .BMP .PGM .TIF .TIFF .WEBP".split(),',
        "    )",
        "    .map(",
        "        operations=mindspore.dataset.transforms.TypeCast(mindspore.int64),",
        '        input_columns="label",',
        "    )",
        "    .map(",
        "        operations=mindspore.dataset.transforms.Compose(",
        "            [mindspore.dataset.vision.Decode(to_pil=True), tf]",
        "        ),",
        '        input_columns="image",',
        "    )",
        ")",
        "# TODO(ms-migrate): torchvision.transforms.ColorJitter: no MindSpore rule for this API",
        "try:",
        "    from torchvision import transforms",
        "    aug = transforms.ColorJitter(0.4)",
        "except ImportError:",
        last,
    ]
    # the line of the marker in the whole file (tests/convert/test_module_level_markers.py checks it)
    assert re.fullmatch(r'    aug = NotConverted\("aug", "<example>:\d+: torchvision.transforms.ColorJitter: '
                        r'no MindSpore rule for this API"\)', last)
