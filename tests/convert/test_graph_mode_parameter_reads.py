"""A module's parameters read in forward (improved-diffusion's ``inner_dtype``,
``next(self.input_blocks.parameters()).dtype``, and ``checkpoint(..., self.parameters(),
flag)``): graph mode compiles neither ``get_parameters`` nor ``trainable_params`` in
construct; the conversion lists them in ``__init__`` as a tuple and the compiled code
reads it (transpiler/convert/structural/parameter_reads.py). Values and gradients as
torch's, in GRAPH_MODE and in PyNative."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from tests.conversion import convert_to, load
from tests.convert.test_graph_mode import graph_mode_side
from tests.gradient_check import Case, differences, load_torch_module, mindspore_side, torch_side

SOURCE = textwrap.dedent(
    '''
    import torch
    import torch.nn as nn


    def checkpoint(func, inputs, params, flag):
        """improved-diffusion's signature; the parameters are read here (a small penalty),
        so that their values and gradients are compared."""
        out = func(*inputs)
        if flag:
            for p in params:
                out = out + 0.01 * p.mean()
        return out


    class Torso(nn.Module):
        """improved-diffusion's UNetModel: the torso's dtype is its first parameter's."""

        def __init__(self, dim=4):
            super().__init__()
            self.input_blocks = nn.ModuleList([nn.Sequential(nn.Linear(dim, dim)), nn.Linear(dim, dim)])
            self.out = nn.Linear(dim, dim)

        @property
        def inner_dtype(self):
            return next(self.input_blocks.parameters()).dtype

        def forward(self, x):
            h = x.type(self.inner_dtype)
            for block in self.input_blocks:
                h = torch.tanh(block(h))
            return self.out(h.type(x.dtype))


    class ResBlock(nn.Module):
        """improved-diffusion's ResBlock: its parameters passed on as a value."""

        def __init__(self, dim=4, use_checkpoint=True):
            super().__init__()
            self.in_layers = nn.Sequential(nn.Linear(dim, dim), nn.Tanh())
            self.skip = nn.Linear(dim, dim)
            self.use_checkpoint = use_checkpoint

        def forward(self, x):
            return checkpoint(self._forward, (x,), self.parameters(), self.use_checkpoint)

        def _forward(self, x):
            return self.skip(x) + self.in_layers(x)


    class Penalised(Torso):
        """No __init__ of its own: the lists go in one that passes everything on. The
        head's dtype through next(iter(...)), and every parameter iterated in forward."""

        def forward(self, x):
            dtype = next(iter(self.out.parameters())).dtype
            penalty = 0.0
            for p in self.parameters():
                penalty = penalty + p.pow(2).sum()
            return super().forward(x).type(dtype) + 0.001 * penalty


    class Optional(nn.Module):
        """A layer set under a condition may be missing: its read stays as written."""

        def __init__(self, dim=4, extra=False):
            super().__init__()
            self.body = nn.Linear(dim, dim)
            if extra:
                self.extra = nn.Linear(dim, dim)

        def forward(self, x):
            if hasattr(self, "extra"):
                x = x.type(next(self.extra.parameters()).dtype)
            return self.body(x)
    '''
)


def randn(*shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


CASES = [
    Case("Torso", [randn(2, 4)], args=[]),
    Case("ResBlock", [randn(2, 4)], args=[]),
    Case("ResBlock", [randn(2, 4)], args=[4, False]),
    Case("Penalised", [randn(2, 4)], args=[]),
]


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("parameter_reads")
    source = folder / "reads.py"
    source.write_text(SOURCE)
    (folder / "out").mkdir()
    target = convert_to(source, folder / "out")
    module = load_torch_module(source, "parameter_reads_torch")
    torch_results = [torch_side(module, case) for case in CASES]
    return folder, target, torch_results


def test_the_parameters_are_listed_in_init_and_read_from_the_tuple(converted):
    text = converted[1].read_text()
    torso = text.split("class Torso")[1].split("\nclass ")[0]
    assert "        # graph mode cannot list parameters in construct\n" \
        "        self.input_blocks_parameters = tuple(self.input_blocks.get_parameters())\n" in torso, torso
    assert "return self.input_blocks_parameters[0].dtype" in torso and "next(" not in torso, torso
    block = text.split("class ResBlock")[1].split("\nclass ")[0]
    assert "self.trainable_parameters = tuple(self.trainable_params())" in block, block
    assert "self._forward, (x,), self.trainable_parameters, self.use_checkpoint" in block, block


def test_a_class_without_init_gets_one_that_passes_everything_on(converted):
    text = converted[1].read_text()
    penalised = text.split("class Penalised")[1].split("\nclass ")[0]
    assert "    def __init__(self, *args, **kwargs):\n        super().__init__(*args, **kwargs)\n" \
        "        # graph mode cannot list parameters in construct\n" \
        "        self.out_parameters = tuple(self.out.get_parameters())\n" \
        "        self.trainable_parameters = tuple(self.trainable_params())\n\n" \
        "    def construct" in penalised, penalised
    assert "dtype = self.out_parameters[0].dtype" in penalised, penalised
    assert "for p in self.trainable_parameters:" in penalised, penalised


def test_a_layer_set_under_a_condition_keeps_its_read(converted):
    text = converted[1].read_text()
    optional = text.split("class Optional")[1]
    assert "next(self.extra.get_parameters()).dtype" in optional and "_parameters =" not in optional, optional


def test_values_and_gradients_in_graph_mode_match_torch(converted):
    folder, target, torch_results = converted
    ms_results = graph_mode_side(target, CASES, torch_results, folder)
    for case, expected, got in zip(CASES, torch_results, ms_results):
        problems = differences(expected, got)
        assert not problems, (case.name, case.args, problems)


def test_values_and_gradients_in_pynative_match_torch(converted):
    folder, target, torch_results = converted
    work = folder / "pynative"
    work.mkdir()
    ms_results = mindspore_side(target, CASES, torch_results, work)
    for case, expected, got in zip(CASES, torch_results, ms_results):
        problems = differences(expected, got)
        assert not problems, (case.name, case.args, problems)


def test_the_tuple_holds_the_cells_parameters_by_their_names(converted):
    """The tuple adds no parameter and renames none; a dtype change reaches it (the
    same Parameter objects); a checkpoint saved and loaded has the same names."""
    import mindspore

    module = load(converted[1])
    model = module.Torso()
    names = [name for name, _ in model.parameters_and_names()]
    assert names == ["input_blocks.0.0.weight", "input_blocks.0.0.bias", "input_blocks.1.weight",
                     "input_blocks.1.bias", "out.weight", "out.bias"], names
    assert [p.name for p in model.input_blocks_parameters] == names[:4]
    model.input_blocks.to(mindspore.float16)
    assert model.inner_dtype == mindspore.float16
    path = str(converted[0] / "torso.ckpt")
    mindspore.save_checkpoint(model, path)
    assert list(mindspore.load_checkpoint(path)) == names
    assert mindspore.load_param_into_net(model, mindspore.load_checkpoint(path), strict_load=True) == ([], [])
