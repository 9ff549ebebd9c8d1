"""Where MindSpore 2.10's CPU kernels or Tensor lack what torch accepts, the converted
code still runs with torch's result (measured on the shapes that broke in published
research code): a numpy scalar on the left of tensor arithmetic (diffusion timestep
embeddings, sinusoidal position embeddings, ``np.sqrt(d) * x``), a ``range`` used as
an index.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.conversion import convert_to, load

TIMESTEP = '''import numpy as np
import torch


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-np.log(10000.0) * torch.arange(start=0, end=half, dtype=torch.float32) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


def run(t):
    return timestep_embedding(t, 8)
'''

SINUSOIDAL = '''import numpy as np
import torch


def run(x):
    d = 6
    pe = torch.zeros(4, d)
    position = torch.arange(0, 4).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, d, 2).float() * -(np.log(10000.0) / d))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return x + pe
'''

SCALED = '''import numpy as np
import torch
import torch.nn as nn


class Scaled(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.d = d
        self.act = nn.Tanh()

    def forward(self, x):
        return np.sqrt(self.d) * self.act(x) + self.act(x) * np.sqrt(self.d) - np.float32(0.5) * x


def run(x):
    return Scaled(4)(x)
'''

RANGE_INDEX = '''import torch


def run(x):
    n = 2
    return x[range(n)][:, :2] + x[:, range(1, 3)][:2]
'''

INTEGER_POSITIONS = '''import numpy as np
import torch


def run(time):
    half_dim = 4
    embeddings = torch.exp(-np.log(10000) * torch.arange(half_dim) / (half_dim - 1))
    embeddings = time[:, None] * embeddings[None, :]
    return torch.stack([embeddings.sin(), embeddings.cos()], dim=-1)
'''

CASES = {
    "integer_positions": (INTEGER_POSITIONS, {"time": np.array([0.0, 5.0, 50.0], np.float32)}),
    "timestep_embedding": (TIMESTEP, {"t": np.array([0.0, 3.0, 10.0], np.float32)}),
    "sinusoidal": (SINUSOIDAL, {"x": np.ones((4, 6), np.float32)}),
    "scaled": (SCALED, {"x": np.arange(8, dtype=np.float32).reshape(2, 4) / 8}),
    "range_index": (RANGE_INDEX, {"x": np.arange(12, dtype=np.float32).reshape(4, 3)}),
}


def _convert(tmp_path, name, program):
    source = tmp_path / "torch_side" / f"{name}.py"
    source.parent.mkdir()
    source.write_text(program)
    out = tmp_path / "ms_side"
    out.mkdir()
    return source, convert_to(source, out)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_like_torch(tmp_path, name):
    import mindspore
    import torch

    program, inputs = CASES[name]
    source, converted = _convert(tmp_path, name, program)
    expected = load(source).run(*(torch.tensor(v) for v in inputs.values())).detach().numpy()
    result = load(converted).run(*(mindspore.Tensor(v) for v in inputs.values()))
    assert isinstance(result, mindspore.Tensor), type(result)
    assert result.dtype == mindspore.float32
    np.testing.assert_allclose(result.asnumpy(), expected, rtol=1e-5, atol=1e-6)


def test_numpy_scalar_keeps_gradient(tmp_path):
    """``np.sqrt(d) * x`` stays a Tensor in the graph: the gradient with respect to the input is torch's."""
    import mindspore
    import torch

    program = '''import numpy as np
import torch


def run(x):
    return (np.sqrt(3.0) * x * x).sum()
'''
    source, converted = _convert(tmp_path, "grad", program)
    x = np.array([1.0, 2.0, -1.5], np.float32)
    tx = torch.tensor(x, requires_grad=True)
    load(source).run(tx).backward()
    grad = mindspore.grad(load(converted).run)(mindspore.Tensor(x))
    np.testing.assert_allclose(grad.asnumpy(), tx.grad.numpy(), rtol=1e-6)
    assert "float(np.sqrt(3.0)) * x" in converted.read_text()


def test_numbers_and_right_operands_are_left_alone(tmp_path):
    from transpiler.convert.pipeline import convert_source

    program = '''import numpy as np
import torch


def run(x, d):
    a = np.sqrt(2.0) * 3
    b = x * np.sqrt(d)
    c = np.prod(x.shape) * x
    e = np.sqrt(2.0) * np.arange(3)
    return a, b, c, e, [1, 2, 3][0:2]
'''
    output = convert_source(program, "p.py").output
    assert "e = np.sqrt(2.0) * np.arange(3)" in output
    assert "a = np.sqrt(2.0) * 3" in output
    assert "b = x * np.sqrt(d)" in output
    assert "c = np.prod(x.shape) * x" in output
