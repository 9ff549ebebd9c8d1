"""A dataclass or named tuple made in a compiled function and returned beside tensors
(x-transformers' ``Intermediates``) converts as written and runs as torch's in
PyNative; graph mode runs the class as Python, so a compiled caller gets the tensors
beside it with no dtype or shape, and the comment above the line says so. A record
made and read in one function is left unmarked, and so is one made outside the
functions graph mode compiles."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conversion import converted_pair, eval_outputs, move_torch_weights
from transpiler.convert.pipeline import convert_source
from transpiler.convert.structural.returned_records import comment

SOURCE = '''
from collections import namedtuple
from dataclasses import dataclass

import torch
import torch.nn as nn

Scores = namedtuple("Scores", ["logits", "scale"])


@dataclass
class Intermediates:
    pre_softmax_attn: torch.Tensor = None
    post_softmax_attn: torch.Tensor = None


class Attend(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        sim = self.proj(x)
        attn = sim.softmax(dim=-1)
        intermediates = Intermediates(pre_softmax_attn=sim, post_softmax_attn=attn)
        return attn * x, intermediates


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.attend = Attend()
        self.norm = nn.LayerNorm(4)

    def forward(self, x):
        out, inter = self.attend(x)
        local = Intermediates(pre_softmax_attn=out)
        return self.norm(local.pre_softmax_attn) + inter.post_softmax_attn

    def scores(self, x):
        return x, Scores(x, 2.0)


def describe(x):
    return x, Intermediates(pre_softmax_attn=x)
'''


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    return converted_pair(tmp_path_factory.mktemp("returned_records"), SOURCE)


def test_the_record_returned_beside_tensors_is_marked(pair):
    _, _, text = pair
    lines = text.splitlines()
    marks = [i for i, line in enumerate(lines) if line.strip() == comment("Intermediates")]
    assert [lines[i + 1].strip() for i in marks] == [
        "intermediates = Intermediates(pre_softmax_attn=sim, post_softmax_attn=attn)"]
    # made and read in construct; a method and a function graph mode does not compile
    assert comment("Scores") not in text


def test_it_runs_as_torch_in_pynative_and_a_compiled_caller_loses_the_dtype(pair):
    import mindspore

    torch_module, converted, _ = pair
    model, net = torch_module.Net(), converted.Net()
    move_torch_weights(model, net)
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    expected, actual = eval_outputs(model, net, x)
    np.testing.assert_allclose(actual.asnumpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
    # the LayerNorm after the call asks for a dtype graph mode no longer knows: MindSpore 2.10
    # raises a TypeError from Tensor.astype, whose message fails to print the unknown dtype
    with pytest.raises((TypeError, ValueError)):
        mindspore.jit(net.construct)(mindspore.Tensor(x))
    # called from Python, the compiled Cell returns the tuple intact
    out, inter = mindspore.jit(net.attend.construct)(mindspore.Tensor(x))
    np.testing.assert_allclose(inter.post_softmax_attn.asnumpy(), out.asnumpy() / x, rtol=1e-5)


def test_a_named_tuple_returned_from_construct_is_marked(tmp_path):
    source = '''
from collections import namedtuple

import torch.nn as nn

Scores = namedtuple("Scores", ["logits", "scale"])


class Head(nn.Module):
    def forward(self, x):
        return x, Scores(x, 2.0)
'''
    output = convert_source(source, str(tmp_path / "head.py")).output
    lines = output.splitlines()
    mark = lines.index("        " + comment("Scores"))
    assert lines[mark + 1].strip() == "return x, Scores(x, 2.0)"
