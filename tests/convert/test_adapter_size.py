"""An adapter class (torch's signature over a MindSpore layer, for a layer class passed
as a value) checks the arguments it cannot carry once per reason: LayerNorm's
``elementwise_affine`` and ``bias`` are refused for one reason, in one check. It keeps
torch's attribute names and ``reset_parameters`` whether or not the file reads them:
code in other files reads them on the layers this file makes (monai's DenseNet sets
``m.weight`` on the BatchNorms that its layer factory, another file, makes)."""

import numpy as np
import pytest

from tests.conversion import converted_pair, eval_outputs, move_torch_weights

_BLOCK = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim, norm_layer=nn.LayerNorm, act=nn.GELU):
        super().__init__()
        self.norm = norm_layer(dim)
        self.fc = nn.Linear(dim, dim)
        self.act = act()

    def forward(self, x):
        return x + self.act(self.fc(self.norm(x)))
'''


def _adapters(text: str) -> str:
    return "class torch_nn" + text.split("\nclass Block")[0].split("class torch_nn", 1)[1]


def test_arguments_refused_for_one_reason_share_one_check(tmp_path):
    model, converted, text = converted_pair(tmp_path, _BLOCK)
    adapters = _adapters(text)
    assert "if elementwise_affine is not True or bias is not True:" in adapters, adapters
    assert adapters.count("raise NotImplementedError") == 2, adapters  # dtype; elementwise_affine and bias
    torch_block, cell = model.Block(8), converted.Block(8)
    move_torch_weights(torch_block, cell)
    x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    expected, actual = eval_outputs(torch_block, cell, x)
    np.testing.assert_allclose(actual.asnumpy(), expected.numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(NotImplementedError, match="'elementwise_affine', 'bias' cannot be carried"):
        converted.torch_nn.LayerNorm(8, bias=False)


def test_an_adapter_keeps_torchs_names_for_other_files(tmp_path):
    _, converted, text = converted_pair(tmp_path, _BLOCK)
    norm = converted.Block(8).norm  # what another file's code reads by torch's names
    assert tuple(norm.weight.shape) == (8,) and tuple(norm.bias.shape) == (8,) and norm.eps == 1e-5
    norm.reset_parameters()
