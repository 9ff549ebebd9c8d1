"""The zoo benchmark's verdict: outputs match torch within atol/rtol, or, on a
model whose random-init activations explode, as closely as torch's own
float32 output matches its float64 output; a conversion error still shows."""

from __future__ import annotations

import textwrap

import mindspore
import numpy as np
import pytest
import torch

from benchmarks.zoo.verdict import ATOL, NOISE_FACTOR, RTOL, output_verdict
from tests.conversion import convert_to, load
from transpiler.proof.weights import convert_state_dict

# Eight Conv-BN-ReLU blocks initialised with unit-variance weights: as in
# timm's inception_v3 built with random weights, activations grow ~10x per
# block (to ~1e8), so float32 rounding alone moves the outputs near zero by
# more than atol/rtol (measured: 12 to 18 of them for three seeds).
MODEL = textwrap.dedent(
    '''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Exploding(nn.Module):
        def __init__(self, width=16, depth=8):
            super().__init__()
            self.stem = nn.Conv2d(3, width, 3, padding=1)
            self.blocks = nn.ModuleList(
                nn.Sequential(nn.Conv2d(width, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
                for _ in range(depth)
            )
            self.head = nn.Conv2d(width, width, 1)
            for module in self.modules():
                if isinstance(module, nn.Conv2d):
                    nn.init.normal_(module.weight, std=1.0)

        def forward(self, x):
            x = self.stem(x)
            for block in self.blocks:
                x = F.avg_pool2d(block(x), 3, stride=1, padding=1)
            return self.head(x)
    '''
)


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """(converted output, output of a wrong conversion, torch float32 output,
    torch float64 output) on the same weights and input."""
    folder = tmp_path_factory.mktemp("zoo_verdict")
    original = folder / "src" / "exploding.py"
    original.parent.mkdir()
    original.write_text(MODEL)
    (folder / "out").mkdir()
    converted = convert_to(original, folder / "out")
    # what a converter that dropped avg_pool2d's count_include_pad=True default would write
    pool = "ops.avg_pool2d(block(x), 3, stride=1, padding=1)"
    text = converted.read_text()
    assert text.count(pool) == 1
    wrong = folder / "wrong_exploding.py"
    wrong.write_text(text.replace(pool, pool[:-1] + ", count_include_pad=False)"))

    torch.manual_seed(0)
    model = load(original).Exploding().eval()
    x = np.random.default_rng(0).standard_normal((4, 3, 48, 48)).astype(np.float32)
    with torch.no_grad():
        expected = model(torch.from_numpy(x)).numpy()
        state = {k: v.numpy().copy() for k, v in model.state_dict().items()}
        expected_float64 = model.double()(torch.from_numpy(x).double()).numpy()

    def run(path):
        cell = load(path).Exploding()
        mindspore.load_param_into_net(cell, convert_state_dict(state, cell), strict_load=True)
        cell.set_train(False)
        return cell(mindspore.Tensor(x)).asnumpy()

    return run(converted), run(wrong), expected, expected_float64


def test_the_model_is_beyond_float32_tolerance_in_torch_itself(outputs):
    _, _, expected, expected_float64 = outputs
    assert np.abs(expected_float64).max() > 1e7
    assert not np.allclose(expected, expected_float64, atol=ATOL, rtol=RTOL)


def test_converted_model_matches_within_torchs_own_float32_error(outputs):
    output, _, expected, expected_float64 = outputs
    result = output_verdict(output, expected, expected_float64)
    assert result["verdict"] == "match", result
    if not np.allclose(output, expected, atol=ATOL, rtol=RTOL):
        assert result["note"].startswith("float32-limited"), result


def test_a_conversion_error_is_a_mismatch_even_on_exploding_activations(outputs):
    _, wrong, expected, expected_float64 = outputs
    result = output_verdict(wrong, expected, expected_float64)
    assert result["verdict"] == "mismatch", result
    assert "from torch's float64 output" in result["error"]


def test_plain_tolerance_without_a_float64_reference():
    expected = np.linspace(-1, 1, 10, dtype=np.float32)
    assert output_verdict(expected + 5e-5, expected)["verdict"] == "match"
    result = output_verdict(expected + 1e-2, expected)
    assert result["verdict"] == "mismatch" and result["max_error"] == pytest.approx(1e-2)
    assert output_verdict(expected[:5], expected)["error"] == "output shape (5,) != torch (10,)"


def test_noise_bound_is_torchs_float32_error_times_the_factor():
    exact = np.linspace(-1e6, 1e6, 11)
    expected = (exact + 0.5).astype(np.float32)  # torch float32: 0.5 off
    near = (exact - 0.5 * NOISE_FACTOR).astype(np.float32)
    far = (exact + 0.5 * NOISE_FACTOR + 1).astype(np.float32)
    assert output_verdict(near, expected, exact)["verdict"] == "match"
    assert output_verdict(far, expected, exact)["verdict"] == "mismatch"
    infinite = expected.copy()
    infinite[0] = np.inf  # an overflowing torch float32 output proves nothing
    assert output_verdict(far, infinite, exact)["verdict"] == "mismatch"

