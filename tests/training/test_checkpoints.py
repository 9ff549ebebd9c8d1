"""Checkpoints in scripts: model and optimizer state, and the combined dict of
states and plain values that resumable training scripts save and load.

Golden text for each form (and markers for what cannot be converted), then
execution: tests/data/checkpoint_resume.py trains two models (Adam; SGD with
momentum) a few steps, saves one combined checkpoint, keeps training, then
loads the checkpoint into fresh models and optimizers and trains the same steps
again. Both the torch original and the converted script run from the same
initial weights; resuming must continue exactly like the uninterrupted run, and
MindSpore's losses must match torch's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.golden_files import ROOT
from tests.snippets import convert_full, convert_snippet
from transpiler.convert.pipeline import convert_source

RESUME_SCRIPT = ROOT / "tests" / "data" / "checkpoint_resume.py"
FRAMEWORK_RTOL = 1e-4  # same weights, same batches, 8 steps: float rounding only


def _golden(torch_code: str, expected: str) -> None:
    assert convert_snippet(textwrap.dedent(torch_code)) == textwrap.dedent(expected)
    _idempotent(torch_code)


def _idempotent(torch_code: str) -> None:
    once = convert_full(textwrap.dedent(torch_code))
    assert convert_source(once, "<again>").output == once


def _markers(code: str) -> list[str]:
    return [line.strip() for line in code.splitlines() if "TODO(ms-migrate)" in line]


# -- optimizer state, single-object forms --------------------------------------------
def test_optimizer_state_save_and_load():
    _golden(
        """\
        model = nn.Linear(3, 2)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        torch.save(optimizer.state_dict(), "optim.pth")
        optimizer.load_state_dict(torch.load("optim.pth"))
        """,
        """\
        model = nn.Dense(3, 2)
        optimizer = mindspore.experimental.optim.AdamW(
            model.trainable_params(), lr=0.01, weight_decay=0.0
        )
        mindspore.save_checkpoint(optimizer, "optim.pth")
        mindspore.load_param_into_net(optimizer, mindspore.load_checkpoint("optim.pth.ckpt"))
        """,
    )


def test_optimizer_state_through_variables():
    _golden(
        """\
        state = optimizer.state_dict()
        torch.save(state, path)
        restored = torch.load(path)
        optimizer.load_state_dict(restored)
        """,
        """\
        state = optimizer.parameters_dict()
        mindspore.save_checkpoint(state, path)
        restored = mindspore.load_checkpoint(str(path).removesuffix(".ckpt") + ".ckpt")
        mindspore.load_param_into_net(optimizer, restored)
        """,
    )


def test_scheduler_state_converts_with_the_functions_written_above_the_code():
    code = convert_snippet("scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1)\n"
                           "sd = scheduler.state_dict()\nscheduler.load_state_dict(sd)\n")
    assert not _markers(code), code
    assert "sd = lr_scheduler_state(scheduler)\nload_lr_scheduler_state(scheduler, sd)" in code
    assert code.count("def lr_scheduler_state(") == code.count("def load_lr_scheduler_state(") == 1


# -- the combined dict ----------------------------------------------------------------
COMBINED_TORCH = """\
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(3):
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
torch.save({"epoch": epoch, "model_state_dict": model.state_dict(),
            "optimizer_state_dict": optimizer.state_dict(), "loss": loss}, PATH)
checkpoint = torch.load(PATH)
model.load_state_dict(checkpoint["model_state_dict"])
optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
epoch = checkpoint["epoch"]
loss = checkpoint["loss"]
"""

COMBINED_MINDSPORE = """\
mindspore.save_checkpoint(
    {
        **{
            "model_state_dict." + name: value
            for name, value in model.parameters_dict().items()
        },
        **{
            "optimizer_state_dict." + name: value
            for name, value in optimizer.parameters_dict().items()
        },
    },
    PATH,
)
pathlib.Path(str(PATH) + ".pkl").write_bytes(
    pickle.dumps({"epoch": epoch, "loss": loss})
)
checkpoint = mindspore.load_checkpoint(str(PATH).removesuffix(".ckpt") + ".ckpt")
checkpoint = {
    "model_state_dict": {
        name.removeprefix("model_state_dict."): value
        for name, value in checkpoint.items()
        if name.startswith("model_state_dict.")
    },
    "optimizer_state_dict": {
        name.removeprefix("optimizer_state_dict."): value
        for name, value in checkpoint.items()
        if name.startswith("optimizer_state_dict.")
    },
    **pickle.loads(pathlib.Path(str(PATH) + ".pkl").read_bytes()),
}
mindspore.load_param_into_net(model, checkpoint["model_state_dict"])
mindspore.load_param_into_net(optimizer, checkpoint["optimizer_state_dict"])
epoch = checkpoint["epoch"]
loss = checkpoint["loss"]
"""


def test_combined_checkpoint_save_and_load():
    converted = convert_snippet(COMBINED_TORCH)
    # the loop is left to the training-loop rewrite; the checkpoint part is exact
    tail = converted[converted.index("mindspore.save_checkpoint("):]
    assert tail == COMBINED_MINDSPORE
    assert not _markers(converted)
    _idempotent(COMBINED_TORCH)


def test_load_without_a_save_in_the_file_uses_how_the_dict_is_read():
    code = convert_snippet(
        'checkpoint = torch.load("resume.pth")\n'
        'state = checkpoint["ema"]\n'
        'model.load_state_dict(checkpoint["model"])\n'
        'ema.load_state_dict(state)\n'
        'start = checkpoint["epoch"]\n'
    )
    assert not _markers(code), code
    assert code.startswith('checkpoint = mindspore.load_checkpoint("resume.pth.ckpt")\ncheckpoint = {\n')
    assert '"model": {\n        name.removeprefix("model."): value\n' in code
    assert '"ema": {\n        name.removeprefix("ema."): value\n' in code  # a state through a variable
    assert '**pickle.loads(pathlib.Path("resume.pth.pkl").read_bytes()),\n}' in code  # epoch, with its type
    assert 'mindspore.load_param_into_net(model, checkpoint["model"])' in code


@pytest.mark.parametrize(
    "torch_code, reason",
    [
        ('model.load_state_dict(torch.load("c.pth")["model"])', "assign the loaded checkpoint to a variable"),
        ('ck = torch.load("c.pth")\nmodel.load_state_dict(ck[key])', "computed keys"),
        ('torch.save({name: model.state_dict()}, "c.pth")', "literal string keys"),
        ('torch.save({**meta, "model": model.state_dict()}, "c.pth")', "literal string keys"),
    ],
)
def test_unconvertible_checkpoint_patterns_are_marked(torch_code, reason):
    code = convert_snippet(torch_code + "\n")
    assert any(reason in marker for marker in _markers(code)), code
    assert "torch." in code  # the statement is left as it was, never half-converted


def test_computed_keys_are_fine_when_the_save_shows_the_keys():
    code = convert_snippet(
        'torch.save({"a": net_a.state_dict(), "b": net_b.state_dict()}, p)\n'
        "ck = torch.load(p)\n"
        'for key, net in (("a", net_a), ("b", net_b)):\n'
        "    net.load_state_dict(ck[key])\n"
    )
    assert not _markers(code), code
    assert '"a": {\n        name.removeprefix("a."): value' in code


# -- execution: resuming continues like the uninterrupted run ---------------------------
def _run(framework: str, script, weights, checkpoint) -> list[list[float]]:
    env = {**os.environ, "GLOG_v": "3", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "tests.training.runner", framework, str(script), str(weights),
               "{}", json.dumps({"path": str(checkpoint)})]
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"{framework} run failed:\n{run.stderr[-4000:]}"
    line = next(l for l in run.stdout.splitlines() if l.startswith("LOSSES "))
    return json.loads(line[len("LOSSES "):])


def test_resumed_mindspore_training_continues_like_torch(tmp_path):
    converted = tmp_path / "checkpoint_resume.py"
    converted.write_text(convert_full(RESUME_SCRIPT.read_text(encoding="utf-8")), encoding="utf-8")
    assert not _markers(converted.read_text())
    torch_pairs = _run("torch", RESUME_SCRIPT, tmp_path, tmp_path / "torch.pth")
    ms_pairs = _run("mindspore", converted, tmp_path, tmp_path / "mindspore.ckpt")
    assert len(torch_pairs) == len(ms_pairs) == 8  # 4 steps after the checkpoint, for each of two models
    for uninterrupted, resumed in ms_pairs:
        assert resumed == pytest.approx(uninterrupted, rel=1e-6)
    for (torch_loss, _), (ms_loss, _) in zip(torch_pairs, ms_pairs):
        assert ms_loss == pytest.approx(torch_loss, rel=FRAMEWORK_RTOL)


def test_training_sample_saves_and_reloads_its_checkpoint(tmp_path):
    """Each framework trains an epoch from the same weights and saves its
    checkpoint; each file reloads, strictly, into a fresh model and optimizer,
    and what it restores is the trained state, the same in both frameworks.
    The values that are not states (epoch, loss) come back with their types."""
    import pickle

    import mindspore
    import numpy as np
    import torch

    from tests.conversion import load
    from tests.golden_files import convert_sample
    from transpiler.proof.weights import convert_state_dict

    sample = ROOT / "samples" / "train_mnist_cnn.py"
    converted = tmp_path / "train_mnist_cnn.py"
    converted.write_text(convert_sample(sample), encoding="utf-8")
    for framework, script, name in (("torch", sample, "torch.pth"), ("mindspore", converted, "mindspore.ckpt")):
        env = {**os.environ, "GLOG_v": "3", "PYTHONPATH": str(ROOT)}
        train = {"epochs": 1, "shuffle": False, "checkpoint": str(tmp_path / name)}
        command = [sys.executable, "-m", "tests.training.runner", framework, str(script), str(tmp_path),
                   "{}", json.dumps(train)]
        run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, f"{framework} run failed:\n{run.stderr[-4000:]}"

    saved_torch = torch.load(tmp_path / "torch.pth", weights_only=False)
    saved_ms = mindspore.load_checkpoint(str(tmp_path / "mindspore.ckpt"))
    values = pickle.loads((tmp_path / "mindspore.ckpt.pkl").read_bytes())
    assert type(values["epoch"]) is int and values["epoch"] == saved_torch["epoch"] == 0
    assert isinstance(values["loss"], mindspore.Tensor)  # torch saved a tensor
    assert float(values["loss"].asnumpy()) == pytest.approx(saved_torch["loss"].item(), rel=FRAMEWORK_RTOL)

    def part(prefix):
        return {k.removeprefix(prefix): v for k, v in saved_ms.items() if k.startswith(prefix)}

    torch_model = load(sample).ConvNet()
    torch_model.load_state_dict(saved_torch["model_state_dict"])
    ms_module = load(converted)
    ms_model = ms_module.ConvNet()
    assert mindspore.load_param_into_net(ms_model, part("model_state_dict."), strict_load=True) == ([], [])
    trained = convert_state_dict(torch_model, ms_module.ConvNet())
    with np.load(tmp_path / "model_0.npz") as initial:
        initial_fc = initial["fc.weight"]
    # 10 Adam steps of lr 1e-3 move a weight by up to 1e-2; where a gradient is ~0, Adam's normalised
    # step amplifies float rounding: max abs difference 2.5e-5 measured
    for name, param in ms_model.parameters_dict().items():
        np.testing.assert_allclose(param.asnumpy(), trained[name].asnumpy(), rtol=1e-3, atol=1e-4, err_msg=name)
    assert not np.allclose(ms_model.fc.weight.asnumpy(), initial_fc, atol=1e-4)  # the trained weights, not the first
    images = np.random.default_rng(0).standard_normal((4, 1, 28, 28)).astype(np.float32)
    torch_model.eval()
    ms_model.set_train(False)
    with torch.no_grad():
        expected = torch_model(torch.from_numpy(images)).numpy()
    # the same weight differences reach the logits (max abs 2.7e-5 measured)
    np.testing.assert_allclose(ms_model(mindspore.Tensor(images)).asnumpy(), expected, rtol=1e-3, atol=1e-4)

    # Adam's moments reload into a fresh optimizer and are torch's (fc.weight is torch's parameter 4)
    optimizer = mindspore.experimental.optim.Adam(ms_model.trainable_params(), lr=1e-3)
    optimizer_state = part("optimizer_state_dict.")
    assert mindspore.load_param_into_net(optimizer, optimizer_state, strict_load=True)[0] == []
    moments = dict(optimizer.parameters_and_names())
    for moment in ("exp_avg", "exp_avg_sq"):
        restored = moments[f"{moment}.fc.weight"].asnumpy()
        np.testing.assert_array_equal(restored, optimizer_state[f"{moment}.fc.weight"].asnumpy())
        expected = saved_torch["optimizer_state_dict"]["state"][4][moment].numpy()
        # gradients agree to float rounding: within 1e-4 of the moment's largest value (4.5e-5 measured)
        np.testing.assert_allclose(restored, expected, rtol=0, atol=1e-4 * np.abs(expected).max(), err_msg=moment)


# -- the loss scaler's state ------------------------------------------------------------
SCALER_TORCH = """\
import torch
import torch.nn as nn


def save_and_restore(path):
    model = nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    {changes}
    torch.save({{"model": model.state_dict(), "scaler": scaler.state_dict(), "epoch": 3}}, path)
    resumed = torch.amp.GradScaler("cpu")
    checkpoint = torch.load(path)
    resumed.load_state_dict(checkpoint["scaler"])
    return resumed, checkpoint["epoch"]
"""


def test_a_loss_scaler_state_comes_back_from_the_checkpoint(tmp_path):
    """torch.amp.GradScaler's state (its scale and growth tracker) becomes the
    Parameters of mindspore.amp.DynamicLossScaler (scale_value, counter): saved
    with the checkpoint, restored into a fresh scaler. (A "cpu" scaler: a CUDA one
    scales only off the CPU, as torch's disables itself without CUDA.)"""
    code = convert_full(SCALER_TORCH.format(changes="pass"))
    assert not _markers(code) and "scaler.parameters_dict" not in code
    # the scale halves on an overflow and the counter counts finite steps: change both before saving
    code = code.replace("    pass\n", "    scaler.adjust(mindspore.Tensor(False))\n"
                                     "    scaler.adjust(mindspore.Tensor(True))\n", 1)
    converted = tmp_path / "scaler_checkpoint.py"
    converted.write_text(code + textwrap.dedent("""
        resumed, epoch = save_and_restore(__import__("sys").argv[1])
        print("RESTORED", float(resumed.scale_value), int(resumed.counter), type(epoch).__name__)
        """), encoding="utf-8")
    env = {**os.environ, "GLOG_v": "3"}
    run = subprocess.run([sys.executable, str(converted), str(tmp_path / "ckpt.pt")], capture_output=True, text=True,
                         env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    line = next(l for l in run.stdout.splitlines() if l.startswith("RESTORED "))
    assert line.split()[1:] == ["32768.0", "1", "int"]  # a fresh scaler would say 65536.0 0


# -- checkpoint files found by pattern (pyGAT keeps its best epoch) -----------------------
KEEP_BEST = '''\
import glob
import os

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.ones(8, 3), torch.zeros(8, 1)
sums = []
for epoch in range(4):
    optimizer.zero_grad()
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
    torch.save(model.state_dict(), '{}.pkl'.format(epoch))
    sums.append(float(model.weight.sum()))
best_epoch = 1
for file in glob.glob('*.pkl'):
    if int(file.split('.')[0]) != best_epoch:
        os.remove(file)
model.load_state_dict(torch.load('{}.pkl'.format(best_epoch)))
print("RESTORED", float(model.weight.sum()) == sums[best_epoch])
'''


def test_a_glob_for_saved_checkpoints_finds_mindspores_files(tmp_path):
    """MindSpore appends .ckpt to the saved names: the glob that deletes every epoch but the
    best follows it, so the converted script leaves one checkpoint, as torch's does."""
    converted = convert_source(KEEP_BEST, "keep_best.py").output
    assert "glob.glob('*.pkl.ckpt')" in converted, converted
    assert "mindspore.load_checkpoint('{}.pkl.ckpt'.format(best_epoch))" in converted, converted
    assert convert_source(converted, "<again>").output == converted
    for side, code in (("torch", KEEP_BEST), ("mindspore", converted)):
        run_dir = tmp_path / side
        run_dir.mkdir()
        (run_dir / "keep_best.py").write_text(code, encoding="utf-8")
        launch = ([sys.executable, "keep_best.py"] if side == "torch" else
                  [sys.executable, "-c", "from transpiler.proof.no_torch import block_torch; block_torch(); "
                                         "import runpy; runpy.run_path('keep_best.py', run_name='__main__')"])
        run = subprocess.run(launch, cwd=run_dir, capture_output=True, text=True, timeout=300,
                             env={**os.environ, "GLOG_v": "3", "PYTHONPATH": str(ROOT)})
        assert run.returncode == 0, run.stderr[-3000:]
        assert "RESTORED True" in run.stdout
    assert sorted(os.listdir(tmp_path / "torch")) == ["1.pkl", "keep_best.py"]
    assert sorted(os.listdir(tmp_path / "mindspore")) == ["1.pkl.ckpt", "keep_best.py"]
