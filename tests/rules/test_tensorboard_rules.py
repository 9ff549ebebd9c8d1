"""SummaryWriter's add_* methods convert to tensorboardX calls that log what
torch's writer logs.

One program logs the same values through every add_* method: under torch with
torch.utils.tensorboard, and converted by ms-migrate under MindSpore with
tensorboardX. Both runs write event files (and the projector files of
add_embedding), which are read back with TensorBoard's own reader and compared:
tags, steps, scalar values, histogram buckets, encoded images and videos, audio
samples, PR-curve tensors, embedding tables. Each test below is the proof
(``proven_by``) of one method's rule in rewrite_rules/training/tensorboard.py.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import wave

import numpy as np
import pytest
from PIL import Image
from google.protobuf import text_format
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from tensorboard.plugins.projector.projector_config_pb2 import ProjectorConfig
from tensorboard.util import tensor_util

from tests.golden_files import ROOT
from transpiler.convert.pipeline import convert_source

PROGRAM = """import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter

values = np.load("../values.npz")
loss = torch.tensor(values["loss"])
weights = torch.tensor(values["weights"])
image = torch.tensor(values["image"])
images = torch.tensor(values["images"])
video = torch.tensor(values["video"])
sound = torch.tensor(values["sound"])
labels = torch.tensor(values["labels"])
predictions = torch.tensor(values["predictions"])
features = torch.tensor(values["features"])
thumbnails = torch.tensor(values["thumbnails"])

writer = SummaryWriter("logs")
for step in range(3):
    writer.add_scalar("loss", loss * step, step)
    writer.add_scalars("losses", {"train": loss * step, "val": 0.5}, step)
writer.add_histogram("weights", weights, 1)
writer.add_image("image", image, 2)
writer.add_images("images", images, 2)
writer.add_video("video", video, 3, fps=4)
writer.add_audio("sound", sound, 4, sample_rate=8000)
writer.add_pr_curve("pr", labels, predictions, 5)
writer.add_embedding(features, metadata=["a", "b", "c", "d", "e"], label_img=thumbnails, global_step=6, tag="emb")
writer.close()
"""


def _values(path) -> None:
    rng = np.random.default_rng(0)
    uniform = lambda *shape: rng.uniform(0, 1, shape).astype(np.float32)  # noqa: E731
    np.savez(
        path, loss=np.float32(0.731), weights=rng.standard_normal(200).astype(np.float32), image=uniform(3, 8, 10),
        images=uniform(4, 3, 8, 10), video=uniform(1, 4, 3, 8, 10),
        sound=rng.uniform(-1, 1, (1, 800)).astype(np.float32),  # torch's shape: (1, L)
        labels=rng.integers(0, 2, 50), predictions=uniform(50),
        features=rng.standard_normal((5, 6)).astype(np.float32), thumbnails=uniform(5, 3, 4, 4),
    )


def _run(program: str, cwd) -> None:
    env = {**os.environ, "GLOG_v": "3", "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", program], cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]


class Logged:
    """What one run logged: per run directory (relative to logs/), TensorBoard's accumulator."""

    def __init__(self, logs):
        self.logs = logs
        self.runs = {}
        for root, _, files in os.walk(logs):
            if any(name.startswith("events.out.tfevents") for name in files):
                accumulator = EventAccumulator(root, size_guidance={"scalars": 0, "histograms": 0, "images": 0,
                                                                    "audio": 0, "tensors": 0})
                accumulator.Reload()
                self.runs[os.path.relpath(root, logs)] = accumulator

    @property
    def main(self) -> EventAccumulator:
        return self.runs["."]


@pytest.fixture(scope="module")
def logged(tmp_path_factory):
    """(torch's logs, the converted program's logs)."""
    folder = tmp_path_factory.mktemp("tensorboard")
    _values(folder / "values.npz")
    converted = convert_source(PROGRAM, "program.py").output
    assert "TODO(ms-migrate)" not in converted and "import torch" not in converted, converted
    for side, program in (("torch", PROGRAM), ("mindspore", converted)):
        (folder / side).mkdir()
        _run(program, folder / side)
    return Logged(folder / "torch" / "logs"), Logged(folder / "mindspore" / "logs")


def _tags(accumulator: EventAccumulator) -> dict:
    return {kind: sorted(tags) for kind, tags in accumulator.Tags().items() if tags}


def test_the_same_tags_are_logged(logged):
    torch_logs, ms_logs = logged
    assert _tags(ms_logs.main) == _tags(torch_logs.main)


def test_add_scalar(logged):
    torch_logs, ms_logs = logged
    expected = [(s.step, s.value) for s in torch_logs.main.Scalars("loss")]
    assert [(s.step, s.value) for s in ms_logs.main.Scalars("loss")] == expected
    assert expected == [(0, 0.0), (1, pytest.approx(0.731)), (2, pytest.approx(1.462))]


def test_add_scalars(logged):
    """One run directory per key, tag main_tag in each. Known difference, declared in the rule's
    notes: torch names the directory main_tag_key, tensorboardX main_tag/key."""
    torch_logs, ms_logs = logged
    assert sorted(torch_logs.runs) == [".", "losses_train", "losses_val"]
    assert sorted(ms_logs.runs) == [".", "losses/train", "losses/val"]
    for key in ("train", "val"):
        torch_run, ms_run = torch_logs.runs[f"losses_{key}"], ms_logs.runs[f"losses/{key}"]
        assert _tags(ms_run) == _tags(torch_run) == {"scalars": ["losses"]}
        assert [(s.step, s.value) for s in ms_run.Scalars("losses")] == \
               [(s.step, s.value) for s in torch_run.Scalars("losses")]


def test_add_histogram(logged):
    torch_logs, ms_logs = logged
    (t,), (m,) = torch_logs.main.Histograms("weights"), ms_logs.main.Histograms("weights")
    assert m.step == t.step == 1
    assert m.histogram_value == t.histogram_value  # min, max, num, sum, sum of squares, bucket limits and counts
    assert t.histogram_value.num == 200


def _images(accumulator: EventAccumulator, tag: str) -> list:
    return [(e.step, e.width, e.height, e.encoded_image_string) for e in accumulator.Images(tag)]


def test_add_image(logged):
    torch_logs, ms_logs = logged
    assert _images(ms_logs.main, "image") == _images(torch_logs.main, "image")
    assert [(step, w, h) for step, w, h, _ in _images(torch_logs.main, "image")] == [(2, 10, 8)]


def test_add_images(logged):
    torch_logs, ms_logs = logged
    assert _images(ms_logs.main, "images") == _images(torch_logs.main, "images")
    assert [(step, w, h) for step, w, h, _ in _images(torch_logs.main, "images")] == [(2, 40, 8)]  # a grid of 4


def test_add_video(logged):
    """The frames are compared; fps is not: with moviepy 1 and imageio 2.38 both writers store a
    frame duration of 0 in the GIF (moviepy passes seconds where imageio now takes milliseconds)."""
    torch_logs, ms_logs = logged
    assert _images(ms_logs.main, "video") == _images(torch_logs.main, "video")  # the same GIF, byte for byte
    assert _images(torch_logs.main, "video")[0][3].startswith(b"GIF")


def _samples(event) -> np.ndarray:
    with wave.open(io.BytesIO(event.encoded_audio_string)) as sound:
        assert (sound.getnchannels(), sound.getsampwidth()) == (1, 2)
        return np.frombuffer(sound.readframes(sound.getnframes()), dtype="<i2").astype(np.int64)


def test_add_audio(logged):
    """Known difference, declared in the rule's notes: tensorboardX's soundfile rounds the
    samples to 16 bits where torch truncates, so a sample may differ by 2 in 32767."""
    torch_logs, ms_logs = logged
    (t,), (m,) = torch_logs.main.Audio("sound"), ms_logs.main.Audio("sound")
    assert (m.step, m.sample_rate, m.length_frames, m.content_type) == (4, 8000, 800, "audio/wav")
    assert (t.step, t.sample_rate, t.length_frames, t.content_type) == (4, 8000, 800, "audio/wav")
    torch_samples, ms_samples = _samples(t), _samples(m)
    assert torch_samples.shape == ms_samples.shape == (800,)
    assert np.abs(torch_samples - ms_samples).max() <= 2


def test_add_pr_curve(logged):
    torch_logs, ms_logs = logged
    (t,), (m,) = torch_logs.main.Tensors("pr"), ms_logs.main.Tensors("pr")
    assert m.step == t.step == 5
    torch_curve, ms_curve = tensor_util.make_ndarray(t.tensor_proto), tensor_util.make_ndarray(m.tensor_proto)
    assert torch_curve.shape == ms_curve.shape == (6, 127)  # TP, FP, TN, FN, precision, recall per threshold
    np.testing.assert_allclose(ms_curve, torch_curve, rtol=1e-6)


def _projector(logs) -> ProjectorConfig:
    return text_format.Parse((logs / "projector_config.pbtxt").read_text(), ProjectorConfig())


def test_add_embedding(logged):
    torch_logs, ms_logs = logged
    assert _projector(ms_logs.logs) == _projector(torch_logs.logs)
    (embedding,) = _projector(torch_logs.logs).embeddings
    assert embedding.tensor_name == "emb:00006"
    for path in (embedding.tensor_path, embedding.metadata_path):
        assert (ms_logs.logs / path).read_bytes() == (torch_logs.logs / path).read_bytes(), path
    table = np.loadtxt(torch_logs.logs / embedding.tensor_path)
    np.testing.assert_allclose(table, np.load(torch_logs.logs.parents[1] / "values.npz")["features"], rtol=1e-6)
    # the sprite: 5 thumbnails of 4x4 in a 3x3 grid, row by row. Only the cells TensorBoard shows are
    # compared: tensorboardX leaves the 4 unused cells uninitialised (np.ndarray), torch fills them with zeros
    size, (width, height) = embedding.sprite.single_image_dim, (4, 4)
    assert list(size) == [width, height]
    torch_sprite, ms_sprite = (np.asarray(Image.open(logs.logs / embedding.sprite.image_path))
                               for logs in (torch_logs, ms_logs))
    assert torch_sprite.shape == ms_sprite.shape == (12, 12, 3)
    for index in range(5):
        cell = np.s_[index // 3 * height:(index // 3 + 1) * height, index % 3 * width:(index % 3 + 1) * width]
        np.testing.assert_array_equal(ms_sprite[cell], torch_sprite[cell], err_msg=f"thumbnail {index}")


def test_the_one_new_requirement_is_named_on_its_import_line():
    """tensorboardX is the one package the converted program needs that the
    torch program did not (torch's writer needs tensorboard, which it keeps):
    the import line says so, and the requirements check finds nothing else."""
    from transpiler.convert.requirements import new_third_party_imports

    converted = convert_source(PROGRAM, "program.py").output
    line = next(line for line in converted.splitlines() if line.startswith("import tensorboardX"))
    assert "# new requirement: pip install tensorboardX" in line
    assert new_third_party_imports(PROGRAM, converted) == ["tensorboardX"]
    again = convert_source(converted, "program.py").output  # converted output read again: one comment
    assert again.count("new requirement") == 1
