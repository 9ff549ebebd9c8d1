"""Idioms of monai's networks (the research benchmark's monai rows), each cut
down to what the idiom needs, converted and run against torch on the same
inputs with torch's weights moved by the weight converter:

- ``nn.Upsample(scale_factor=None if size else factor_)``: a conditional
  expression as the factor stays one operand in the run-time conversion of
  the factor (it made upsample.py fail to parse after conversion);
- layer factories: a tuple of torch layer classes that is indexed
  (``types = (nn.Conv1d, nn.Conv2d, nn.Conv3d); return types[dim - 1]``) is a
  table of layers built later with torch's arguments, not a type for
  ``isinstance`` (which a tuple that is not indexed stays);
- ``nn.ConvTranspose2d(..., output_padding=stride - 1)`` with the output
  padding in a variable (monai's Convolution): folded into MindSpore's padding
  when the layer is built, directly and through the layer's adapter;
- ``nn.init.kaiming_normal_(torch.as_tensor(m.weight))`` (monai's DenseNet):
  as_tensor returns the parameter itself, which the initialiser fills;
- ``Rearrange, _ = optional_import("einops.layers.torch", name="Rearrange")``
  (monai's UNETR, ViT, SwinUNETR): the name is einops' as if imported, so its
  uses convert.
"""

from __future__ import annotations


import numpy as np
import pytest
import torch

from tests.conversion import convert_to, converted_pair, eval_outputs, move_torch_weights


def _compare(model, cell, *inputs, atol=1e-5):
    move_torch_weights(model, cell)
    expected, got = eval_outputs(model, cell, *inputs)
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
    torch_mod, ms_mod, code = converted_pair(tmp_path, UPSAMPLE)
    x = np.random.default_rng(0).standard_normal((1, 2, 4, 5)).astype(np.float32)
    for kwargs in ({}, {"size": (6, 7)}):
        _compare(torch_mod.Up(**kwargs), ms_mod.Up(**kwargs), x)


FACTORIES = '''
import torch
import torch.nn as nn

WEIGHTED = (nn.Conv1d, nn.Conv2d, nn.Linear)


def conv_factory(dim):
    types = (nn.Conv1d, nn.Conv2d, nn.Conv3d)
    return types[dim - 1]


def norm_factory(dim):
    return (nn.InstanceNorm1d, nn.InstanceNorm2d, nn.InstanceNorm3d)[dim - 1]


def pool_factory(dim):
    types = (nn.AdaptiveAvgPool1d, nn.AdaptiveAvgPool2d, nn.AdaptiveAvgPool3d)

    def pick():
        return types[dim - 1]

    return pick()


class Net(nn.Module):
    def __init__(self, dim=2):
        super().__init__()
        self.conv = conv_factory(dim)(2, 4, kernel_size=3, padding=1, bias=False)
        self.norm = norm_factory(dim)(4, affine=True)
        self.pool = pool_factory(dim)(1)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(self.pool(self.norm(self.conv(x))).flatten(1))


def weighted(model):
    return isinstance(model.conv, WEIGHTED) and isinstance(model.fc, WEIGHTED) and not isinstance(model.norm, WEIGHTED)
'''


def test_indexed_tuple_of_layer_classes_is_a_table(tmp_path):
    torch_mod, ms_mod, code = converted_pair(tmp_path, FACTORIES)
    assert "TODO(ms-migrate)" not in code
    rng = np.random.default_rng(0)
    for dim, shape in ((1, (2, 2, 7)), (2, (2, 2, 5, 6))):
        x = rng.standard_normal(shape).astype(np.float32)
        model, cell = torch_mod.Net(dim), ms_mod.Net(dim)
        _compare(model, cell, x)
        assert torch_mod.weighted(model) and ms_mod.weighted(cell)


TRANSPOSED = '''
import torch
import torch.nn as nn


def stride_minus_one(strides):
    return tuple(s - 1 for s in strides) if isinstance(strides, tuple) else strides - 1


class Up(nn.Module):
    def __init__(self, strides=2, padding=1):
        super().__init__()
        output_padding = stride_minus_one(strides)
        self.up = nn.ConvTranspose2d(3, 4, 3, stride=strides, padding=padding, output_padding=output_padding)
        conv_type = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)[1]
        self.up2 = conv_type(4, 2, kernel_size=3, stride=strides, padding=padding, output_padding=output_padding,
                             groups=2, bias=False)

    def forward(self, x):
        return self.up2(self.up(x))
'''


def test_transposed_conv_output_padding_in_a_variable(tmp_path):
    torch_mod, ms_mod, code = converted_pair(tmp_path, TRANSPOSED)
    assert "TODO(ms-migrate)" not in code
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 6)).astype(np.float32)
    for kwargs in ({}, {"strides": (2, 1)}, {"strides": 1, "padding": (1, 0)}):
        _compare(torch_mod.Up(**kwargs), ms_mod.Up(**kwargs), x)
    with pytest.raises(ValueError, match="output_padding"):
        ms_mod.Up(strides=2, padding=0)  # torch's extra rows beyond the padding: MindSpore's padding cannot say it


AS_TENSOR_INIT = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 16, 3, bias=False)
        self.norm = nn.BatchNorm2d(16)
        self.fc = nn.Linear(16, 3)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(torch.as_tensor(m.weight))
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(torch.as_tensor(m.weight), 0.5)
                nn.init.constant_(torch.as_tensor(m.bias), 0.25)
            elif isinstance(m, nn.Linear):
                nn.init.constant_(tensor=torch.as_tensor(m.bias), val=-1.0)

    def forward(self, x):
        return self.fc(self.norm(self.conv(x)).mean((2, 3)))
'''


def test_init_through_as_tensor_fills_the_parameter(tmp_path):
    torch_mod, ms_mod, code = converted_pair(tmp_path, AS_TENSOR_INIT)
    assert "TODO(ms-migrate)" not in code
    model, cell = torch_mod.Net(), ms_mod.Net()
    np.testing.assert_array_equal(cell.norm.gamma.asnumpy(), model.norm.weight.detach().numpy())
    np.testing.assert_array_equal(cell.norm.beta.asnumpy(), model.norm.bias.detach().numpy())
    np.testing.assert_array_equal(cell.fc.bias.asnumpy(), model.fc.bias.detach().numpy())
    # He normal, fan_in 16 * 3 * 3: std sqrt(2 / 144) (2304 draws)
    weight = cell.conv.weight.asnumpy()
    assert abs(weight.std() - (2 / 144) ** 0.5) < 0.01 and abs(weight.mean()) < 0.01
    x = np.random.default_rng(0).standard_normal((2, 16, 5, 5)).astype(np.float32)
    _compare(model, cell, x, atol=1e-4)


GUARDED_IMPORT = '''
import importlib

import torch
import torch.nn as nn


def optional_import(module, version="", version_checker=None, name=""):
    try:
        found = importlib.import_module(module)
    except Exception:
        return None, False
    return (getattr(found, name) if name else found), True


Rearrange, _ = optional_import("einops.layers.torch", name="Rearrange")
rearrange, has_einops = optional_import("einops", name="rearrange")


class Patches(nn.Module):
    def __init__(self):
        super().__init__()
        self.to_seq = Rearrange("b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=2, p2=2)
        self.fc = nn.Linear(8, 6)

    def forward(self, x):
        y = self.fc(self.to_seq(x))
        return rearrange(y, "b n (k c) -> b k c n", k=2)
'''


def test_names_bound_by_optional_import_convert(tmp_path):
    torch_mod, ms_mod, code = converted_pair(tmp_path, GUARDED_IMPORT)
    assert "TODO(ms-migrate)" not in code and "import einops" not in code and "from einops" not in code, code
    x = np.random.default_rng(0).standard_normal((2, 2, 4, 6)).astype(np.float32)
    _compare(torch_mod.Patches(), ms_mod.Patches(), x)


def test_a_marked_use_of_an_optional_import_keeps_the_files_own_import(tmp_path):
    """Where a use of such a name is marked, the import written for it under the marker is the file's
    optional_import, not a static import of a package the file only imports optionally."""
    source = GUARDED_IMPORT.replace('p1=2, p2=2)', '**sizes)').replace('def __init__(self):', 'def __init__(self, sizes):')
    path = tmp_path / "model.py"
    path.write_text(source)
    (tmp_path / "out").mkdir()
    code = convert_to(path, tmp_path / "out").read_text()
    assert "TODO(ms-migrate): einops.layers.torch.Rearrange" in code, code
    assert "from einops" not in code and "import einops" not in code, code
    assert code.count('optional_import("einops.layers.torch", name="Rearrange")') == 2, code
