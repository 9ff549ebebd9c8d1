"""``.values`` / ``.indices`` of torch's (values, indices) results, read by name as
perceiver-pytorch, x-transformers, vector-quantize and monai do, are read by position
after conversion (MindSpore returns plain tuples), with torch's values and dtypes."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conversion import converted_pair

SOURCE = '''
import torch


def fields(x, k):
    return (
        x.topk(k, dim=-1).indices,
        torch.topk(x, k).values,
        x.max(dim=-1).indices,
        x.min(dim=1).values,
        x.sort(dim=-1).indices,
        x.sort(dim=-1, descending=True)[1],
        x.sort(dim=0)[0],
        torch.max(x, dim=-1, keepdim=True).values,
        torch.median(x, 1).values,
        x.cummax(dim=1).indices,
        torch.kthvalue(x, 2, dim=1).indices,
    )


def loader_column(frame):
    return frame.max(1).values
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return converted_pair(tmp_path_factory.mktemp("named_results"), SOURCE)


def test_fields_are_read_by_position_with_the_cast_on_the_item(pair):
    _, _, text = pair
    assert "ops.topk(x, k, dim=-1)[1].astype(mindspore.int64)" in text
    assert "ops.topk(x, k)[0]," in text
    assert "x.max(dim=-1)[1]" in text
    assert "ops.sort(x, axis=-1, descending=True)[1].astype(mindspore.int64)" in text
    assert ".indices" not in text.split("def loader_column")[0]
    assert ".values" not in text.split("def loader_column")[0]
    # a method of that name without dim= may be pandas': a Series' .values is its array
    assert "return frame.max(1).values" in text


def test_the_fields_give_torchs_values_and_dtypes(pair):
    import mindspore
    import torch

    torch_module, converted, _ = pair
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
    expected = torch_module.fields(torch.from_numpy(x), 3)
    actual = converted.fields(mindspore.Tensor(x), 3)
    assert len(expected) == len(actual)
    for want, got in zip(expected, actual):
        assert str(want.dtype).removeprefix("torch.") == str(got.dtype).lower()
        np.testing.assert_array_equal(got.asnumpy(), want.numpy())
