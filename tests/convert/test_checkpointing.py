"""Gradient (activation) checkpointing converts to MindSpore's recompute, proven
by running: the torch source and its conversion get the same inputs and
weights, and their forward values and gradients (for the inputs and every
parameter) are compared; the converted module runs where importing torch fails.

The forms research code writes: diffusion code's ``checkpoint(func, inputs,
params, flag)`` over a ``CheckpointFunction`` autograd Function (forward under
``no_grad``, backward re-running the function and taking
``torch.autograd.grad``), used by a ResBlock with ``use_checkpoint``; and
``torch.utils.checkpoint.checkpoint`` (reentrant and not) and
``checkpoint_sequential``."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from tests.conversion import convert_to
from tests.gradient_check import Case, differences, load_torch_module, mindspore_side, torch_side

SOURCE = textwrap.dedent(
    '''
    import torch as th
    import torch.nn as nn
    from torch.utils.checkpoint import checkpoint as checkpoint_call, checkpoint_sequential


    def checkpoint(func, inputs, params, flag):
        """Run func(*inputs) without keeping its activations when flag is set."""
        if flag:
            args = tuple(inputs) + tuple(params)
            return CheckpointFunction.apply(func, len(inputs), *args)
        else:
            return func(*inputs)


    class CheckpointFunction(th.autograd.Function):
        @staticmethod
        def forward(ctx, run_function, length, *args):
            ctx.run_function = run_function
            ctx.input_tensors = list(args[:length])
            ctx.input_params = list(args[length:])
            with th.no_grad():
                output_tensors = ctx.run_function(*ctx.input_tensors)
            return output_tensors

        @staticmethod
        def backward(ctx, *output_grads):
            ctx.input_tensors = [x.detach().requires_grad_(True) for x in ctx.input_tensors]
            with th.enable_grad():
                # views, so that an in-place first op does not touch the detached inputs
                shallow_copies = [x.view_as(x) for x in ctx.input_tensors]
                output_tensors = ctx.run_function(*shallow_copies)
            input_grads = th.autograd.grad(
                output_tensors,
                ctx.input_tensors + ctx.input_params,
                output_grads,
                allow_unused=True,
            )
            del ctx.input_tensors
            del ctx.input_params
            del output_tensors
            return (None, None) + input_grads


    class AutocastCheckpoint(th.autograd.Function):
        """The variant that re-runs the function under the forward's autocast state."""

        @staticmethod
        def forward(ctx, run_function, length, *args):
            ctx.run_function = run_function
            ctx.input_tensors = list(args[:length])
            ctx.input_params = list(args[length:])
            ctx.autocast_kwargs = {
                "enabled": th.is_autocast_enabled(),
                "dtype": th.get_autocast_gpu_dtype(),
                "cache_enabled": th.is_autocast_cache_enabled(),
            }
            with th.no_grad():
                output_tensors = ctx.run_function(*ctx.input_tensors)
            return output_tensors

        @staticmethod
        def backward(ctx, *output_grads):
            ctx.input_tensors = [x.detach().requires_grad_(True) for x in ctx.input_tensors]
            with th.enable_grad(), th.cuda.amp.autocast(**ctx.autocast_kwargs):
                shallow_copies = [x.view_as(x) for x in ctx.input_tensors]
                output_tensors = ctx.run_function(*shallow_copies)
            input_grads = th.autograd.grad(
                output_tensors, ctx.input_tensors + ctx.input_params, output_grads, allow_unused=True)
            del ctx.input_tensors
            del ctx.input_params
            del output_tensors
            return (None, None) + input_grads


    class ResBlock(nn.Module):
        """A diffusion UNet's residual block, conditioned on a timestep embedding."""

        def __init__(self, channels, emb_channels, use_checkpoint=False):
            super().__init__()
            self.use_checkpoint = use_checkpoint
            self.in_layers = nn.Sequential(
                nn.GroupNorm(2, channels), nn.SiLU(), nn.Conv2d(channels, channels, 3, padding=1))
            self.emb_layers = nn.Sequential(nn.SiLU(), nn.Linear(emb_channels, 2 * channels))
            self.out_layers = nn.Sequential(
                nn.GroupNorm(2, channels), nn.SiLU(), nn.Conv2d(channels, channels, 3, padding=1))

        def forward(self, x, emb):
            return checkpoint(self._forward, (x, emb), self.parameters(), self.use_checkpoint)

        def _forward(self, x, emb):
            h = self.in_layers(x)
            emb_out = self.emb_layers(emb).type(h.dtype)
            while len(emb_out.shape) < len(h.shape):
                emb_out = emb_out[..., None]
            scale, shift = th.chunk(emb_out, 2, dim=1)
            h = h * (1 + scale) + shift
            return x + self.out_layers(h)


    class AutocastResBlock(ResBlock):
        def forward(self, x, emb):
            args = (x, emb) + tuple(self.parameters())
            return AutocastCheckpoint.apply(self._forward, 2, *args)


    class Stack(nn.Module):
        """Blocks checkpointed with torch.utils.checkpoint (reentrant and not)."""

        def __init__(self, channels, reentrant):
            super().__init__()
            self.reentrant = reentrant
            self.first = ResBlock(channels, 3)
            self.second = ResBlock(channels, 3, use_checkpoint=True)

        def forward(self, x, emb):
            h = checkpoint_call(self.first, x, emb, use_reentrant=self.reentrant)
            return checkpoint_call(lambda a, b: self.second(a, b) * 2, h, emb, use_reentrant=False)


    class Sequence(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.Sequential(
                nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8), nn.GELU(), nn.Linear(8, 3), nn.Tanh())

        def forward(self, x):
            return checkpoint_sequential(self.layers, 3, x, use_reentrant=False)
    '''
)


def _cases() -> list[Case]:
    rng = np.random.RandomState(5)

    def randn(*shape):
        return rng.randn(*shape).astype(np.float32)

    return [
        Case("ResBlock", [randn(2, 4, 5, 5), randn(2, 3)], args=[4, 3, True]),
        Case("ResBlock", [randn(2, 4, 5, 5), randn(2, 3)], args=[4, 3, False]),
        Case("Stack", [randn(1, 4, 4, 4), randn(1, 3)], args=[4, True], seed=1),
        Case("Stack", [randn(1, 4, 4, 4), randn(1, 3)], args=[4, False], seed=2),
        Case("Sequence", [randn(5, 4)], args=[], seed=3),
        Case("AutocastResBlock", [randn(2, 4, 5, 5), randn(2, 3)], args=[4, 3], seed=4),
    ]


_IDS = ["ResBlock-checkpointed", "ResBlock-direct", "Stack-reentrant", "Stack", "Sequence", "AutocastResBlock"]


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("checkpointing")
    source = folder / "blocks.py"
    source.write_text(SOURCE)
    out = folder / "out"
    out.mkdir()
    return source, convert_to(source, out)


@pytest.fixture(scope="module")
def both_sides(converted, tmp_path_factory):
    source, target = converted
    module = load_torch_module(source, "checkpointing_torch")
    cases = _cases()
    torch_results = [torch_side(module, case) for case in cases]
    ms_results = mindspore_side(target, cases, torch_results, tmp_path_factory.mktemp("checkpointing_runs"))
    return torch_results, ms_results


def test_checkpointing_becomes_recompute_without_torch(converted):
    text = converted[1].read_text()
    assert "TODO(ms-migrate)" not in text and "import torch" not in text and "th." not in text, text
    assert textwrap.dedent('''
        class CheckpointFunction(nn.Cell):
            def construct(self, run_function, length, *args):
                input_tensors = list(args[:length])
                output_tensors = mindspore.recompute(
                    run_function, *input_tensors, use_reentrant=False, early_stop=False
                )
                return output_tensors
        ''') in text, text
    assert "CheckpointFunction()(func, len(inputs), *args)" in text  # .apply above the class
    # what forward keeps for the backward alone goes with it (the autocast state included), unmarked
    assert "autocast_kwargs" not in text and "is_autocast" not in text
    assert "backward" not in text and "autograd" not in text
    words = " ".join(text.split())
    assert "mindspore.recompute( self.first, x, emb, use_reentrant=False, early_stop=False )" in words
    assert "return recompute_sequential(self.layers, 3, x)" in text
    assert "def recompute_sequential(functions, segments, input, **kwargs):" in text


@pytest.mark.parametrize("index", range(len(_IDS)), ids=_IDS)
def test_checkpoint_values_and_gradients_match_torch(both_sides, index):
    torch_results, ms_results = both_sides
    assert any(k.startswith("dw:") for k in torch_results[index])
    problems = differences(torch_results[index], ms_results[index])
    assert not problems, problems


def test_a_recompute_that_loses_the_gradient_is_caught(converted, tmp_path):
    """Sabotage: running the checkpointed function on inputs cut from the graph (what a
    forward kept under no_grad would do) must fail the comparison of gradients."""
    source, target = converted
    text = target.read_text()
    cut = "run_function, *[ops.stop_gradient(t) for t in input_tensors], use_reentrant=False"
    sabotaged = tmp_path / "blocks.py"
    sabotaged.write_text("from mindspore import ops\n" + text.replace(
        "run_function, *input_tensors, use_reentrant=False", cut))
    module = load_torch_module(source, "checkpointing_torch_sabotage")
    cases = [_cases()[0]]
    torch_results = [torch_side(module, case) for case in cases]
    ms_results = mindspore_side(sabotaged, cases, torch_results, tmp_path)
    problems = differences(torch_results[0], ms_results[0])
    assert any(p.startswith("dx") for p in problems), problems
    assert not any(p.startswith("out") for p in problems), problems
