"""Classes deriving from torch layers that call the layer's own methods
(LoRA-style layers with a mixin: ``nn.Linear.__init__(self, ...)``,
``nn.Embedding.forward(self, x)``, ``nn.Linear.train(self, mode)``,
``nn.Conv2d.reset_parameters(self)``, ``self._conv_forward(x, w, b)``) and
layer subclasses that override forward and read the layer's settings on
``self``. The converted classes derive from the layers' adapters
(``torch_nn.Linear``) and call their Cell counterparts; they import without
torch, take the torch weights through ``convert_state_dict`` and give
torch's outputs, before and after a ``train(False)`` that merges the
low-rank update into the weight."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap

import mindspore
import numpy as np
import pytest
import torch

from tests.conversion import convert_to, load
from transpiler.proof.weights import convert_state_dict

SOURCE = textwrap.dedent('''
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class LowRank:
    """A mixin holding the low-rank update's settings (no Module of its own)."""

    def __init__(self, rank, alpha, dropout, merge):
        self.rank = rank
        self.alpha = alpha
        self.dropout_p = dropout
        self.lowrank_dropout = nn.Dropout(p=dropout) if dropout > 0.0 else (lambda x: x)
        self.merged = False
        self.merge = merge


class LoraEmbedding(nn.Embedding, LowRank):
    def __init__(self, num_embeddings, embedding_dim, rank=0, alpha=1, merge=True, **kwargs):
        nn.Embedding.__init__(self, num_embeddings, embedding_dim, **kwargs)
        LowRank.__init__(self, rank, alpha, 0.0, merge)
        if rank > 0:
            self.down = nn.Parameter(self.weight.new_zeros((rank, num_embeddings)))
            self.up = nn.Parameter(self.weight.new_zeros((embedding_dim, rank)))
            self.scale = self.alpha / self.rank
            self.weight.requires_grad = False
        self.reset_parameters()

    def reset_parameters(self):
        nn.Embedding.reset_parameters(self)
        if hasattr(self, "down"):
            nn.init.zeros_(self.down)
            nn.init.normal_(self.up)

    def train(self, mode=True):
        nn.Embedding.train(self, mode)
        delta = (self.up @ self.down).transpose(0, 1) * self.scale if self.rank > 0 else None
        if mode and self.merge and self.merged:
            if delta is not None:
                self.weight.data -= delta
            self.merged = False
        elif not mode and self.merge and not self.merged:
            if delta is not None:
                self.weight.data += delta
            self.merged = True
        return self

    def forward(self, ids):
        if self.rank > 0 and not self.merged:
            out = nn.Embedding.forward(self, ids)
            low = F.embedding(ids, self.down.transpose(0, 1), self.padding_idx, self.max_norm,
                              self.norm_type, self.scale_grad_by_freq, self.sparse)
            return out + (low @ self.up.transpose(0, 1)) * self.scale
        return nn.Embedding.forward(self, ids)


class LoraLinear(nn.Linear, LowRank):
    def __init__(self, in_features, out_features, rank=0, alpha=1, dropout=0.0, transposed=False,
                 merge=True, **kwargs):
        nn.Linear.__init__(self, in_features, out_features, **kwargs)
        LowRank.__init__(self, rank, alpha, dropout, merge)
        self.transposed = transposed
        if rank > 0:
            self.down = nn.Parameter(self.weight.new_zeros((rank, in_features)))
            self.up = nn.Parameter(self.weight.new_zeros((out_features, rank)))
            self.scale = self.alpha / self.rank
            self.weight.requires_grad = False
        self.reset_parameters()
        if transposed:
            self.weight.data = self.weight.data.transpose(0, 1)

    def reset_parameters(self):
        nn.Linear.reset_parameters(self)
        if hasattr(self, "down"):
            nn.init.kaiming_uniform_(self.down, a=math.sqrt(5))
            nn.init.zeros_(self.up)

    def _t(self, w):
        return w.transpose(0, 1) if self.transposed else w

    def train(self, mode: bool = True):
        nn.Linear.train(self, mode)
        if mode:
            if self.merge and self.merged:
                if self.rank > 0:
                    self.weight.data -= self._t(self.up @ self.down) * self.scale
                self.merged = False
        else:
            if self.merge and not self.merged:
                if self.rank > 0:
                    self.weight.data += self._t(self.up @ self.down) * self.scale
                self.merged = True

    def forward(self, x):
        if self.rank > 0 and not self.merged:
            out = F.linear(x, self._t(self.weight), bias=self.bias)
            return out + (self.lowrank_dropout(x) @ self.down.transpose(0, 1) @ self.up.transpose(0, 1)) * self.scale
        return F.linear(x, self._t(self.weight), bias=self.bias)


class LoraConv2d(nn.Conv2d, LowRank):
    def __init__(self, in_channels, out_channels, kernel_size, rank=0, alpha=1, merge=True, **kwargs):
        nn.Conv2d.__init__(self, in_channels, out_channels, kernel_size, **kwargs)
        LowRank.__init__(self, rank, alpha, 0.0, merge)
        if rank > 0:
            self.down = nn.Parameter(self.weight.new_zeros((rank * kernel_size, in_channels * kernel_size)))
            self.up = nn.Parameter(self.weight.new_zeros((out_channels // self.groups * kernel_size,
                                                          rank * kernel_size)))
            self.scale = self.alpha / self.rank
            self.weight.requires_grad = False
        self.reset_parameters()

    def reset_parameters(self):
        nn.Conv2d.reset_parameters(self)
        if hasattr(self, "down"):
            nn.init.kaiming_uniform_(self.down, a=math.sqrt(5))
            nn.init.zeros_(self.up)

    def train(self, mode=True):
        super(LoraConv2d, self).train(mode)
        delta = (self.up @ self.down).view(self.weight.shape) * self.scale
        if mode and self.merge and self.merged:
            self.weight.data -= delta
            self.merged = False
        elif not mode and self.merge and not self.merged:
            self.weight.data += delta
            self.merged = True

    def forward(self, x):
        if self.rank > 0 and not self.merged:
            return self._conv_forward(x, self.weight + (self.up @ self.down).view(self.weight.shape) * self.scale,
                                      self.bias)
        return nn.Conv2d.forward(self, x)


class WrappedLoraConv(nn.Module):
    """The other common shape: the convolution is a child, called through its _conv_forward."""

    def __init__(self, in_channels, out_channels, kernel_size, rank=2, **kwargs):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, **kwargs)
        self.down = nn.Parameter(torch.randn(rank * kernel_size, in_channels * kernel_size) * 0.1)
        self.up = nn.Parameter(torch.randn(out_channels * kernel_size, rank * kernel_size) * 0.1)

    def forward(self, x):
        weight = self.conv.weight + (self.up @ self.down).view(self.conv.weight.shape)
        return self.conv._conv_forward(x, weight, self.conv.bias)


class StdConv2d(nn.Conv2d):
    """Weight-standardised convolution."""

    def forward(self, x):
        w = self.weight
        mean = w.mean(dim=(1, 2, 3), keepdim=True)
        var = w.var(dim=(1, 2, 3), keepdim=True, unbiased=False)
        return F.conv2d(x, (w - mean) / torch.sqrt(var + 1e-5), self.bias, self.stride, self.padding,
                        self.dilation, self.groups)


class StdConv2dPrivate(nn.Conv2d):
    def forward(self, x):
        std, mean = torch.std_mean(self.weight, dim=(1, 2, 3), keepdim=True, unbiased=False)
        return self._conv_forward(x, (self.weight - mean) / (std + 1e-6), self.bias)


class CausalConv1d(nn.Conv1d):
    def __init__(self, in_channels, out_channels, kernel_size, dilation=1):
        super().__init__(in_channels, out_channels, kernel_size, dilation=dilation)
        self.left = (kernel_size - 1) * dilation

    def forward(self, x):
        return super(CausalConv1d, self).forward(F.pad(x, (self.left, 0)))


class TimeConv3d(nn.Conv3d):
    """Sets the settings it was given on itself, as torch keeps them, and passes them on."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding=0, groups=1):
        super().__init__(in_channels, out_channels, kernel_size, stride=stride, padding=padding, groups=groups)
        self.stride = stride
        self.padding = padding
        self.groups = groups

    def forward(self, x):
        half = F.conv3d(x, self.weight * 0.5, self.bias, stride=self.stride, padding=self.padding, groups=self.groups)
        return half + super().forward(x)


class ChannelsFirstLayerNorm(nn.LayerNorm):
    """A LayerNorm over the channels of an (N, C, H, W) tensor."""

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class LayerNorm2d(nn.LayerNorm):
    def __init__(self, num_channels, eps=1e-6):
        super().__init__(num_channels, eps=eps)

    def forward(self, x):
        return F.layer_norm(x.permute(0, 2, 3, 1), self.normalized_shape, self.weight, self.bias, self.eps).permute(
            0, 3, 1, 2)


class ScaledGroupNorm(nn.GroupNorm):
    def forward(self, x):
        return F.group_norm(x, self.num_groups, self.weight * 2, self.bias, self.eps) + nn.GroupNorm.forward(self, x)


class UpConv(nn.ConvTranspose2d):
    def forward(self, x):
        return torch.relu(super().forward(x))


class CastLinear(nn.Linear):
    def forward(self, x):
        return F.linear(x, self.weight.to(x.dtype), None if self.bias is None else self.bias.to(x.dtype))


class CastConv1d(nn.Conv1d):
    """Overrides only the convolution step: torch's forward runs it."""

    def _conv_forward(self, x, weight, bias):
        return super()._conv_forward(x, weight.to(x.dtype) * 0.5, None if bias is None else bias.to(x.dtype))


class HalfConv2d(StdConv2d):
    def forward(self, x):
        return self._conv_forward(x, self.weight * 0.5, self.bias)


class GroupNorm32(nn.GroupNorm):
    def forward(self, x):
        return super().forward(x.float()).type(x.dtype)


class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = CastConv1d(4, 8, 3, padding=1)
        self.norm = GroupNorm32(2, 8)
        self.fc = CastLinear(8, 3)

    def forward(self, x):
        return self.fc(self.norm(self.conv(x)).transpose(1, 2))


class ScaledAttention(nn.MultiheadAttention):
    def forward(self, query, key, value):
        out = super().forward(query, key, value, need_weights=False)[0]
        return out * (self.embed_dim // self.num_heads)


class SelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.attn = ScaledAttention(dim, heads, batch_first=True)

    def forward(self, x):
        return self.attn(x, x, x)


class FrozenNormBackbone(nn.Module):
    """Keeps its batch norms in eval mode while training (detection backbones)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.frozen = True

    def train(self, mode=True):
        super().train(mode)
        if self.frozen:
            for module in self.modules():
                if isinstance(module, nn.BatchNorm2d):
                    module.eval()
        return self

    def forward(self, x):
        return self.bn(self.conv(x))


class Head(nn.Module):
    def __init__(self):
        nn.Module.__init__(self)
        self.fc = LoraLinear(6, 3, rank=2, alpha=4)

    def forward(self, x):
        return self.fc(x)
''')


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("parent_calls")
    original = folder / "layers.py"
    original.write_text(SOURCE)
    (folder / "out").mkdir()
    out = convert_to(original, folder / "out")
    return load(original), load(out), out


def test_parent_calls_become_calls_of_the_adapter_cells(converted):
    text = converted[2].read_text()
    assert "TODO(ms-migrate)" not in text
    assert not re.search(r"^\s*(import|from) torch\b", text, re.M)
    for expected in ("torch_nn.Embedding.__init__(self, num_embeddings, embedding_dim, **kwargs)",
                     "torch_nn.Embedding.reset_parameters(self)", "torch_nn.Embedding.set_train(self, mode)",
                     "torch_nn.Embedding.construct(self, ids)", "torch_nn.Linear.__init__(self, in_features",
                     "torch_nn.Conv2d.construct(self, x)", "def set_train(self, mode: bool = True):",
                     "super(LoraConv2d, self).set_train(mode)", "super(CausalConv1d, self).construct(",
                     "nn.Cell.__init__(self)", "torch_nn.GroupNorm.construct(self, x)"):
        assert expected in text, expected
    # torch's _conv_forward: the convolution with the Cell's own settings
    assert text.count("ops.conv2d(") == 6 and "groups=self.conv.group" in text
    assert "return self._conv_forward(x, self.weight, self.bias)" in text  # CastConv1d's construct


def _torch_and_cell(converted, name, args, kwargs):
    torch_module, ms_module, _ = converted
    torch.manual_seed(0)
    model = getattr(torch_module, name)(*args, **kwargs)
    for parameter_name, parameter in model.named_parameters():
        if parameter_name.endswith("up"):  # the low-rank update starts at zero: make it count
            torch.nn.init.normal_(parameter, std=0.5)
    cell = getattr(ms_module, name)(*args, **kwargs)
    mindspore.load_param_into_net(cell, convert_state_dict(model.state_dict(), cell), strict_load=True)
    return model, cell


def _run(model, cell, x):
    expected = model(torch.from_numpy(x)).detach().numpy()
    return cell(mindspore.Tensor(x)).asnumpy(), expected


_RNG = np.random.RandomState(0)
_IMAGE = _RNG.standard_normal((2, 3, 7, 7)).astype(np.float32)

CASES = [
    ("LoraEmbedding", (10, 6), {"rank": 2, "alpha": 4}, _RNG.randint(0, 10, (2, 5)).astype(np.int64)),
    ("LoraLinear", (6, 4), {"rank": 2, "alpha": 4}, _RNG.standard_normal((2, 5, 6)).astype(np.float32)),
    ("LoraLinear", (6, 4), {"rank": 2, "transposed": True, "bias": False},
     _RNG.standard_normal((3, 6)).astype(np.float32)),
    ("LoraConv2d", (3, 4, 3), {"rank": 2, "padding": 1, "stride": 2}, _IMAGE),
    ("LoraConv2d", (3, 4, 3), {"rank": 1, "padding": (1, 0), "dilation": 2}, _IMAGE),
    ("WrappedLoraConv", (3, 4, 3), {"padding": (0, 1)}, _IMAGE),
    ("StdConv2d", (3, 4, 3), {"padding": 1, "groups": 1}, _IMAGE),
    ("StdConv2d", (3, 4, [3, 3]), {"stride": [2], "dilation": [1, 1]}, _IMAGE),  # torch takes lists (a stride of one value)
    ("StdConv2dPrivate", (3, 6, 3), {"padding": "same", "groups": 3}, _IMAGE),
    ("CausalConv1d", (3, 4, 3), {"dilation": 2}, _RNG.standard_normal((2, 3, 9)).astype(np.float32)),
    ("TimeConv3d", (2, 4, 3, 1), {"padding": 1, "groups": 2}, _RNG.standard_normal((1, 2, 3, 4, 4)).astype(np.float32)),
    ("ChannelsFirstLayerNorm", (3,), {"eps": 1e-4}, _IMAGE),
    ("LayerNorm2d", (3,), {}, _IMAGE),
    ("ScaledGroupNorm", (3, 6), {}, _RNG.standard_normal((2, 6, 4, 4)).astype(np.float32)),
    ("UpConv", (3, 2, 3), {"stride": 2, "padding": 1}, _IMAGE),
    ("FrozenNormBackbone", (), {}, _IMAGE),
    ("Head", (), {}, _RNG.standard_normal((2, 6)).astype(np.float32)),
    ("Tower", (), {}, _RNG.standard_normal((2, 4, 5)).astype(np.float32)),
    ("SelfAttention", (8, 2), {}, _RNG.standard_normal((2, 5, 8)).astype(np.float32)),
    ("HalfConv2d", (3, 4, 3), {"padding": "valid", "stride": 2}, _IMAGE),
]


@pytest.mark.parametrize("name, args, kwargs, x", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_the_subclass_matches_torch_with_converted_weights(converted, name, args, kwargs, x):
    model, cell = _torch_and_cell(converted, name, args, kwargs)
    model.train()
    cell.set_train(True)
    out, expected = _run(model, cell, x)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    # train(False) merges a low-rank update into the weight (torch's eval() runs the override;
    # MindSpore's set_train(False) is the override, renamed)
    model.eval()
    cell.set_train(False)
    out, expected = _run(model, cell, x)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    if not hasattr(model, "merged"):
        return  # (MindSpore's set_train reaches no child's override: Head's layer stays unmerged, as exact)
    assert cell.merged == model.merged
    for key, value in model.state_dict().items():
        placed = convert_state_dict({key: value}, cell, strict=False)
        for ms_name, parameter in placed.items():
            np.testing.assert_allclose(dict(cell.parameters_and_names())[ms_name].asnumpy(), parameter.asnumpy(),
                                       rtol=1e-5, atol=1e-6, err_msg=key)


def test_a_subclass_constructor_runs_its_reset_parameters_with_torch_draws(converted):
    _, ms_module, _ = converted
    cell = ms_module.LoraLinear(8, 4, rank=2)
    np.testing.assert_array_equal(cell.up.asnumpy(), 0)
    bound = 1 / np.sqrt(8)  # kaiming-uniform with a = sqrt(5): within +-1/sqrt(fan_in)
    assert 0 < np.abs(cell.down.asnumpy()).max() <= bound and np.abs(cell.weight.asnumpy()).max() <= bound
    assert not cell.weight.requires_grad and {p.name for p in cell.trainable_params()} == {"bias", "down", "up"}
    table = ms_module.LoraEmbedding(200, 50, rank=2).weight.asnumpy()
    assert 0.9 < table.std() < 1.1  # torch's N(0, 1), not MindSpore's N(0, 0.01)


def test_the_converted_layers_import_and_run_without_torch(converted):
    folder = converted[2].parent
    script = textwrap.dedent(f"""
        import json, sys
        from transpiler.proof.no_torch import block_torch
        block_torch()
        sys.path.insert(0, {str(folder)!r})
        import numpy as np, mindspore
        import layers
        x = mindspore.Tensor(np.ones((1, 3, 5, 5), np.float32))
        shapes = {{
            "lora": layers.LoraConv2d(3, 4, 3, rank=2, padding=1)(x).shape,
            "norm": layers.ChannelsFirstLayerNorm(3)(x).shape,
            "embedding": layers.LoraEmbedding(10, 4, rank=2)(mindspore.Tensor(np.array([[1, 2]], np.int32))).shape,
        }}
        print(json.dumps({{k: list(v) for k, v in shapes.items()}}))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"lora": [1, 4, 5, 5], "norm": [1, 3, 5, 5],
                                                              "embedding": [1, 2, 4]}


def test_parent_methods_without_a_cell_counterpart_are_marked_with_the_reason(tmp_path):
    from transpiler.convert.pipeline import convert_source

    source = textwrap.dedent("""
        import torch.nn as nn


        class Restoring(nn.Linear):
            def _load_from_state_dict(self, *args):
                nn.Linear._load_from_state_dict(self, *args)

            def reset(self):
                nn.Module.reset_parameters(self)

            def eval_mode(self):
                return nn.Linear.eval(self)
    """)
    result = convert_source(source, "restoring.py")
    markers = [d.message for d in result.diagnostics if d.severity.name == "MARKER"]
    assert any("_load_from_state_dict has no counterpart on the MindSpore Cell" in m for m in markers), markers
    assert any("torch.nn.Module has no reset_parameters" in m for m in markers), markers
    assert "return torch_nn.Linear.set_train(self, False)" in result.output


GRAPH_LAYERS = [case for case in CASES if case[0] in {
    "LoraEmbedding", "LoraConv2d", "WrappedLoraConv", "StdConv2d", "CausalConv1d", "LayerNorm2d", "ScaledGroupNorm",
    "UpConv", "Tower", "HalfConv2d", "TimeConv3d"}]


def test_the_converted_layers_compile_in_graph_mode(converted, tmp_path):
    """The migration guide's GRAPH_MODE compiles construct: the parent calls, the
    convolution step and the kept attributes compile too."""
    expected = {}
    for index, (name, args, kwargs, x) in enumerate(GRAPH_LAYERS):
        model, cell = _torch_and_cell(converted, name, args, kwargs)
        model.eval()
        mindspore.save_checkpoint(cell, str(tmp_path / f"{index}.ckpt"))
        np.save(tmp_path / f"{index}.npy", x)
        expected[index] = model(torch.from_numpy(x)).detach().numpy()
    script = textwrap.dedent(f"""
        import json, sys
        import numpy as np, mindspore
        mindspore.set_context(mode=mindspore.GRAPH_MODE)
        sys.path.insert(0, {str(converted[2].parent)!r})
        import layers
        errors = {{}}
        for index, (name, args, kwargs) in enumerate({[(n, a, k) for n, a, k, _ in GRAPH_LAYERS]!r}):
            cell = getattr(layers, name)(*args, **kwargs)
            mindspore.load_checkpoint({str(tmp_path)!r} + f"/{{index}}.ckpt", cell, strict_load=True)
            cell.set_train(False)
            out = cell(mindspore.Tensor(np.load({str(tmp_path)!r} + f"/{{index}}.npy"))).asnumpy()
            np.save({str(tmp_path)!r} + f"/{{index}}.out.npy", out)
        print("done")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    for index, (name, *_) in enumerate(GRAPH_LAYERS):
        np.testing.assert_allclose(np.load(tmp_path / f"{index}.out.npy"), expected[index], rtol=1e-5, atol=1e-5,
                                   err_msg=name)
