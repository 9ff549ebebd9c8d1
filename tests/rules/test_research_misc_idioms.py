"""Idioms of published research packages (CRF layers, quantizers, attention
variants) that the research benchmark found failing, converted and run against
torch on the same inputs:

- ``torch.where(mask, a, b)`` with a uint8 mask (a ByteTensor, as older code
  builds its masks): torch takes it, MindSpore's Select kernel takes only bool,
  so a condition the source does not show to be bool is cast with ``.bool()``
  (exact: the nonzero entries are torch's True ones).
- Bit shifts of integer tensors by a constant (sooftware's Conformer:
  ``input_lengths >> 2``): MindSpore's Tensor has no shift operators; a floor
  division by (or product with) 2**k is the same shift.
- Python's ``abs()`` of a complex tensor (Time-Series-Library's TimesNet:
  ``abs(torch.fft.rfft(x))`` then topk): MindSpore keeps it complex, torch
  gives the real magnitude; where the source shows it complex it is
  ``ops.ComplexAbs()``.
"""

from __future__ import annotations

import textwrap

import mindspore
import numpy as np
import torch

from tests.conversion import convert_to, converted_pair, eval_outputs, move_torch_weights


def _close(expected, got, atol=1e-6):
    if isinstance(expected, (tuple, list)):
        assert len(expected) == len(got)
        for e, g in zip(expected, got):
            _close(e, g, atol)
        return
    expected, got = expected.numpy(), got.asnumpy()
    assert expected.shape == got.shape and expected.dtype == got.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=atol)


WHERE_MASK = '''
import torch


def select(x, y, mask):
    step = torch.where(mask.unsqueeze(1), x, y)
    shown = (x > 0) & ~torch.isnan(y)
    return step, torch.where(shown, x, 0.0), torch.where(mask[:1].unsqueeze(1), x, y)


def ones_mask(tags):
    return torch.ones_like(tags, dtype=torch.uint8)
'''


def test_where_of_a_uint8_mask(tmp_path):
    torch_mod, ms_mod, text = converted_pair(tmp_path, WHERE_MASK)
    assert "torch" not in text
    assert "where(shown, x, 0.0)" in text  # a condition the source shows bool is left as written
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal((3, 4)).astype(np.float32) for _ in range(2))
    for mask in (np.array([1, 0, 3], np.uint8), np.array([True, False, True])):
        expected = torch_mod.select(torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(mask))
        got = ms_mod.select(mindspore.Tensor(x), mindspore.Tensor(y), mindspore.Tensor(mask))
        _close(expected, got)
    tags = np.zeros((2, 3), np.int64)
    _close(torch_mod.ones_mask(torch.from_numpy(tags)), ms_mod.ones_mask(mindspore.Tensor(tags)))


PATTERN_NAMES = '''
import torch
from einops import rearrange, reduce

POOL = 'b n d -> b d'


class Landmarks(torch.nn.Module):
    def __init__(self, heads=2):
        super().__init__()
        self.heads = heads
        self.split = 'b n (h d) -> b h n d'

    def forward(self, x, l=2):
        landmark_einops_eq = '... (n l) d -> ... n d'
        landmarks = reduce(x, landmark_einops_eq, 'sum', l=l)
        axes = 'h w'
        reduction = 'max'
        grid = rearrange(x, f'b ({axes}) d -> b d {axes}', h=2)
        return (landmarks, grid, reduce(x, POOL, reduction), rearrange(x, self.split, h=self.heads),
                torch.einsum(SIMILARITY, x, x))


SIMILARITY = 'bid,bjd->bij'
'''


def test_einops_patterns_through_names_and_f_strings(tmp_path):
    torch_mod, ms_mod, text = converted_pair(tmp_path, PATTERN_NAMES)
    assert "TODO(ms-migrate)" not in text and "einops import" not in text and "import torch" not in text
    x = np.random.default_rng(0).standard_normal((2, 4, 6)).astype(np.float32)
    with torch.no_grad():
        expected = torch_mod.Landmarks()(torch.from_numpy(x))
    _close(expected, ms_mod.Landmarks()(mindspore.Tensor(x)), atol=1e-5)


def test_a_pattern_name_assigned_two_strings_is_lowered_for_each(tmp_path):
    """A pattern the file shows to be one of a few strings (vector-quantize's
    dist_einops_eq) is lowered once per string, the one that runs chosen by its value;
    a pattern the file does not show stays marked."""
    source = '''
    from einops import reduce


    def pool(x, flag):
        if flag:
            pattern = 'b n d -> b d'
        else:
            pattern = 'b n d -> b n'
        return reduce(x, pattern, 'mean')


    def unknown(x, pattern):
        return reduce(x, pattern, 'mean')
    '''
    torch_mod, ms_mod, text = converted_pair(tmp_path, source)
    assert 'x.mean(1) if pattern == "b n d -> b d" else x.mean(2)' in text
    assert "# TODO(ms-migrate): einops.reduce: the pattern (pattern) is not a string literal" in text
    x = np.random.default_rng(0).standard_normal((2, 4, 6)).astype(np.float32)
    for flag in (True, False):
        _close(torch_mod.pool(torch.from_numpy(x), flag), ms_mod.pool(mindspore.Tensor(x), flag), atol=1e-6)


ALL_REDUCE_VALUE = '''
import torch
import torch.distributed as distributed
from torch import nn


def noop(*args, **kwargs):
    pass


class Codebook(nn.Module):
    def __init__(self, use_ddp=False):
        super().__init__()
        self.all_reduce_fn = distributed.all_reduce if use_ddp else noop
        self.embed = nn.Parameter(torch.linspace(0, 1, 12).reshape(3, 4))

    def forward(self, x):
        total = x.sum(0)
        self.all_reduce_fn(total)
        return total * self.embed
'''


def test_a_collective_chosen_as_a_value(tmp_path):
    """``fn = distributed.all_reduce if use_ddp else noop`` (quantizers syncing codebooks):
    torch's signature over mint.distributed.all_reduce, whose default op is MindSpore's sum."""
    torch_mod, ms_mod, text = converted_pair(tmp_path, ALL_REDUCE_VALUE)
    assert "TODO(ms-migrate)" not in text and "import torch" not in text
    assert "def all_reduce(tensor, op=ops.ReduceOp.SUM, group=None, async_op=False):" in text
    assert "self.all_reduce_fn = torch_distributed.all_reduce if use_ddp else noop" in text
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    with torch.no_grad():
        expected = torch_mod.Codebook()(torch.from_numpy(x))
    _close(expected, ms_mod.Codebook()(mindspore.Tensor(x)))
    adapter = ms_mod.torch_distributed.all_reduce
    assert adapter.__defaults__ == (mindspore.ops.ReduceOp.SUM, None, False)
    try:  # what cannot be carried is refused where it arrives, before any collective runs
        adapter(mindspore.Tensor(x), async_op=True)
    except NotImplementedError as exc:
        assert "async_op" in str(exc)
    else:
        raise AssertionError("async_op=True was accepted")


PACK_ONE = '''
import torch
from einops import pack, unpack


def pack_one(t, pattern):
    packed, ps = pack([t], pattern)

    def unpack_one(to_unpack, unpack_pattern=None):
        unpacked, = unpack(to_unpack, ps, unpack_pattern or pattern)
        return unpacked

    return packed, unpack_one


def quantize(x, codes):
    x, unpack_one = pack_one(x, 'b * d')
    distances = torch.cdist(x, codes)
    joined, shapes = pack([x, distances], 'b n *')
    first, second = unpack(joined * 2, shapes, 'b n *')
    return unpack_one(first), unpack_one(second, 'b * c'), joined
'''


def test_einops_pack_with_a_run_time_pattern(tmp_path):
    """lucidrains' pack_one(t, pattern) helper: the pattern is a parameter, read at run time."""
    torch_mod, ms_mod, text = converted_pair(tmp_path, PACK_ONE)
    assert "TODO(ms-migrate)" not in text and "einops import" not in text and "import torch" not in text
    rng = np.random.default_rng(0)
    x, codes = rng.standard_normal((2, 3, 4, 5)).astype(np.float32), rng.standard_normal((2, 6, 5)).astype(np.float32)
    expected = torch_mod.quantize(torch.from_numpy(x), torch.from_numpy(codes))
    _close(expected, ms_mod.quantize(mindspore.Tensor(x), mindspore.Tensor(codes)), atol=1e-5)


TIED_IN_SEQUENTIAL = '''
import torch
import torch.nn as nn


def Model(num_tokens=11, dim=8, depth=2):
    net = nn.Sequential(
        nn.Embedding(num_tokens, dim),
        *[nn.Linear(dim, dim) for _ in range(depth)],
        nn.LayerNorm(dim),
        nn.Linear(dim, num_tokens, bias=False)
    )
    net[-1].weight = net[0].weight
    return net
'''


def test_weights_tied_through_sequential_indexes(tmp_path):
    """lucidrains' PaLM ties its output projection to its embedding through the Sequential's first and
    last entries, with the blocks unpacked between them: the embedding's weight is its embedding_table."""
    torch_mod, ms_mod, code = converted_pair(tmp_path, TIED_IN_SEQUENTIAL)
    assert "net[-1].weight = net[0].embedding_table" in code, code
    model, cell = torch_mod.Model(), ms_mod.Model()
    assert cell[-1].weight is cell[0].embedding_table
    move_torch_weights(model, cell)
    expected, got = eval_outputs(model, cell, np.arange(6, dtype=np.int64).reshape(2, 3) % 11)
    np.testing.assert_allclose(got.asnumpy(), expected.numpy(), rtol=1e-4, atol=1e-5)


SHIFTS = '''
import torch
import torch.nn as nn


class Subsampling(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.half = channels >> 1
        self.fc = nn.Linear(channels, self.half)

    def forward(self, x, lengths):
        steps = x.shape[1] >> 1
        lengths >>= 1
        return self.fc(x), lengths >> 2, (lengths << 3) - 1, steps
'''


def test_shifts_of_integer_tensors(tmp_path):
    torch_mod, ms_mod, text = converted_pair(tmp_path, SHIFTS)
    assert "lengths // 4" in text and "lengths //= 2" in text and "lengths * 8" in text
    assert "x.shape[1] >> 1" in text  # a Python number: left as written
    torch.manual_seed(0)
    net = torch_mod.Subsampling(8).eval()
    cell = ms_mod.Subsampling(8)
    move_torch_weights(net, cell)
    x = np.random.default_rng(0).standard_normal((2, 6, 8)).astype(np.float32)
    lengths = np.array([7, 9, -9, 100], np.int64)
    with torch.no_grad():
        expected = net(torch.from_numpy(x), torch.tensor(lengths))  # torch shifts it in place
    got = cell(mindspore.Tensor(x), mindspore.Tensor(lengths))
    _close(expected[:3], got[:3])
    assert expected[3] == got[3] == 3


PERIODS = '''
import torch


def periods(x, k=2):
    xf = torch.fft.rfft(x, dim=1)
    frequency_list = abs(xf).mean(0).mean(-1)
    frequency_list[0] = 0
    _, top_list = torch.topk(frequency_list, k)
    top_list = top_list.detach().cpu().numpy()
    return x.shape[1] // top_list, abs(xf).mean(-1)[:, top_list], abs(-3)
'''


def test_builtin_abs_of_a_complex_tensor(tmp_path):
    torch_mod, ms_mod, text = converted_pair(tmp_path, PERIODS)
    assert "abs(-3)" in text  # a number: left as written
    x = np.random.default_rng(0).standard_normal((2, 16, 3)).astype(np.float32)
    period, amplitude, three = torch_mod.periods(torch.from_numpy(x))
    got_period, got_amplitude, got_three = ms_mod.periods(mindspore.Tensor(x))
    np.testing.assert_array_equal(got_period, period)
    _close(amplitude, got_amplitude, atol=1e-5)
    assert three == got_three == 3
