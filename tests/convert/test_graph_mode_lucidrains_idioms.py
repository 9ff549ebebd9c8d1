"""lucidrains' ``b, n, device = *x.shape, x.device`` in graph mode: the tuple display that mixes
the shape's items with the device read compiles as one interpreted object, so ``n`` is no number
(PaLM's ALiBi: "For 'Cast', the input 'dtype' expect a type, but got AbstractNegligible" in
``torch.arange(i)``; egnn: the neighbour count from it makes ``batched_index_select``'s index
tuple fail, "The starred unpack merge input must be sequence, but got AbstractAny"). The
names the starred shape gives are assigned from it in one statement, the device read on its
own (transpiler/convert/structural/device_leftovers.py); values and gradients as torch's,
in GRAPH_MODE."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from tests.conversion import convert_to
from tests.convert.test_graph_mode import graph_mode_side
from tests.gradient_check import Case, differences, load_torch_module, torch_side

SOURCE = textwrap.dedent(
    '''
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    def exists(val):
        return val is not None


    class AlibiPositionalBias(nn.Module):
        """PaLM-lite: the device read next to the shape's items, passed to a method that no
        longer uses it once the conversion drops ``device=``."""

        def __init__(self, heads=4):
            super().__init__()
            self.heads = heads
            self.register_buffer("slopes", torch.tensor([0.5, 0.25])[:, None, None], persistent=False)

        def get_bias(self, i, j, device):
            i_arange = torch.arange(i, device=device)
            j_arange = torch.arange(j, device=device)
            return -torch.abs(j_arange[None, None, :] - i_arange[None, :, None])

        def forward(self, qk_sim):
            h, i, j, device = *qk_sim.shape[-3:], qk_sim.device
            bias = self.get_bias(i, j, device) * self.slopes
            bias = F.pad(bias, (0, 0, 0, 0, 0, h - bias.shape[0]))
            return qk_sim + bias


    def batched_index_select(values, indices, dim=1):
        value_dims = values.shape[(dim + 1):]
        values_shape, indices_shape = map(lambda t: list(t.shape), (values, indices))
        indices = indices[(..., *((None,) * len(value_dims)))]
        indices = indices.expand(*((-1,) * len(indices_shape)), *value_dims)
        value_expand_len = len(indices_shape) - (dim + 1)
        values = values[(*((slice(None),) * dim), *((None,) * value_expand_len), ...)]

        value_expand_shape = [-1] * len(values.shape)
        expand_slice = slice(dim, (dim + value_expand_len))
        value_expand_shape[expand_slice] = indices.shape[expand_slice]
        values = values.expand(*value_expand_shape)

        dim += value_expand_len
        return values.gather(dim, indices)


    class NearestNeighbours(nn.Module):
        """egnn: the device and settings read with the shape's items (nothing reads the device);
        the neighbour count from the tuple sizes topk, and the neighbours' features are picked
        by batched_index_select."""

        def __init__(self, dim=4, num_nearest=3):
            super().__init__()
            self.num_nearest = num_nearest
            self.proj = nn.Linear(dim + 1, dim)

        def forward(self, feats, coors):
            b, n, d, device, num_nearest = *feats.shape, feats.device, self.num_nearest
            rel_coors = coors[:, :, None] - coors[:, None]
            rel_dist = (rel_coors ** 2).sum(dim=-1, keepdim=True)
            ranking = rel_dist[..., 0]
            _, nbhd_indices = ranking.topk(num_nearest, dim=-1, largest=False)
            rel_dist = batched_index_select(rel_dist, nbhd_indices, dim=2)
            feats_j = batched_index_select(feats, nbhd_indices, dim=1)
            return self.proj(torch.cat((feats_j, rel_dist), dim=-1)).sum(dim=2) + n * d


    def positions(axis, device):
        return [torch.linspace(-1.0, 1.0, steps=size, device=device) for size in axis]


    class FourierAxes(nn.Module):
        """perceiver: a starred name among those the starred shape gives, the device passed on;
        and the plain ``device = x.device`` passed on."""

        def forward(self, data):
            b, *axis, _, device = *data.shape, data.device
            pos = torch.stack(torch.meshgrid(*positions(axis, device), indexing="ij"), dim=-1)
            place = data.device
            grid = torch.stack(torch.meshgrid(*positions(axis, place), indexing="ij"), dim=-1)
            return (pos + grid) * b + data.mean()
    '''
)


def _randn(*shape, seed=0):
    return np.random.RandomState(seed + sum(shape)).randn(*shape).astype(np.float32)


CASES = [
    Case("AlibiPositionalBias", [_randn(4, 3, 5)], args=[]),
    Case("NearestNeighbours", [_randn(2, 5, 4), _randn(2, 5, 3, seed=1)], args=[]),
    Case("FourierAxes", [_randn(2, 3, 4, 5)], args=[]),
]


@pytest.fixture(scope="module")
def both_sides(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lucidrains_idioms")
    source = folder / "lucidrains_idioms.py"
    source.write_text(SOURCE)
    (folder / "out").mkdir()
    target = convert_to(source, folder / "out")
    module = load_torch_module(source, "lucidrains_idioms_torch")
    torch_results = [torch_side(module, case) for case in CASES]
    return target, torch_results, graph_mode_side(target, CASES, torch_results, folder)


def test_the_names_a_starred_shape_gives_are_assigned_from_it_apart_from_the_device(both_sides):
    text = both_sides[0].read_text()
    assert "        h, i, j = qk_sim.shape[-3:]\n        device = torch_device(qk_sim.device)\n" in text, text
    # nothing reads egnn's device: it goes
    assert "        b, n, d = feats.shape\n        num_nearest = self.num_nearest\n" in text, text
    assert "feats.device" not in text, text
    assert "        b, *axis, _ = data.shape\n        device = torch_device(data.device)\n" in text, text


@pytest.mark.parametrize("index", range(len(CASES)), ids=[case.name for case in CASES])
def test_values_and_gradients_in_graph_mode_match_torch(both_sides, index):
    _, torch_results, ms_results = both_sides
    problems = differences(torch_results[index], ms_results[index])
    assert not problems, problems
