"""Idioms of research code published on GitHub (and in its packages) that the
research benchmark found unconverted, converted and run against torch on the
same inputs:

- ``nn.init.calculate_gain(activation)`` with the nonlinearity known only at
  run time (a constructor argument, as TCN libraries take it): torch's
  function is written above the file's code;
- NumPy's keyword names that torch's functions take (``torch.stack(xs,
  axis=-1)`` in RAFT's correlation lookup, ``keepdims=``, ``x=``);
- ``nn.init`` applied to a view of a weight (DiT initialises its patch
  embedding's Conv2d like a Linear: ``nn.init.xavier_uniform_(w.view([w.shape[0],
  -1]))``): the fans are the view's; torch's random draws are replayed to
  MindSpore's initializers, so the initialised models are compared as built;
- a Conv1d weight assigned a 3-D tensor (WaveGlow's invertible 1x1
  convolution: ``self.conv.weight.data = W.view(c, c, 1)``; also
  ``nn.Parameter(W)``): MindSpore stores it 4-D, so the axis is inserted;
- torchvision's ``IntermediateLayerGetter`` as DeepLab copies it: a subclass
  of ``nn.ModuleDict`` filled with a backbone's children (containers among
  them, which MindSpore's CellDict refuses), run in order through
  ``named_children()`` in forward, returning an OrderedDict of features.
"""

from __future__ import annotations


import mindspore
import numpy as np
import torch

from tests.conversion import converted_pair, eval_outputs, move_torch_weights
from transpiler.proof import replay

replay.install()


def _outputs(model, cell, *inputs, move_weights=True):
    if move_weights:
        move_torch_weights(model, cell)
    return eval_outputs(model, cell, *inputs)


def _close(expected, got, atol=1e-5):
    if isinstance(expected, (tuple, list)):
        assert len(expected) == len(got)
        for e, g in zip(expected, got):
            _close(e, g, atol)
        return
    if isinstance(expected, dict):
        assert list(expected) == list(got)
        for key in expected:
            _close(expected[key], got[key], atol)
        return
    expected, got = expected.numpy(), got.asnumpy()
    assert expected.shape == got.shape and expected.dtype == got.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=atol)


GAIN = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, activation="relu", slope=None):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        gain = nn.init.calculate_gain(activation, slope)
        nn.init.constant_(self.fc.weight, 0.1 * gain)
        nn.init.zeros_(self.fc.bias)

    def forward(self, x):
        return self.fc(x)
'''


def test_calculate_gain_of_a_run_time_nonlinearity(tmp_path):
    torch_mod, ms_mod, text = converted_pair(tmp_path, GAIN)
    assert "TODO(ms-migrate)" not in text and "import torch" not in text
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    for args in (("relu",), ("tanh",), ("leaky_relu", 0.2), ("leaky_relu",), ("conv2d",), ("selu",)):
        expected, got = _outputs(torch_mod.Block(*args), ms_mod.Block(*args), x, move_weights=False)
        _close(expected, got, atol=1e-6)
    for args in (("gelu",), ("leaky_relu", "x")):  # torch's errors, raised as torch raises them
        try:
            torch_mod.Block(*args)
        except ValueError as exc:
            message = str(exc)
        else:
            raise AssertionError(args)
        try:
            ms_mod.Block(*args)
        except ValueError as exc:
            assert str(exc) == message
        else:
            raise AssertionError(args)


NUMPY_KEYWORDS = '''
import torch
import torch.nn as nn


class Lookup(nn.Module):
    def __init__(self, radius=1):
        super().__init__()
        self.radius = radius

    def forward(self, x):
        r = self.radius
        dx = torch.linspace(-r, r, 2 * r + 1)
        dy = torch.linspace(-r, r, 2 * r + 1)
        delta = torch.stack(torch.meshgrid(dy, dx), axis=-1)
        total = torch.sum(x, axis=1, keepdims=True)
        both = torch.cat([x, total], axis=1)
        return delta, torch.abs(x=both), torch.mean(both, axis=-1, keepdims=False)
'''


def test_numpy_keyword_names_of_torch_functions(tmp_path):
    torch_mod, ms_mod, text = converted_pair(tmp_path, NUMPY_KEYWORDS)
    assert "TODO(ms-migrate)" not in text and "import torch" not in text
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    expected, got = _outputs(torch_mod.Lookup(), ms_mod.Lookup(), x, move_weights=False)
    _close(expected, got)


VIEW_INIT = '''
import torch
import torch.nn as nn


class PatchEmbed(nn.Module):
    def __init__(self, channels=3, dim=8, patch=2):
        super().__init__()
        self.proj = nn.Conv2d(channels, dim, patch, stride=patch)
        self.head = nn.Linear(dim, 4)
        w = self.proj.weight.data
        nn.init.xavier_uniform_(w.view([w.shape[0], -1]))
        nn.init.constant_(self.proj.bias, 0)
        nn.init.normal_(self.head.weight.view(-1), std=0.02)
        nn.init.uniform_(self.head.bias.data.reshape(2, 2), -0.5, 1.5)

    def forward(self, x):
        return self.head(self.proj(x).flatten(2).transpose(1, 2))
'''


def test_init_of_a_view_of_a_weight(tmp_path):
    torch_mod, ms_mod, text = converted_pair(tmp_path, VIEW_INIT)
    assert "TODO(ms-migrate)" not in text and "import torch" not in text
    x = np.random.default_rng(2).standard_normal((2, 3, 4, 4)).astype(np.float32)
    tape = replay.Tape(0)
    torch.manual_seed(0)
    with tape.recording():
        model = torch_mod.PatchEmbed()
    with tape.replaying_mindspore():
        cell = ms_mod.PatchEmbed()
    weight = model.proj.weight.detach().numpy()
    out_channels, fan_in, kernel = weight.shape[0], weight[0].size, weight[0, 0].size
    view_bound = np.sqrt(6.0 / (fan_in + out_channels))  # the view's fans ...
    weight_bound = np.sqrt(6.0 / (fan_in + out_channels * kernel))  # ... not the 4-D weight's
    assert weight_bound < np.abs(weight).max() <= view_bound
    parameters = {p.name: p.asnumpy() for p in cell.get_parameters()}
    assert sorted(parameters) == sorted(model.state_dict())
    for name, value in model.state_dict().items():  # every parameter as torch initialised it
        np.testing.assert_array_equal(parameters[name], value.numpy())
    expected, got = _outputs(model, cell, x, move_weights=False)
    _close(expected, got, atol=1e-6)


ASSIGNED_CONV1D = '''
import torch
import torch.nn as nn
import torch.nn.functional as F


class Invertible1x1Conv(nn.Module):
    def __init__(self, c=4):
        super().__init__()
        self.conv = nn.Conv1d(c, c, kernel_size=1, stride=1, padding=0, bias=False)
        W = torch.eye(c).flip(0) * 0.5 + 0.1
        if torch.det(W) < 0:
            W[:, 0] = -1 * W[:, 0]
        W = W.view(c, c, 1)
        self.conv.weight.data = W
        self.mix = nn.Conv1d(c, c, 1, bias=False)
        self.mix.weight = nn.Parameter(torch.arange(c * c, dtype=torch.float32).view(c, c, 1) / 10)

    def forward(self, z):
        batch_size, group_size, n_of_groups = z.size()
        W = self.conv.weight.squeeze()
        log_det_W = batch_size * n_of_groups * torch.logdet(W)
        return self.mix(self.conv(z)), log_det_W
'''


def test_conv1d_weight_assigned_a_3d_tensor(tmp_path):
    torch_mod, ms_mod, text = converted_pair(tmp_path, ASSIGNED_CONV1D)
    assert "TODO(ms-migrate)" not in text and "import torch" not in text
    z = np.random.default_rng(3).standard_normal((2, 4, 5)).astype(np.float32)
    model, cell = torch_mod.Invertible1x1Conv(), ms_mod.Invertible1x1Conv()
    expected, got = _outputs(model, cell, z, move_weights=False)  # as built
    _close(expected, got)
    expected, got = _outputs(model, cell, z)  # torch's weights moved onto the Cell
    _close(expected, got)


LAYER_GETTER = '''
from collections import OrderedDict

import torch
import torch.nn as nn
import torch.nn.functional as F


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU())
        self.layer1 = nn.Sequential(nn.Conv2d(4, 6, 3, stride=2, padding=1), nn.ReLU())
        self.layer2 = nn.Conv2d(6, 8, 3, padding=1)
        self.head = nn.Linear(8, 2)


class IntermediateLayerGetter(nn.ModuleDict):
    def __init__(self, model, return_layers, hrnet_flag=False):
        if not set(return_layers).issubset([name for name, _ in model.named_children()]):
            raise ValueError("return_layers are not present in model")
        self.hrnet_flag = hrnet_flag
        orig_return_layers = return_layers
        return_layers = {k: v for k, v in return_layers.items()}
        layers = OrderedDict()
        for name, module in model.named_children():
            layers[name] = module
            if name in return_layers:
                del return_layers[name]
            if not return_layers:
                break
        super(IntermediateLayerGetter, self).__init__(layers)
        self.return_layers = orig_return_layers

    def forward(self, x):
        out = OrderedDict()
        for name, module in self.named_children():
            x = module(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out


class Segmenter(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = IntermediateLayerGetter(Backbone(), {"layer2": "out", "stem": "low_level"})
        self.classifier = nn.Conv2d(8 + 4, 3, 1)

    def forward(self, x):
        features = self.backbone(x)
        out = F.interpolate(features["out"], size=features["low_level"].shape[2:], mode="bilinear",
                            align_corners=False)
        return self.classifier(torch.cat([features["low_level"], out], dim=1))
'''


def test_module_dict_subclass_holding_containers(tmp_path):
    torch_mod, ms_mod, text = converted_pair(tmp_path, LAYER_GETTER)
    assert "TODO(ms-migrate)" not in text and "import torch" not in text
    x = np.random.default_rng(4).standard_normal((2, 3, 8, 8)).astype(np.float32)
    model, cell = torch_mod.Segmenter(), ms_mod.Segmenter()
    assert list(cell.backbone.name_cells()) == ["stem", "layer1", "layer2"]  # head left out, as torch does
    expected, got = _outputs(model, cell, x)
    _close(expected, got)
    features = cell.backbone(mindspore.Tensor(x))
    assert list(features) == ["low_level", "out"]
