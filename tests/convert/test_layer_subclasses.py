"""Subclasses of torch layers use torch's reset_parameters: a subclass calls
``super().reset_parameters()`` (timm's ScaledStdConv2d), and the base's
constructor runs a subclass's own version, as torch's constructor does.
Both frameworks run the same source and are compared. (Each rule's
``reset_parameters`` is proven value by value by its ``reset_parameters``
example, whose random draws the harness replays.)"""

from __future__ import annotations

import textwrap

import mindspore
import numpy as np
import pytest
import torch

from tests.conversion import convert_to, load
from transpiler.proof.weights import convert_state_dict

SOURCE = textwrap.dedent(
    '''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class ScaledStdConv2d(nn.Conv2d):
        """timm's weight-standardised convolution (timm/layers/std_conv.py)."""

        def __init__(self, in_channels, out_channels, kernel_size, gain_init=1.0, eps=1e-6):
            super().__init__(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
            self.scale = self.weight[0].numel() ** -0.5
            self.eps = eps
            self.gain_init = gain_init
            self.gain = nn.Parameter(torch.empty((self.out_channels, 1, 1, 1)))
            self.reset_parameters()

        def reset_parameters(self):
            if hasattr(self, "gain"):  # not yet on the first call, from the base's constructor
                torch.nn.init.constant_(self.gain, self.gain_init)
                super().reset_parameters()

        def forward(self, x):
            weight = F.batch_norm(
                self.weight.reshape(1, self.out_channels, -1), None, None,
                weight=(self.gain * self.scale).view(-1), training=True, momentum=0., eps=self.eps,
            ).reshape_as(self.weight)
            return F.conv2d(x, weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


    class ZeroLinear(nn.Linear):
        def reset_parameters(self):
            nn.init.zeros_(self.weight)
            nn.init.ones_(self.bias)


    class ConstantConv(nn.Conv2d):
        def reset_parameters(self):
            nn.init.constant_(self.weight, 0.25)


    class HalfNorm(nn.LayerNorm):
        def reset_parameters(self):
            nn.init.constant_(self.weight, 0.5)
            nn.init.constant_(self.bias, -1.0)


    class ShiftedBatchNorm(nn.BatchNorm2d):
        def reset_parameters(self):
            super().reset_parameters()
            nn.init.constant_(self.bias, 2.0)
    '''
)


@pytest.fixture(scope="module")
def modules(tmp_path_factory):
    folder = tmp_path_factory.mktemp("subclasses")
    original = folder / "layers.py"
    original.write_text(SOURCE)
    (folder / "out").mkdir()
    return load(original), load(convert_to(original, folder / "out"))


def test_a_subclass_calling_super_reset_parameters_builds_and_matches_torch(modules):
    torch_module, ms_module = modules
    torch.manual_seed(0)
    model, cell = torch_module.ScaledStdConv2d(3, 8, 3, gain_init=0.5), ms_module.ScaledStdConv2d(3, 8, 3, gain_init=0.5)
    assert np.all(cell.gain.asnumpy() == 0.5)
    # torch's draw: kaiming-uniform with a = sqrt(5), i.e. within +-1/sqrt(fan_in), as MindSpore's
    bound = 1 / np.sqrt(3 * 3 * 3)
    weight = cell.weight.asnumpy()
    assert np.abs(weight).max() <= bound and weight.std() > 0.8 * bound / np.sqrt(3)
    mindspore.load_param_into_net(cell, convert_state_dict(model.state_dict(), cell), strict_load=True)
    x = np.random.RandomState(0).standard_normal((2, 3, 6, 6)).astype(np.float32)
    expected = model(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(cell(mindspore.Tensor(x)).asnumpy(), expected, atol=1e-5)


@pytest.mark.parametrize("name, args, parameters", [
    ("ZeroLinear", (3, 4), {"weight": "weight", "bias": "bias"}),
    ("ConstantConv", (2, 3, 3), {"weight": "weight"}),
    ("HalfNorm", (5,), {"weight": "gamma", "bias": "beta"}),
    ("ShiftedBatchNorm", (4,), {"weight": "gamma", "bias": "beta", "running_var": "moving_variance"}),
])
def test_the_constructor_runs_a_subclass_reset_parameters(modules, name, args, parameters):
    torch_module, ms_module = modules
    model, cell = getattr(torch_module, name)(*args), getattr(ms_module, name)(*args)
    cell_parameters = dict(cell.parameters_and_names())
    for torch_name, ms_name in parameters.items():
        np.testing.assert_array_equal(cell_parameters[ms_name].asnumpy(),
                                      getattr(model, torch_name).detach().numpy(), err_msg=torch_name)


# What a subclass reads on ``self`` that is not torch's value (the layer's adapter
# cannot give it without changing what MindSpore's Cell computes with)
KNOWN_DIFFERENCES = {
    # MindSpore stores the 1-d windows as 2-d (1, k) and pads per side
    "torch.nn.Conv1d": {"kernel_size", "stride", "padding", "dilation"},
    "torch.nn.ConvTranspose1d": {"kernel_size", "stride", "padding", "dilation", "output_padding"},
    # an int (or per side) where torch keeps a tuple: the same padding to F.conv2d
    "torch.nn.Conv2d": {"padding"}, "torch.nn.Conv3d": {"padding"},
    "torch.nn.ConvTranspose2d": {"padding", "output_padding"}, "torch.nn.ConvTranspose3d": {"padding"},
    # passed to MindSpore under torch's name, which it does not keep
    "torch.nn.BatchNorm1d": {"affine"}, "torch.nn.BatchNorm2d": {"affine"}, "torch.nn.SyncBatchNorm": {"affine"},
    "torch.nn.BatchNorm3d": {"num_features", "eps", "momentum", "affine"}, "torch.nn.RNN": {"nonlinearity"},
}


def test_a_subclass_reads_torch_attributes_on_self(tmp_path):
    """Every constructor argument torch keeps as an attribute, read on ``self`` of
    a subclass of each layer: renamed ones through the adapter's properties
    (``eps`` -> ``epsilon``), those MindSpore does not take kept by the adapter
    (Embedding's ``max_norm``, ``sparse``; PReLU's ``init``)."""
    from rewrite_rules.registry import load_rules
    from tests.rules.test_layer_attributes import LAYERS

    rules = load_rules()
    layers = {name: ctor for name, ctor in LAYERS.items() if name.count(".") == 2}  # classes, not constructors
    lines = ["import torch.nn as nn", ""]
    for index, (name, ctor) in enumerate(layers.items()):
        layer, args = ctor.split("(", 1)
        lines += [f"class Sub{index}({layer}):", "    pass", "", f"def make{index}():", f"    return Sub{index}({args}", ""]
    original = tmp_path / "subclasses.py"
    original.write_text("\n".join(lines))
    (tmp_path / "out").mkdir()
    torch_module, ms_module = load(original), load(convert_to(original, tmp_path / "out"))
    compared = differences = 0
    for index, name in enumerate(layers):
        model, cell = getattr(torch_module, f"make{index}")(), getattr(ms_module, f"make{index}")()
        for param in rules.calls[name].params:
            if param.name in ("device", "dtype") or param.name.startswith("_") or not hasattr(model, param.name):
                continue
            expected = getattr(model, param.name)
            if isinstance(expected, torch.Tensor):
                expected = tuple(expected.shape)
            try:
                value = getattr(cell, param.name)
            except AttributeError:
                value = "<missing>"
            value = tuple(value.shape) if isinstance(value, mindspore.Tensor) else value
            same = value == pytest.approx(expected) if isinstance(expected, float) else value == expected
            if param.name in KNOWN_DIFFERENCES.get(name, ()):
                differences += 1
                continue
            assert same, f"{name}.{param.name}: torch {expected!r}, the subclass reads {value!r}"
            compared += 1
    assert compared > 60 and differences == sum(len(v) for v in KNOWN_DIFFERENCES.values())
