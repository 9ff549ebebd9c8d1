"""Idioms of monai's networks (the research benchmark's monai rows), each cut
down to what the idiom needs, converted and run against torch on the same
inputs with torch's weights moved by the weight converter:

- ``nn.Upsample(scale_factor=None if size else factor_)``: a conditional
  expression as the factor stays one operand in the run-time conversion of
  the factor (it made upsample.py fail to parse after conversion).
"""

from __future__ import annotations

import textwrap

import mindspore
import numpy as np
import torch

from tests.conversion import convert_to, load
from transpiler.proof.weights import map_weights


def _pair(tmp_path, source: str):
    path = tmp_path / "model.py"
    path.write_text(textwrap.dedent(source))
    (tmp_path / "out").mkdir()
    converted = convert_to(path, tmp_path / "out")
    return load(path), load(converted), converted.read_text()


def _compare(model, cell, *inputs, atol=1e-5):
    params, report = map_weights(model, cell)
    assert report.ok, report.problems()
    assert mindspore.load_param_into_net(cell, params, strict_load=True) == ([], [])
    model.eval()
    cell.set_train(False)
    with torch.no_grad():
        expected = model(*(torch.from_numpy(x) for x in inputs))
    got = cell(*(mindspore.Tensor(x) for x in inputs))
    np.testing.assert_allclose(got.asnumpy(), expected.numpy(), rtol=1e-4, atol=atol)


UPSAMPLE = '''
import torch
import torch.nn as nn


class Up(nn.Module):
    def __init__(self, size=None, scale_factor=2):
        super().__init__()
        scale_factor_ = (scale_factor, scale_factor)
        self.up = nn.Upsample(size=size, scale_factor=None if size else scale_factor_, mode="nearest")

    def forward(self, x):
        return self.up(x)
'''


def test_upsample_conditional_scale_factor(tmp_path):
    torch_mod, ms_mod, code = _pair(tmp_path, UPSAMPLE)
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 5)).astype(np.float32)
    for kwargs in ({}, {"size": (6, 7)}):
        _compare(torch_mod.Up(**kwargs), ms_mod.Up(**kwargs), x)
