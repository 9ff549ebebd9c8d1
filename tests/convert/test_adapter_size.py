"""An adapter class (torch's signature over a MindSpore layer, for a layer class passed
as a value) holds what the file can reach, not the whole torch class: a 19-line file
that passes ``nn.LayerNorm`` and ``nn.GELU`` as defaults got 62 lines of adapters
(properties for every renamed attribute, ``reset_parameters``, one check per refused
argument). Each case still runs as torch does."""

import numpy as np

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
        return x + self.act(self.fc(self.norm(x))){extra}
'''


def _adapters(text: str) -> str:
    return "class torch_nn" + text.split("\nclass Block")[0].split("class torch_nn", 1)[1]


def test_an_adapter_the_file_only_calls_holds_its_constructor(tmp_path):
    model, converted, text = converted_pair(tmp_path, _BLOCK.format(extra=""))
    adapters = _adapters(text)
    assert "@property" not in adapters and "reset_parameters" not in adapters, adapters
    # elementwise_affine and bias are refused for one reason: one check
    assert adapters.count("raise NotImplementedError") == 2, adapters
    assert len(adapters.strip().splitlines()) <= 28, adapters  # 62 before
    torch_block, cell = model.Block(8), converted.Block(8)
    move_torch_weights(torch_block, cell)
    x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    expected, actual = eval_outputs(torch_block, cell, x)
    np.testing.assert_allclose(actual.asnumpy(), expected.numpy(), rtol=1e-5, atol=1e-5)


def test_what_the_file_reads_stays(tmp_path):
    extra = "\n\n    def scale(self):\n        self.norm.reset_parameters()\n        return self.norm.weight, self.norm.eps\n"
    model, converted, text = converted_pair(tmp_path, _BLOCK.format(extra=extra))
    adapters = _adapters(text)
    assert "def weight(self)" in adapters and "def eps(self)" in adapters and "def reset_parameters" in adapters
    assert "def bias(self)" not in adapters, adapters
    weight, eps = converted.Block(8).scale()
    assert tuple(weight.shape) == (8,) and eps == model.Block(8).scale()[1]


def test_an_adapter_a_class_derives_from_is_whole(tmp_path):
    source = "import torch.nn as nn\n\n\nclass Norm(nn.LayerNorm):\n    pass\n\n\ndef make():\n    return Norm(4, eps=1e-3)\n"
    _, converted, text = converted_pair(tmp_path, source)
    assert "def weight(self)" in text and "def bias(self)" in text and "def reset_parameters" in text, text
    norm = converted.make()
    assert norm.eps == 1e-3 and tuple(norm.weight.shape) == (4,)  # read from another file, by torch's names
