"""A layer with parameters made in forward (graykode/nlp-tutorial's BERT makes its
output projection there) converts as written and runs in PyNative; graph mode cannot
compile it once the method runs for two blocks (their parameters clash by name),
and the comment above the line says so. A parameter-free layer made there
(TextCNN's MaxPool2d) compiles and is left unmarked; a layer made in __init__ is not
in a compiled function."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conversion import convert_to, lines_under, load
from transpiler.convert.pipeline import convert_source
from transpiler.convert.structural.layers_in_construct import COMMENT

SOURCE = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        h = nn.MaxPool1d(2)(self.proj(x).unsqueeze(1)).squeeze(1)
        out = nn.Linear(2, 4)(h)
        return out + x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block()])

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x
'''


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    directory = tmp_path_factory.mktemp("layers_in_construct")
    path = convert_to(directory / "block.py", directory, text=SOURCE)
    return path, path.read_text(encoding="utf-8")


def test_only_the_layer_with_parameters_is_marked(converted):
    _, text = converted
    assert lines_under(text, COMMENT) == ["out = nn.Dense(2, 4)(h)"]


def test_it_runs_in_pynative_and_graph_mode_refuses_it(converted):
    import mindspore

    path, _ = converted
    net = load(path).Net()
    x = mindspore.Tensor(np.ones((3, 4), np.float32))
    assert net(x).shape == (3, 4)
    # the two blocks' layers made while compiling: both parameters are called 'weight'
    with pytest.raises(RuntimeError, match="already exists"):
        mindspore.jit(net.construct)(x)


def test_a_factory_that_shares_a_layer_attribute_name_is_not_marked(tmp_path):
    """state-spaces/s4's inception baseline: ``def conv(...)`` returns a Conv1d for
    ``__init__``, and forward calls ``self.conv(x)``: the function graph mode compiles is
    construct alone, so the factory stays unmarked."""
    source = '''
import torch.nn as nn


def conv(in_planes, out_planes):
    return nn.Conv1d(in_planes, out_planes, 3, padding=1)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = conv(2, 2)

    def forward(self, x):
        return self.conv(x)
'''
    result = convert_source(source, str(tmp_path / "factory.py"))
    assert COMMENT not in result.output
    assert "nn.Conv1d(" in result.output
