"""Done means: every sample and every model in tests/models/ converts, its
weights convert with nothing unplaced or unfilled, and ``verify`` (outputs and
parameter gradients, every one compared: the stochastic ones through replayed
random draws, in training mode too for the models a file lists in TRAIN)
passes at atol 1e-4 in float32."""

from __future__ import annotations

import pathlib

import pytest

from tests.conversion import convert_to, load
from tests.golden_files import sample_paths
from transpiler.proof.verify import MATCH, VerifyRequest, verify
from transpiler.proof.verify_inputs import parse_input

MODELS = pathlib.Path(__file__).parents[1] / "models"
MODEL_FILES = sorted(p for p in MODELS.glob("*.py") if p.name != "__init__.py")

# samples: each model class and the --input specs of its forward()
SAMPLE_MODELS = {
    "gpt_block.py": [("TinyGPT", ["2,16:int64:0-64"])],
    "lenet.py": [("LeNet", ["4,1,28,28"])],
    "lstm_tagger.py": [("LSTMTagger", ["3,12:int64:0-100"])],
    "resnet.py": [("ResNet", ["2,3,32,32"])],
    "vae.py": [("VAE", ["8,1,28,28:float32:0-1"])],
    "train_dcgan.py": [("Generator", ["2,8,1,1"]), ("Discriminator", ["2,1,16,16"])],
    "train_lstm_lm.py": [("LanguageModel", ["2,10:int64:0-16", "2,2,64+2,2,64"])],
    "train_mnist_cnn.py": [("ConvNet", ["2,1,28,28"])],
    "train_transformer.py": [("TransformerClassifier", ["2,16:int64:0-20"])],
    # These scripts log with torch.utils.tensorboard; their models are compared with torch at every
    # training step by tests/training/test_training_scripts.py instead (what the writers log: tests/rules/test_tensorboard_rules.py).
    "train_classifier.py": [],
    "train_unet.py": [],
    "train_text_trainer.py": [],
    "train_gpt.py": [],
}


def _cases():
    for path in MODEL_FILES:
        module = load(path)
        for name, inputs in module.VERIFY.items():
            yield pytest.param(path, name, inputs, False, id=f"{path.stem}.{name}")
            if name in getattr(module, "TRAIN", ()):  # stochastic in training mode (dropout)
                yield pytest.param(path, name, inputs, True, id=f"{path.stem}.{name}.train")
    for path in sample_paths():
        if "(nn.Module)" not in path.read_text():
            continue
        for name, inputs in SAMPLE_MODELS.get(path.name, [(None, None)]):
            yield pytest.param(path, name, inputs, False, id=f"samples.{path.stem}.{name}")


def test_there_are_twenty_model_classes():
    assert sum(len(load(p).VERIFY) for p in MODEL_FILES) >= 20


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    out = tmp_path_factory.mktemp("converted")
    cache: dict[pathlib.Path, pathlib.Path] = {}

    def get(path):
        if path not in cache:
            cache[path] = convert_to(path, out)
        return cache[path]

    return get


@pytest.mark.parametrize("path, name, inputs, train", list(_cases()))
def test_verify_passes(path, name, inputs, train, converted):
    assert name is not None, f"add {path.name}'s models to SAMPLE_MODELS (model class and --input specs)"
    request = VerifyRequest(str(path), str(converted(path)), name, [parse_input(i) for i in inputs],
                            rtol=1e-4, atol=1e-4, grad=True, train=train)
    result = verify(request)
    assert result.status == MATCH, "\n".join(result.lines())
    assert result.weights.ok and not result.weights.unplaced
    assert not result.not_compared, "\n".join(result.lines())  # every output and gradient compared
