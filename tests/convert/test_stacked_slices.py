"""``torch.stack([data[i:i+k] for i in ix])`` of a drawn ``ix``: one gather in MindSpore
(transpiler/convert/structural/stacked_slices.py), the same rows as torch's stack."""

from __future__ import annotations

import numpy as np
import pytest

from tests.snippets import convert_full

BATCHES = """
batch_size = 4
block_size = 8
data = torch.tensor([(7 * k) % 61 for k in range(300)], dtype=torch.long)
n = int(0.9 * len(data))
train_data = data[:n]
val_data = data[n:]


def get_batch(split):
    data = train_data if split == 'train' else val_data
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i:i+block_size] for i in ix])
    y = torch.stack([data[i+1:i+block_size+1] for i in ix])
    return x, y


def shifted(offset):
    ix = torch.randint(len(data) - block_size - offset, size=(batch_size,))
    return torch.stack([data[i + offset:i + offset + block_size] for i in ix], dim=0)


def shuffled():
    ix = torch.randperm(len(data) - block_size)[:batch_size]
    return torch.stack([data[i:i + block_size] for i in ix])
"""


def _run(code: str, framework: str, draws: dict) -> dict:
    """Execute ``code`` with the framework's random draws replaced by ``draws``' fixed ones."""
    namespace: dict = {}
    exec(compile(code, "<converted>", "exec"), namespace)
    if framework == "torch":
        import torch

        namespace["torch"] = _Drawn(torch, {name: torch.tensor(v) for name, v in draws.items()})
    else:
        import mindspore

        namespace["ops"] = _Drawn(namespace["ops"], {name: mindspore.Tensor(v) for name, v in draws.items()})
    results = {}
    for split in ("train", "val"):
        x, y = namespace["get_batch"](split)
        results[split] = (_numpy(x), _numpy(y))
    results["shifted"] = _numpy(namespace["shifted"](3))
    return results


class _Drawn:
    """A module whose randint/randperm return fixed values."""

    def __init__(self, module, draws):
        self._module, self._draws = module, draws

    def __getattr__(self, name):
        if name in self._draws:
            value = self._draws[name]
            return lambda *args, **kwargs: value
        return getattr(self._module, name)


def _numpy(value):
    return value.asnumpy() if hasattr(value, "asnumpy") else value.numpy()


def test_stack_of_drawn_slices_becomes_one_gather():
    converted = convert_full(BATCHES)
    assert "x = data[ix[:, None] + ops.arange(block_size)]" in converted, converted
    assert "y = data[ix[:, None] + ops.arange(1, block_size + 1)]" in converted, converted
    assert "ops.arange(offset, offset + block_size)" in converted, converted
    assert "ops.randint(0, high=len(data) - block_size - offset, size=(batch_size,))" in converted, converted
    assert "\n    ]\n    return data[ix[:, None] + ops.arange(block_size)]" in converted, converted  # randperm
    assert "ops.stack" not in converted, converted


@pytest.mark.parametrize("rows", [[0, 5, 17, 20], [3, 3, 0, 1]])
def test_gather_gives_torch_rows(rows):
    pytest.importorskip("mindspore")
    draws = {"randint": np.array(rows, dtype=np.int64)}
    expected = _run("import torch\n" + BATCHES, "torch", draws)
    actual = _run(convert_full(BATCHES), "mindspore", draws)
    for key in expected:
        for want, got in zip(expected[key] if isinstance(expected[key], tuple) else [expected[key]],
                             actual[key] if isinstance(actual[key], tuple) else [actual[key]]):
            assert got.shape == want.shape and got.dtype == want.dtype, (key, got.shape, want.shape)
            np.testing.assert_array_equal(got, want)


OTHERS = """
data = torch.arange(40)
rows = [1, 2, 3]
ix = torch.randint(30, (4,))
a = torch.stack([data[i:i+4] for i in rows])          # rows: a list the file does not draw
b = torch.stack([data[i:2*i] for i in ix])             # rows of different lengths
c = torch.stack([data[i:i+4] for i in ix], dim=1)      # another dimension
d = torch.stack([data[i:i+4] for i in ix if i > 2])    # a filter
e = torch.stack([data[i:i+i] for i in ix])             # the length depends on i
m = torch.randint(30, (4, 2))
f = torch.stack([data[i:i+4] for i in m])              # 2-D draws
"""


def test_other_stacks_stay_stacks():
    converted = convert_full(OTHERS)
    assert converted.count("ops.stack(") == 6, converted
