"""Objects graph mode runs as Python, made in compiled code: a dataclass or named tuple
returned beside tensors (x-transformers' ``Intermediates``), and a plain class whose
methods compute tensors (RAFT's ``CorrBlock``, of another file). Both convert as
written and run as torch's in PyNative; compiled, the tensors that come from them have
no dtype or shape, and the comment above the line says so. A record made and read in
one function is left unmarked, and so are objects made outside the functions graph mode
compiles or made and called with constants only."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tests.conversion import converted_pair, eval_outputs, lines_under, load, move_torch_weights
from transpiler.convert.pipeline import convert_source
from transpiler.convert.project import ProjectIndex
from transpiler.convert.structural.python_objects import called_comment, returned_comment

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
    return converted_pair(tmp_path_factory.mktemp("python_objects"), SOURCE)


def test_the_record_returned_beside_tensors_is_marked(pair):
    _, _, text = pair
    assert lines_under(text, returned_comment("Intermediates")) == [
        "intermediates = Intermediates(pre_softmax_attn=sim, post_softmax_attn=attn)"]
    # made and read in construct; a method and a function graph mode does not compile
    assert returned_comment("Scores") not in text


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
    assert lines_under(output, returned_comment("Scores")) == ["return x, Scores(x, 2.0)"]


CORR = '''
import torch


class CorrBlock:
    def __init__(self, fmap1, fmap2, radius=1):
        self.corr = torch.matmul(fmap1, fmap2.transpose(1, 2))
        self.radius = radius

    def __call__(self, coords):
        return self.corr.mean(-1, keepdim=True) * coords * self.radius


class Steps:
    def __init__(self, n):
        self.n = n

    def count(self):
        return self.n
'''

FLOW = '''
import torch
import torch.nn as nn

from corr import CorrBlock, Steps


class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4)

    def forward(self, x):
        fmap = self.proj(x)
        corr_fn = CorrBlock(fmap, fmap, radius=2)
        steps = Steps(2)
        for _ in range(steps.count()):
            x = x + corr_fn(x)
        return self.norm(x)
'''


@pytest.mark.parametrize("package", [False, True], ids=["directory", "package"])
def test_a_plain_class_of_another_file_called_in_forward_is_marked(tmp_path, package):
    """``package``: RAFT's core/ has an ``__init__.py``, and raft.py imports ``from corr import
    CorrBlock`` as a script run from there does: the index names the sibling ``core.corr``."""
    import mindspore

    (tmp_path / "corr.py").write_text(CORR)
    (tmp_path / "flow.py").write_text(FLOW)
    files = [str(tmp_path / "corr.py"), str(tmp_path / "flow.py")]
    if package:
        (tmp_path / "__init__.py").write_text("")
        files.append(str(tmp_path / "__init__.py"))
    index = ProjectIndex.build(str(tmp_path), files)
    out = tmp_path / "out"
    out.mkdir()
    for name in ("corr.py", "flow.py"):
        result = convert_source((tmp_path / name).read_text(), str(tmp_path / name),
                                siblings=index.facts(str(tmp_path / name)))
        (out / name).write_text(result.output)
    text = (out / "flow.py").read_text()
    assert lines_under(text, called_comment("CorrBlock")) == ["corr_fn = CorrBlock(fmap, fmap, radius=2)"]
    assert called_comment("Steps") not in text  # made and called with constants: runs while compiling

    sys.path.insert(0, str(out))  # flow.py imports corr, and so does graph mode while compiling
    try:
        net = load(out / "flow.py").Flow()
        x = mindspore.Tensor(np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32))
        assert net(x).shape == (2, 3, 4)  # PyNative
        with pytest.raises((TypeError, ValueError)):  # compiled: the LayerNorm gets a tensor of no dtype
            mindspore.jit(net.construct)(x)
    finally:
        sys.path.remove(str(out))
