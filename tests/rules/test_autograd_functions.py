"""Custom torch.autograd.Functions become Cells with a bprop, proven by running:
the torch source and its conversion get the same inputs (and weights), and their
forward values and gradients (torch ``.backward()``, ``mindspore.value_and_grad``)
are compared. The converted module runs where importing torch fails. The kinds
research code writes: a straight-through estimator, a clamp with its own
gradient, a scaled gradient reversal layer, a Function with two outputs, one
reading ``ctx.needs_input_grad`` (torch's own LinearFunction example), one with
``set_materialize_grads`` and ``@once_differentiable``, and Functions used
inside a Module (its parameters passed through ``apply``), also with the
gradient compiled by ``mindspore.jit`` (graph mode)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from tests.conversion import convert_to
from tests.gradient_check import Case, differences, load_torch_module, mindspore_side, torch_side

SOURCE = textwrap.dedent(
    '''
    import torch
    import torch.nn as nn
    from torch.autograd import Function
    from torch.autograd.function import once_differentiable


    def quantize(x):
        # used above the class it calls: .apply still calls an instance of the Cell
        return RoundSTE.apply(x * 4) / 4


    class RoundSTE(torch.autograd.Function):
        """Straight-through estimator: round forward, identity backward."""

        @staticmethod
        def forward(ctx, x):
            return torch.round(x)

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output


    class ClampWithGrad(Function):
        @staticmethod
        def forward(ctx, x, low, high):
            ctx.save_for_backward(x)
            ctx.low = low
            ctx.high = high
            return x.clamp(low, high)

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            inside = (x >= ctx.low) & (x <= ctx.high)
            return grad_output * inside.float() + 0.1 * grad_output * (~inside).float(), None, None


    class ReverseGrad(Function):
        """Gradient reversal (domain adaptation), scaled."""

        @staticmethod
        def forward(ctx, x, alpha):
            ctx.alpha = alpha
            return x.view_as(x)

        @staticmethod
        def backward(ctx, grad_output):
            output = grad_output.neg() * ctx.alpha
            return output, None


    class SinCos(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return torch.sin(x), torch.cos(x)

        @staticmethod
        def backward(ctx, grad_sin, grad_cos):
            x, = ctx.saved_tensors
            return grad_sin * torch.cos(x) - grad_cos * torch.sin(x)


    class LinearFunction(Function):
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            ctx.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            grad_input = grad_weight = grad_bias = None
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0)
            return grad_input, grad_weight, grad_bias


    class ScaledSquare(Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(x)
            ctx.scale = scale
            return x * x * scale, x.sum()

        @staticmethod
        @once_differentiable
        def backward(ctx, grad_square, grad_sum):
            x, = ctx.saved_tensors
            grad = torch.zeros_like(x)
            if grad_square is not None:
                grad = grad + 2 * x * ctx.scale * grad_square
            if grad_sum is not None:
                grad = grad + grad_sum
            return grad, None


    def clamp_with_grad(x):
        return ClampWithGrad.apply(x, -0.5, 0.5)


    def reverse(x):
        return ReverseGrad.apply(x, 0.3)


    def sin_cos(x):
        return SinCos.apply(x)


    def linear(x, w, b):
        return LinearFunction.apply(x, w, b)


    def scaled_square(x):
        square, total = ScaledSquare.apply(x, 1.5)
        return square  # the second output is left unused: its gradient is zero


    class Scale(Function):
        """Forward without ctx, and setup_context (the style of recent releases)."""

        @staticmethod
        def forward(tensor, factor):
            return tensor * factor

        @staticmethod
        def setup_context(ctx, inputs, output):
            tensor, factor = inputs
            ctx.factor = factor

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.factor, None


    class CubeAndSlope(Function):
        @staticmethod
        def forward(x):
            return x ** 3, 3 * x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], output[1])

        @staticmethod
        def backward(ctx, grad_cube, grad_slope):
            x, slope = ctx.saved_tensors
            return grad_cube * slope + grad_slope * 6 * x


    def scale_cube(x):
        cube, slope = CubeAndSlope.apply(Scale.apply(x, 0.7))
        return cube, slope


    # a VQ-VAE's codebook lookup: indices marked non-differentiable, gradients straight through
    class NearestCode(Function):
        @staticmethod
        def forward(ctx, inputs, codebook):
            with torch.no_grad():
                embedding_size = codebook.size(1)
                inputs_flatten = inputs.view(-1, embedding_size)
                codebook_sqr = torch.sum(codebook ** 2, dim=1)
                inputs_sqr = torch.sum(inputs_flatten ** 2, dim=1, keepdim=True)
                distances = torch.addmm(codebook_sqr + inputs_sqr, inputs_flatten, codebook.t(), alpha=-2.0, beta=1.0)
                _, indices_flatten = torch.min(distances, dim=1)
                indices = indices_flatten.view(*inputs.size()[:-1])
                ctx.mark_non_differentiable(indices)
                return indices

        @staticmethod
        def backward(ctx, grad_output):
            raise RuntimeError("no gradient through NearestCode")


    class QuantizeStraightThrough(Function):
        @staticmethod
        def forward(ctx, inputs, codebook):
            indices = NearestCode.apply(inputs, codebook)
            indices_flatten = indices.view(-1)
            ctx.save_for_backward(indices_flatten, codebook)
            ctx.mark_non_differentiable(indices_flatten)
            codes_flatten = torch.index_select(codebook, dim=0, index=indices_flatten)
            codes = codes_flatten.view_as(inputs)
            return (codes, indices_flatten)

        @staticmethod
        def backward(ctx, grad_output, grad_indices):
            grad_inputs, grad_codebook = None, None
            if ctx.needs_input_grad[0]:
                grad_inputs = grad_output.clone()
            if ctx.needs_input_grad[1]:
                indices, codebook = ctx.saved_tensors
                embedding_size = codebook.size(1)
                grad_output_flatten = grad_output.contiguous().view(-1, embedding_size)
                grad_codebook = torch.zeros_like(codebook)
                grad_codebook.index_add_(0, indices, grad_output_flatten)
            return (grad_inputs, grad_codebook)


    def vq_st(inputs, codebook):
        codes, indices = QuantizeStraightThrough.apply(inputs, codebook)
        return codes


    # pyGAT's sparse attention product: the adjacency is saved in forward, its transpose used in backward
    class SpecialSpmm(Function):
        @staticmethod
        def forward(ctx, indices, values, shape, b):
            a = torch.sparse_coo_tensor(indices, values, shape)
            ctx.save_for_backward(a, b)
            ctx.N = shape[0]
            return torch.matmul(a, b)

        @staticmethod
        def backward(ctx, grad_output):
            a, b = ctx.saved_tensors
            grad_values = grad_b = None
            if ctx.needs_input_grad[1]:
                grad_a_dense = grad_output.matmul(b.t())
                edge_idx = a._indices()[0, :] * ctx.N + a._indices()[1, :]
                grad_values = grad_a_dense.view(-1)[edge_idx]
            if ctx.needs_input_grad[3]:
                grad_b = a.t().matmul(grad_output)
            return None, grad_values, None, grad_b


    def sparse_attention(values, b):
        edges = torch.tensor([[0, 1, 1, 2, 3, 3], [1, 0, 2, 2, 0, 3]])
        return SpecialSpmm.apply(edges, values, torch.Size([4, 4]), b)


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(4, 3) * 0.5)
            self.bias = nn.Parameter(torch.randn(4) * 0.1)
            self.head = nn.Linear(4, 2)

        def forward(self, x):
            h = LinearFunction.apply(x, self.weight, self.bias)
            s, c = SinCos.apply(h)
            h = ReverseGrad.apply(s + c, 0.5)
            h = ClampWithGrad.apply(h, -1.0, 1.0) + quantize(h)
            return self.head(h)
    '''
)


def _cases() -> list[Case]:
    rng = np.random.RandomState(3)

    def randn(*shape):
        return rng.randn(*shape).astype(np.float32)

    return [
        Case("quantize", [randn(3, 4)]),
        Case("clamp_with_grad", [randn(3, 4)]),
        Case("reverse", [randn(5)]),
        Case("sin_cos", [randn(2, 3)]),
        Case("linear", [randn(5, 3), randn(4, 3), randn(4)]),
        Case("scaled_square", [randn(2, 3)]),
        Case("vq_st", [randn(2, 3, 4), randn(5, 4)]),
        Case("scale_cube", [randn(2, 3)]),
        Case("sparse_attention", [randn(6), randn(4, 3)]),
        Case("Net", [randn(6, 3)], args=[]),
        Case("Net", [randn(6, 3)], args=[], jit=True),
    ]


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("autograd_functions")
    source = folder / "functions.py"
    source.write_text(SOURCE)
    out = folder / "out"
    out.mkdir()
    return source, convert_to(source, out)


@pytest.fixture(scope="module")
def both_sides(converted, tmp_path_factory):
    source, target = converted
    module = load_torch_module(source, "autograd_functions_torch")
    cases = _cases()
    torch_results = [torch_side(module, case) for case in cases]
    ms_results = mindspore_side(target, cases, torch_results, tmp_path_factory.mktemp("autograd_runs"))
    return cases, torch_results, ms_results


def test_functions_become_cells_with_a_bprop_and_nothing_is_marked(converted):
    text = converted[1].read_text()
    assert "TODO(ms-migrate)" not in text and "torch" not in text.replace("torch_", ""), text
    for name in ("RoundSTE", "ClampWithGrad", "ReverseGrad", "SinCos", "LinearFunction", "ScaledSquare",
                 "NearestCode", "QuantizeStraightThrough", "Scale", "CubeAndSlope", "SpecialSpmm"):
        assert f"class {name}(nn.Cell):" in text
    assert text.count("def bprop(self,") == 11
    assert "def setup_context" not in text
    assert "mark_non_differentiable" not in text
    assert "RoundSTE()(x * 4)" in text  # .apply above the class
    # needs_input_grad reads True: the conditions go, the gradients are computed
    assert "needs_input_grad" not in text and "if True" not in text
    assert "        grad_input = grad_output.mm(weight)\n" in text
    assert "        if bias is not None:\n            grad_bias = grad_output.sum(0)\n" in text
    assert "set_materialize_grads" not in text and "once_differentiable" not in text
    # what forward keeps of its inputs is read from bprop's arguments, not kept on the Cell
    assert textwrap.dedent('''
        class ClampWithGrad(nn.Cell):
            def construct(self, x, low, high):
                return x.clamp(low, high)

            def bprop(self, x, low, high, out, grad_output):
                inside = (x >= low) & (x <= high)
        ''') in text
    assert "self.scale" not in text and "self.alpha" not in text
    # the VQ indices (output[1]) and the sparse adjacency made in forward: neither an input nor the output
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    assert code.count("self.saved_tensors") == 6
    assert textwrap.dedent('''
        class Scale(nn.Cell):
            """Forward without ctx, and setup_context (the style of recent releases)."""

            def construct(self, tensor, factor):
                return tensor * factor

            def bprop(self, tensor, factor, out, grad_output):
                return grad_output * factor, None
        ''') in text


@pytest.mark.parametrize("index", range(len(_cases())), ids=[c.name + ("-jit" * c.jit) for c in _cases()])
def test_values_and_gradients_match_torch(both_sides, index):
    cases, torch_results, ms_results = both_sides
    assert any(k.startswith("dx") for k in torch_results[index])
    problems = differences(torch_results[index], ms_results[index])
    assert not problems, problems


def test_a_wrong_backward_is_caught(converted, tmp_path):
    """Sabotage: a bprop with its sign flipped (the reversal dropped) must fail the comparison."""
    source, target = converted
    text = target.read_text()
    assert "grad_output.neg() * alpha" in text
    sabotaged = tmp_path / "functions.py"
    sabotaged.write_text(text.replace("grad_output.neg() * alpha", "grad_output * alpha"))
    module = load_torch_module(source, "autograd_functions_torch_sabotage")
    cases = [Case("reverse", [np.linspace(-1, 1, 5).astype(np.float32)])]
    torch_results = [torch_side(module, case) for case in cases]
    ms_results = mindspore_side(sabotaged, cases, torch_results, tmp_path)
    problems = differences(torch_results[0], ms_results[0])
    assert problems and all(p.startswith("dx0") for p in problems), problems


@pytest.mark.parametrize(
    "body, reason",
    [
        ("""
         @staticmethod
         def forward(ctx, x):
             y = x * 2
             ctx.mark_non_differentiable(y)
             return x * 3, y

         @staticmethod
         def backward(ctx, grad, grad_y):
             return grad * 3 + grad_y
         """, "mark_non_differentiable"),
        ("""
         @staticmethod
         def forward(ctx, x):
             x.mul_(2)
             ctx.mark_dirty(x)
             return x

         @staticmethod
         def backward(ctx, grad):
             return grad * 2
         """, "mark_dirty"),
        ("""
         @staticmethod
         def forward(x):
             if x.sum() > 0:
                 return x * 2
             return x

         @staticmethod
         def setup_context(ctx, inputs, output):
             pass

         @staticmethod
         def backward(ctx, grad):
             return grad * 2
         """, "setup_context"),
    ],
)
def test_what_a_bprop_cannot_carry_is_marked(tmp_path, body, reason):
    source = tmp_path / "marked.py"
    source.write_text("import torch\n\n\nclass Fn(torch.autograd.Function):\n"
                      + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n")
    (tmp_path / "out").mkdir()
    text = convert_to(source, tmp_path / "out").read_text()
    markers = [line for line in text.splitlines() if line.startswith("# TODO(ms-migrate)")]
    assert len(markers) == 1 and reason in markers[0], text


def test_a_function_run_by_its_own_backward_without_autograd_grad_is_no_checkpoint(tmp_path):
    """A Function given a function whose backward does not take torch.autograd.grad of it is
    no gradient checkpoint: it is not turned into a recompute (but a Cell with a bprop)."""
    source = tmp_path / "apply_fn.py"
    source.write_text(textwrap.dedent('''
        import torch


        class ApplyFn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, fn, *args):
                ctx.fn = fn
                return fn(*args)

            @staticmethod
            def backward(ctx, grad):
                return (None, ctx.fn(grad))
        '''))
    (tmp_path / "out").mkdir()
    text = convert_to(source, tmp_path / "out").read_text()
    assert "recompute" not in text and "class ApplyFn(nn.Cell):" in text and "def bprop(self, *" in text, text
