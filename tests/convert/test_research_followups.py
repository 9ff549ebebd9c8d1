"""Idioms of published research code, proven by running torch and the conversion on the
same inputs (values and gradients, see tests/gradient_check.py); the converted module
runs in a process where importing torch fails.

- ``fn = Fn.apply`` (an autograd Function's apply read as a value, BinaryNet's
  ``binarize = Binarize.apply``): an instance of the converted Cell, called as apply
  is; a Function keeping a tensor it computed on ctx gets an instance per call, or two
  calls before the backward would share it (measured: wrong gradients).
- Layers whose torch attributes MindSpore keeps otherwise or not at all, read by a
  subclass on ``self`` or by a Module on its child: pooling's kernel_size, stride (torch
  defaults it to the window), padding, dilation, ceil_mode (EfficientDet's
  MaxPool2dStaticSamePadding, both shapes), BatchNorm's affine and num_features, RNN's
  nonlinearity.
- A MultiheadAttention subclass whose forward takes one input (``super().forward(x, x, x)``)
  next to the layer called with torch's keywords (``key=``, ``value=``)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from tests.conversion import convert_to
from tests.gradient_check import Case, differences, load_torch_module, mindspore_side, torch_side

SOURCE = textwrap.dedent(
    '''
    import math

    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class SignSTE(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return torch.sign(x)

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output


    class Square(torch.autograd.Function):
        """Keeps a tensor it computed on ctx: the Cell keeps it on self."""

        @staticmethod
        def forward(ctx, x):
            twice = x * 2
            ctx.twice = twice
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.twice


    binarize = SignSTE.apply
    square = Square.apply


    def binarized(x):
        return binarize(x) * 2 + binarize(x * 3)


    def squares(a, b):
        return square(a) + square(b) * 3


    class BinaryLinear(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 2)
            self.quantize = SignSTE.apply

        def forward(self, x):
            sign = Square.apply
            return self.fc(self.quantize(x)) + sign(x).sum()


    class MaxPool2dStaticSamePadding(nn.Module):
        """EfficientDet's: a MaxPool2d made from *args, **kwargs, its stride and window read back."""

        def __init__(self, *args, **kwargs):
            super().__init__()
            self.pool = nn.MaxPool2d(*args, **kwargs)
            self.stride = self.pool.stride
            self.kernel_size = self.pool.kernel_size
            if isinstance(self.stride, int):
                self.stride = [self.stride] * 2
            if isinstance(self.kernel_size, int):
                self.kernel_size = [self.kernel_size] * 2

        def forward(self, x):
            h, w = x.shape[-2:]
            extra_h = (math.ceil(w / self.stride[1]) - 1) * self.stride[1] - w + self.kernel_size[1]
            extra_v = (math.ceil(h / self.stride[0]) - 1) * self.stride[0] - h + self.kernel_size[0]
            left = extra_h // 2
            top = extra_v // 2
            x = F.pad(x, [left, extra_h - left, top, extra_v - top])
            return self.pool(x)


    class SamePool(nn.MaxPool2d):
        """The same as a subclass: torch's attributes read on self."""

        def forward(self, x):
            return F.max_pool2d(x, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)


    class AvgSame(nn.AvgPool2d):
        def forward(self, x):
            return F.avg_pool2d(x, self.kernel_size, self.stride, self.padding, self.ceil_mode, self.count_include_pad)


    class Norm(nn.BatchNorm1d):
        def forward(self, x):
            out = super().forward(x)
            return out * 2 if self.affine and self.num_features == 3 else out


    class Recurrent(nn.RNN):
        def forward(self, x):
            out, _ = super().forward(x)
            return out if self.nonlinearity == "tanh" else -out


    class SelfAttention(nn.MultiheadAttention):
        """A subclass whose forward takes one input."""

        def forward(self, x):
            return super().forward(x, x, x, need_weights=False)[0]


    class Attend(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = SelfAttention(4, 2)
            self.cross = nn.MultiheadAttention(4, 2)

        def forward(self, x):
            y = self.attention(x)
            return self.cross(y, key=x, value=x)[0]
    '''
)


def randn(*shape, seed=0):
    return np.random.RandomState(seed + sum(shape)).randn(*shape).astype(np.float32)


CASES = [
    Case("binarized", [randn(3, 4)]),
    Case("squares", [randn(2, 3), randn(2, 3, seed=1)]),
    Case("BinaryLinear", [randn(4, 3)], args=[]),
    Case("MaxPool2dStaticSamePadding", [randn(2, 3, 7, 8)], args=[3, 2]),
    Case("MaxPool2dStaticSamePadding", [randn(2, 3, 7, 8)], args=[3]),
    Case("SamePool", [randn(2, 3, 7, 8)], args=[3]),
    Case("SamePool", [randn(2, 3, 9, 8)], args=[3, 2, 1, 2, True]),
    Case("AvgSame", [randn(2, 3, 7, 8)], args=[3, 2, 1, True, False]),
    Case("Norm", [randn(4, 3)], args=[3]),
    Case("Recurrent", [randn(5, 2, 3)], args=[3, 4]),
    Case("Recurrent", [randn(5, 2, 3)], args=[3, 4, 1, "relu"]),
    Case("SelfAttention", [randn(3, 2, 4)], args=[4, 2]),
    Case("Attend", [randn(3, 2, 4)], args=[]),
]


@pytest.fixture(scope="module")
def both_sides(tmp_path_factory):
    folder = tmp_path_factory.mktemp("apply_values")
    source = folder / "functions.py"
    source.write_text(SOURCE)
    (folder / "out").mkdir()
    target = convert_to(source, folder / "out")
    module = load_torch_module(source, "apply_values_torch")
    torch_results = [torch_side(module, case) for case in CASES]
    return target, torch_results, mindspore_side(target, CASES, torch_results, folder)


def test_apply_read_as_a_value_is_an_instance_of_the_cell(both_sides):
    text = both_sides[0].read_text()
    assert "TODO(ms-migrate)" not in text and ".apply" not in text, text
    assert "binarize = SignSTE()" in text and "self.quantize = SignSTE()" in text
    assert "square = lambda *args: Square()(*args)" in text  # state on self: an instance per call


def test_pooling_keeps_torch_attributes_in_its_adapter(both_sides):
    text = both_sides[0].read_text()
    assert "self.stride = kernel_size if stride is None else stride" in text
    assert "self.dilation = dilation" in text and "self.nonlinearity = nonlinearity" in text


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{c.name}{i}" for i, c in enumerate(CASES)])
def test_values_and_gradients_match_torch(both_sides, index):
    _, torch_results, ms_results = both_sides
    problems = differences(torch_results[index], ms_results[index])
    assert not problems, problems


def test_a_class_deriving_from_the_torch_nn_module_itself_is_marked_not_a_crash():
    """``torch.nn`` itself as a base (vector-quantize's and s4's files hold such
    spellings) made the Cell check index past the name: the file failed."""
    from transpiler.convert.pipeline import convert_source

    result = convert_source("import torch\nimport torch.nn as nn\n\nclass A(nn):\n    pass\n\nx = torch.zeros(2)\n", "a.py")
    assert result.status == "converted", result.diagnostics
    assert "TODO(ms-migrate): torch.nn" in result.output and "ops.zeros(2)" in result.output


VIT_LIBRARY = '''
import torch
import torch.nn as nn


class VisionTransformer(nn.Module):
    def __init__(self, dim=8, classes=3):
        super().__init__()
        self.embed = nn.Linear(4, dim)
        self.head = nn.Linear(dim, classes)

    def forward_features(self, x, attn_mask=None):
        return self.embed(x).mean(1)

    def forward(self, x, attn_mask=None):
        return self.head(self.forward_features(x, attn_mask=attn_mask))
'''

DISTILLED = '''
import torch
import torch.nn as nn

from vitlib import VisionTransformer


class DistilledVisionTransformer(VisionTransformer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.head_dist = nn.Linear(8, 3)

    def forward_features(self, x):
        h = self.embed(x)
        return h[:, 0], h[:, 1]

    def forward(self, x):
        x, x_dist = self.forward_features(x)
        return (self.head(x) + self.head_dist(x_dist)) / 2
'''


def test_a_subclass_of_a_model_library_class_runs_its_own_forward(tmp_path):
    """deit's DistilledVisionTransformer derives from timm's VisionTransformer, which the
    file imports (converted on its own): its forward is its Cell's construct, or the
    library's construct would run and call forward_features with arguments it lacks."""
    import mindspore
    import torch

    from tests.conversion import load, move_torch_weights

    source, out = tmp_path / "src", tmp_path / "out"
    source.mkdir()
    out.mkdir()
    (source / "vitlib.py").write_text(VIT_LIBRARY)
    (source / "distilled.py").write_text(DISTILLED)
    convert_to(source / "vitlib.py", out)
    converted = convert_to(source / "distilled.py", out)
    assert "def construct(self, x):" in converted.read_text()
    torch.manual_seed(0)
    net = load(source / "distilled.py").DistilledVisionTransformer().eval()
    cell = load(converted).DistilledVisionTransformer()
    move_torch_weights(net, cell)
    cell.set_train(False)
    x = np.random.default_rng(0).standard_normal((2, 5, 4)).astype(np.float32)
    with torch.no_grad():
        expected = net(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(cell(mindspore.Tensor(x)).asnumpy(), expected, rtol=1e-5, atol=1e-6)
