"""The training-tricks checklist, and parameter counts (from the code and by import)."""

from __future__ import annotations

import pathlib

import libcst as cst

from rewrite_rules.registry import load_rules
from tests.snippets import PRELUDE
from transpiler.analyze.facts import index_file
from transpiler.analyze.param_estimate import Estimator
from transpiler.analyze.runner import analyze_source, analyze_tree
from transpiler.convert.pipeline import _method_names
from transpiler.convert.names import analyse
from transpiler.convert.structural import is_module_base

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "analyze_fixtures"
TRAIN = FIXTURES / "project" / "train" / "train.py"
NET = FIXTURES / "project" / "models" / "net.py"


def _checklist(path: pathlib.Path):
    return analyze_source(path.read_text(), path.name).checklist


def test_training_script_checklist_covers_every_topic():
    items = _checklist(TRAIN)
    found = {(i.topic, i.name): i.detail for i in items}
    assert "lr=3e-4" in found[("optimizer", "torch.optim.AdamW")]
    assert "weight_decay=0.05" in found[("optimizer", "torch.optim.AdamW")]
    assert ("lr schedule", "torch.optim.lr_scheduler.CosineAnnealingLR") in found
    assert found[("loss", "torch.nn.CrossEntropyLoss")] == "label_smoothing=0.1"
    assert ("augmentation", "torchvision.transforms.RandomHorizontalFlip") in found
    assert ("mixed precision", "torch.cuda.amp.GradScaler") in found
    assert ("mixed precision", "torch.autocast") in found
    assert found[("EMA", "ema_decay")] == "= 0.999"
    assert found[("gradient clipping", "torch.nn.utils.clip_grad_norm_")] == "max_norm=1.0"
    assert any(t == "gradient accumulation" for t, _ in found)
    assert found[("epochs", "EPOCHS")] == "= 30"
    assert found[("batch size", "--batch-size")] == "argparse default 64"


def test_model_file_checklist_has_networks_and_init():
    items = _checklist(NET)
    topics = {(i.topic, i.name) for i in items}
    assert {("network", "Classifier"), ("network", "Tagger"), ("initialisation", "torch.nn.init.zeros_")} <= topics
    classifier = next(i for i in items if i.name == "Classifier")
    assert "conv=Conv2d" in classifier.detail and "fc=Linear" in classifier.detail


def test_nothing_in_a_script_without_tricks():
    result = analyze_source(PRELUDE + "x = torch.randn(3)\ny = x * 2\n", "plain.py")
    assert result.checklist == []


def test_epochs_and_batch_size_from_literals_loops_and_defaults():
    code = ("num_epochs = 5\nfor epoch in range(12):\n    pass\ndef train(batch_size=16):\n    pass\n"
            "loader = torch.utils.data.DataLoader([1], batch_size=8)\n")
    found = {(i.topic, i.detail) for i in analyze_source(PRELUDE + code, "t.py").checklist}
    assert {("epochs", "= 5"), ("epochs", "loop bound 12"), ("batch size", "parameter default 16"),
            ("batch size", "batch_size=8")} <= found


def _torch_counts(path: pathlib.Path) -> dict[str, int]:
    import importlib.util

    spec = importlib.util.spec_from_file_location("_fixture_net", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {name: sum(p.numel() for p in getattr(module, name)().parameters()) for name in ("Classifier", "Tagger")}


def test_parameter_estimate_from_code_equals_torch_count():
    text = NET.read_text()
    module = cst.parse_module(text)
    facts = index_file("net.py", module, analyse(module, _method_names(load_rules()), is_module_base))
    estimator = Estimator(facts)
    for name, count in _torch_counts(NET).items():
        assert estimator.of_class(name) == (count, True), name


def test_parameter_counts_by_import_in_a_child_process():
    project = analyze_tree(str(NET), import_timeout=120)
    counts = next(iter(project.parameter_counts.values()))
    assert counts == _torch_counts(NET)
    network = {i.name: i.detail for i in project.checklist if i.topic == "network"}
    assert f"{counts['Tagger']:,} parameters (imported and counted)" in network["Tagger"]


def test_import_failure_is_reported_not_raised():
    project = analyze_tree(str(TRAIN), import_timeout=120)
    assert project.parameter_counts == {}  # train.py defines no Cell classes
    project = analyze_tree(str(FIXTURES / "project"), import_timeout=0)
    assert project.parameter_counts == {}
