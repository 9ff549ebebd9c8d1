"""``self.mean = self.mean.type_as(x)`` in a forward (SwinIR, BasicSR's EDSR family): a
local value in graph mode (transpiler/convert/structural/attribute_casts.py), values
and gradients as torch's."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from tests.conversion import convert_to
from tests.convert.test_graph_mode import graph_mode_side
from tests.gradient_check import Case, differences, load_torch_module, torch_side

SOURCE = textwrap.dedent(
    '''
    import torch
    import torch.nn as nn


    class MeanShift(nn.Module):
        """SwinIR's mean: a plain tensor attribute cast to the input's type in forward."""

        def __init__(self):
            super().__init__()
            self.mean = torch.Tensor((0.4488, 0.4371, 0.4040)).view(1, 3, 1, 1)
            self.img_range = 255.0
            self.conv = nn.Conv2d(3, 3, 3, padding=1)
            self.norm = nn.LayerNorm(3)

        def forward(self, x):
            self.mean = self.mean.type_as(x)
            x = (x - self.mean) * self.img_range
            x = self.conv(x)
            x = self.norm(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
            return x / self.img_range + self.mean


    class Conditional(nn.Module):
        """A cast under a condition, and an attribute set again later: left as written."""

        def __init__(self):
            super().__init__()
            self.scale = torch.ones(1, 4)
            self.proj = nn.Linear(4, 4)

        def forward(self, x):
            if x.shape[0] > 1:
                self.scale = self.scale.to(x.dtype)
            return self.proj(x) * self.scale
    '''
)

CASES = [Case("MeanShift", [np.random.RandomState(0).rand(2, 3, 6, 6).astype(np.float32)], args=[])]


@pytest.fixture(scope="module")
def both_sides(tmp_path_factory):
    folder = tmp_path_factory.mktemp("attribute_casts")
    source = folder / "casts.py"
    source.write_text(SOURCE)
    (folder / "out").mkdir()
    target = convert_to(source, folder / "out")
    module = load_torch_module(source, "attribute_casts_torch")
    torch_results = [torch_side(module, case) for case in CASES]
    return target, torch_results, graph_mode_side(target, CASES, torch_results, folder)


def test_the_cast_is_a_local_for_the_rest_of_the_forward(both_sides):
    text = both_sides[0].read_text()
    assert "        mean = self.mean.type_as(x)\n        x = (x - mean) * self.img_range\n" in text, text
    assert "return x / self.img_range + mean\n" in text, text
    # under a condition the attribute stays: a local would be unbound on the other branch
    assert "            self.scale = self.scale.to(x.dtype)\n" in text, text


def test_values_and_gradients_in_graph_mode_match_torch(both_sides):
    _, torch_results, ms_results = both_sides
    problems = differences(torch_results[0], ms_results[0])
    assert not problems, problems
