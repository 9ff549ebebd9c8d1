"""A tensor read as NumPy in forward and used for sizes (Time-Series-Library's TimesNet
finds its periods so) converts as written and gives torch's numbers in PyNative; graph
mode knows the values only when the graph runs, so the LayerNorm after them cannot get
a dtype, and the comment above the line says so.
A ``.numpy()`` outside the functions graph mode compiles stays unmarked."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conversion import converted_pair, lines_under
from transpiler.convert.structural.numpy_reads import COMMENT

SOURCE = '''
import numpy as np
import torch
import torch.nn as nn


def top_period(x, k=1):
    xf = torch.fft.rfft(x, dim=1)
    frequency = abs(xf).mean(0).mean(-1)
    frequency[0] = 0
    _, top = torch.topk(frequency, k)
    top = top.detach().cpu().numpy()
    return x.shape[1] // top


class Periodic(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(2)

    def forward(self, x):
        period = int(top_period(x)[0])
        length = (x.shape[1] // period) * period
        return self.norm(x[:, :length].reshape(x.shape[0], -1, period, x.shape[2]).mean(2))


def summary(x):
    return x.numpy().mean()
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return converted_pair(tmp_path_factory.mktemp("numpy_reads"), SOURCE)


def test_the_read_in_compiled_code_is_marked(pair):
    _, _, text = pair
    assert lines_under(text, COMMENT) == ["top = ops.stop_gradient(top).numpy()"]


def test_pynative_gives_torchs_numbers_and_graph_mode_cannot_size_by_them(pair):
    import mindspore
    import torch

    torch_module, converted, _ = pair
    t = np.arange(24, dtype=np.float32)
    x = np.stack([np.sin(2 * np.pi * t / 4), np.cos(2 * np.pi * t / 4)], -1)[None].repeat(2, 0)
    x = (x + np.random.default_rng(0).normal(0, 0.1, x.shape)).astype(np.float32)  # period 4, plus noise
    expected = torch_module.Periodic()(torch.from_numpy(x)).detach().numpy()
    net = converted.Periodic()
    np.testing.assert_allclose(net(mindspore.Tensor(x)).asnumpy(), expected, rtol=1e-4, atol=1e-5)
    # the LayerNorm asks for the dtype of a tensor sized by the values: MindSpore 2.10 raises a
    # TypeError from Tensor.astype, whose message fails to print the unknown dtype
    with pytest.raises((TypeError, ValueError)):
        mindspore.jit(net.construct)(mindspore.Tensor(x))


def test_consecutive_list_reads_share_one_comment(tmp_path):
    """mamba.py's Jamba routes tokens by ``top_x.tolist()`` and ``idx.tolist()`` of a nonzero."""
    from transpiler.convert.pipeline import convert_source

    source = '''
import torch
import torch.nn as nn


class Router(nn.Module):
    def forward(self, x, mask):
        idx, top_x = torch.where(mask)
        top_x_list = top_x.tolist()
        idx_list = idx.tolist()
        return x[top_x_list, idx_list]
'''
    output = convert_source(source, str(tmp_path / "router.py")).output
    assert lines_under(output, COMMENT) == ["top_x_list = top_x.tolist()"]
    assert "top_x_list = top_x.tolist()\n        idx_list = idx.tolist()" in output
