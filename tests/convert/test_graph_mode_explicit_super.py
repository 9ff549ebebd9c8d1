"""pytorch-tcn's ``super().forward(x)`` in a layer another layer derives from, in graph mode.

Graph mode reads a bare ``super()`` as ``super(type(self), self)``: on an instance of a
subclass (DepthwiseConv1d, or the class weight_norm's helper makes), TemporalConv1d's
``construct`` calls itself until "Exceed function call depth limit 1000". The converted
call names its class (transpiler/convert/structural/explicit_super.py), and the class the
weight_norm helper makes has a name of its own, since graph mode finds the class of
``super(Class, self)`` by name (rewrite_rules/nn/weight_norm.py). Values and gradients as
torch's, in GRAPH_MODE."""

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
    from torch.nn.utils import weight_norm


    class TemporalConv1d(nn.Conv1d):
        def __init__(self, in_channels, out_channels, kernel_size, groups=1):
            super().__init__(in_channels, out_channels, kernel_size, groups=groups)
            self.pad = nn.ConstantPad1d((kernel_size - 1, 0), 0.0)

        def forward(self, x):
            x = self.pad(x)
            x = super().forward(x)
            return x


    class DepthwiseConv1d(TemporalConv1d):
        def __init__(self, channels, kernel_size):
            super().__init__(channels, channels, kernel_size, groups=channels)


    class Block(nn.Module):
        def __init__(self, channels=4):
            super().__init__()
            self.conv = weight_norm(TemporalConv1d(channels, channels, 3))
            self.depthwise = DepthwiseConv1d(channels, 2)

        def forward(self, x):
            return self.depthwise(torch.relu(self.conv(x))) + x
    '''
)


def _randn(*shape, seed=0):
    return np.random.RandomState(seed + sum(shape)).randn(*shape).astype(np.float32)


CASES = [
    Case("Block", [_randn(2, 4, 9)], args=[]),
    Case("DepthwiseConv1d", [_randn(2, 4, 9, seed=1)], args=[4, 3]),
]


@pytest.fixture(scope="module")
def both_sides(tmp_path_factory):
    folder = tmp_path_factory.mktemp("explicit_super")
    source = folder / "temporal.py"
    source.write_text(SOURCE)
    (folder / "out").mkdir()
    target = convert_to(source, folder / "out")
    module = load_torch_module(source, "explicit_super_torch")
    torch_results = [torch_side(module, case) for case in CASES]
    return target, torch_results, graph_mode_side(target, CASES, torch_results, folder)


def test_the_super_call_names_its_class(both_sides):
    text = both_sides[0].read_text()
    assert ("        # graph mode reads super() as super(type(self), self), which a subclass would recurse into\n"
            "        x = super(TemporalConv1d, self).construct(x)\n") in text, text
    assert 'type(module).__name__ + "WithWeightNorm"' in text, text


@pytest.mark.parametrize("index", range(len(CASES)), ids=[case.name for case in CASES])
def test_values_and_gradients_in_graph_mode_match_torch(both_sides, index):
    _, torch_results, ms_results = both_sides
    problems = differences(torch_results[index], ms_results[index])
    assert not problems, problems


def test_a_class_named_as_its_library_base_is_no_base_of_the_file(tmp_path):
    """glide's ``class LayerNorm(nn.LayerNorm)``: nothing of the file derives from it."""
    source = tmp_path / "xf.py"
    source.write_text(textwrap.dedent(
        '''
        import torch
        import torch.nn as nn


        class LayerNorm(nn.LayerNorm):
            def forward(self, x):
                return super().forward(x.float()).to(x.dtype)
        '''))
    (tmp_path / "out").mkdir()
    text = convert_to(source, tmp_path / "out").read_text()
    assert "return super().construct(x.to(mindspore.float32)).to(x.dtype)" in text, text
