"""benchmarks/training_scripts.py: the corpus is well formed, the table prints,
verdicts and failure places are read from a run's output (no network, no
training run)."""

from __future__ import annotations

import io
import os
import re

import pytest

from benchmarks.training_scripts import SCRIPTS, SOURCES, data, script_by_id
from benchmarks.training_scripts.run import failure, is_marked, verdict
from benchmarks.training_scripts.table import print_table

RESERVED = {
    "openai/whisper", "openai/clip", "facebookresearch/segment-anything", "megvii-basedetection/yolox",
    "karpathy/llama2.c", "google/gemma_pytorch", "facebookresearch/dinov2", "johnma2006/mamba-minimal",
    "openai/guided-diffusion", "compvis/latent-diffusion", "facebookresearch/detr", "microsoft/lora",
    "tkipf/pygcn", "pytorch/examples", "karpathy/nanogpt", "karpathy/mingpt", "karpathy/makemore",
    "kuangliu/pytorch-cifar", "weiaicunzai/pytorch-cifar100", "yunjey/pytorch-tutorial", "lucidrains/vit-pytorch",
    "eriklindernoren/pytorch-gan", "antixk/pytorch-vae", "jadore801120/attention-is-all-you-need-pytorch",
    "milesial/pytorch-unet", "akamaster/pytorch_resnet_cifar10", "spro/char-rnn.pytorch", "paddlepaddle/paconvert",
}


def test_corpus_entries_are_well_formed():
    sources = {s.name: s for s in SOURCES}
    assert len(sources) == len(SOURCES)
    assert len({s.id for s in SCRIPTS}) == len(SCRIPTS)
    for source in SOURCES:
        assert source.kind == "github" and re.fullmatch(r"[0-9a-f]{40}", source.pin), source
        assert source.name.lower() not in RESERVED
    for script in SCRIPTS:
        assert script.source in sources, script.id
        assert script.path.endswith(".py") and not os.path.isabs(script.path)
        pattern = re.compile(script.loss)
        assert pattern.groups >= 1, script.id
        assert not script.data or callable(getattr(data, script.data, None)), script.id
        assert all(re.fullmatch(r"[\w.-]+==[\w.]+", p) for p in script.packages), script.id
        assert script.stop_after == 0 or script.stop_after >= 2
        assert script_by_id(script.id) is script
        by_hand = os.path.join(os.path.dirname(data.__file__), "by_hand", script.by_hand)
        assert not script.by_hand or os.path.isfile(by_hand), script.id
    with pytest.raises(KeyError):
        script_by_id("nothing")


@pytest.mark.parametrize("line, script_id, value", [
    ("Epoch: 0003 loss_train: 1.0765 acc_train: 0.4286", "pygat", 1.0765),
    ("12: 2.8731689453125", "xt_copy", 2.8731689453125),
    ("Loss: 5.12345; logP: -4.1; logdet: 2.0; lr: 0.0001000", "glow", 5.12345),
    ("Epoch: 1000 cost = 0.117934", "nnlm", 0.117934),
    ("Train Epoch: 2 [0/256 (0%)]\tLoss: 2.301234", "cnn_mnist", 2.301234),
    ("499 3.2461e-05", "two_layer_optim", 3.2461e-05),
    ("Finish 3 epoch, Loss: 0.512345, Acc: 0.812500", "fashion_mlp", 0.512345),
    ("step 300: train loss 2.5121, val loss 2.5300", "bigram", 2.5121),
])
def test_loss_patterns_read_what_the_scripts_print(line, script_id, value):
    match = re.search(script_by_id(script_id).loss, line, re.MULTILINE)
    assert match and float(match.group(1)) == value


def test_the_data_is_written_in_the_layouts_the_scripts_read(tmp_path):
    data.cora(str(tmp_path), nodes=1500, features=6)
    content = (tmp_path / "data/cora/cora.content").read_text().splitlines()
    assert len(content) == 1500 and len(content[0].split("\t")) == 1 + 6 + 1
    ids = {line.split("\t")[0] for line in content}
    cites = [line.split("\t") for line in (tmp_path / "data/cora/cora.cites").read_text().splitlines()]
    assert cites and all(a in ids and b in ids for a, b in cites)
    data.planetoid(str(tmp_path), train=10, known=520, test=20, features=6)
    assert (tmp_path / "data/ind.cora.test.index").read_text().split() == [str(i) for i in range(520, 540)]
    data.imagenet_folder(str(tmp_path), per_class=2, size=8)
    assert sorted(os.listdir(tmp_path / "imnet/val")) == ["class0", "class1"]
    data.mnist_raw(str(tmp_path))
    assert (tmp_path / "data/MNIST/raw/train-images-idx3-ubyte").stat().st_size == 16 + 256 * 28 * 28
    data.gpt2_token_shards(str(tmp_path), tokens=64)
    import numpy as np

    header = np.fromfile(tmp_path / "data/train_000.bin", dtype=np.int32, count=256)
    assert list(header[:3]) == [20240520, 1, 64]


TRACEBACK = """\
Traceback (most recent call last):
  File "{launch}", line 30, in <module>
    runpy.run_path(script, run_name="__main__")
  File "{root}/train.py", line 44, in <module>
    adj, features = load_data()
  File "{root}/utils.py", line 5, in load_data
    x = undefined_name
NameError: name 'undefined_name' is not defined
"""


def test_a_failure_is_placed_at_the_innermost_line_of_the_run_and_a_marker_is_recognised(tmp_path):
    root = tmp_path / "runs" / "demo" / "mindspore"
    root.mkdir(parents=True)
    (root / "utils.py").write_text("import mindspore\n\n\n# TODO(ms-migrate): torch.foo: no equivalent\n"
                                   "x = undefined_name\n")
    output = TRACEBACK.format(launch="/x/launch.py", root=root)
    where, error = failure(output, str(root))
    assert (where, error) == ("utils.py:5", "NameError: name 'undefined_name' is not defined")
    assert is_marked(where, str(root), error)
    assert not is_marked("utils.py:1", str(root), error)
    result = verdict("mindspore", 1, False, False, [], output, str(root), 3.14)
    assert result["verdict"] == "marked" and result["where"] == "utils.py:5" and result["seconds"] == 3.1


def test_verdicts_of_runs_that_end():
    assert verdict("torch", 0, False, False, [2.0, 1.0], "", "/", 1)["verdict"] == "trains"
    assert verdict("torch", 0, False, False, [1.0, 2.0], "", "/", 1)["verdict"] == "flat"
    assert verdict("torch", 0, False, False, [1.0], "", "/", 1)["verdict"] == "no-loss"
    assert verdict("torch", -9, True, False, [3.0, 2.0], "", "/", 1)["verdict"] == "trains"  # stopped after N losses
    assert verdict("torch", -9, False, True, [3.0, 2.0], "", "/", 1)["verdict"] == "timeout"


def test_the_table_prints_each_side_and_the_failures():
    rows = [
        {"id": "pygat", "source": "Diego999/pyGAT",
         "torch": {"verdict": "trains", "first": 1.26, "last": 1.1, "seconds": 10.0},
         "mindspore": {"verdict": "trains", "first": 1.25, "last": 1.0, "seconds": 25.0},
         "by_hand": {"verdict": "trains", "first": 1.24, "last": 1.0, "seconds": 20.0}},
        {"id": "glow", "source": "rosinality/glow-pytorch",
         "torch": {"verdict": "trains", "first": 5.0, "last": 4.0, "seconds": 2.0},
         "mindspore": {"verdict": "fails", "first": None, "last": None, "seconds": 4.0, "where": "model.py:12",
                       "error": "TypeError: bad"}},
        {"id": "gone", "source": "a/b", "verdict": "source", "why": "source not available: get github:a/b"},
    ]
    out = io.StringIO()
    print_table(rows, out)
    text = out.getvalue()
    assert re.search(r"pygat\s+Diego999/pyGAT\s+trains\s+1\.26->1\.1\s+10\.0\s+trains\s+1\.25->1\s+25\.0\s+2\.5", text)
    assert "3 scripts from 3 repositories" in text
    assert "pygat            written by hand in MindSpore: trains 1.24->1 20.0 s; converted/by hand 1.25" in text
    assert "glow: fails at model.py:12: TypeError: bad" in text
    assert "gone: source: source not available" in text


def test_the_files_each_side_wrote_are_compared():
    from benchmarks.training_scripts.table import written_files

    row = {"torch": {"written": ["7.pkl", "log.txt"]}, "mindspore": {"written": ["7.pkl.ckpt", "log.txt"]}}
    assert written_files(row) == "files written: torch 2, mindspore 2: the same (1 checkpoints with MindSpore's .ckpt)"
    row = {"torch": {"written": ["7.pkl"]}, "mindspore": {"written": ["0.pkl.ckpt", "7.pkl.ckpt"]}}
    assert written_files(row) == "files written: torch 1, mindspore 2; only converted: 0.pkl.ckpt"
    row = {"torch": {"written": ["sample/000101.png"]}, "mindspore": {"written": []}}
    assert written_files(row) == "files written: torch 1, mindspore 0; not written: sample/000101.png"
    assert written_files({"torch": {"written": []}, "mindspore": {"written": []}}) == ""
    assert written_files({"torch": {}, "mindspore": {}}) == ""  # rows saved before the benchmark recorded files


def test_a_run_records_the_files_it_wrote(tmp_path):
    from benchmarks.training_scripts.run import run_side
    from benchmarks.training_scripts.spec import Script

    run = tmp_path / "runs" / "toy" / "torch"
    run.mkdir(parents=True)
    (run / "data.txt").write_text("written before the run\n")
    (run / "toy.py").write_text("import os\nos.makedirs('out', exist_ok=True)\nopen('out/model.pt', 'w').write('w')\n"
                                "print('loss 2.0')\nprint('loss 1.0')\n")
    script = Script("toy", "a/b", "toy.py", r"loss ([\d.]+)")
    result = run_side(script, "torch", str(run), [], 60)
    assert result["verdict"] == "trains", result
    assert result["written"] == ["out/model.pt"]
