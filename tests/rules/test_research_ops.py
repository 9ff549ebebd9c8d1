"""Idioms of published research code that crashed or were marked, converted and
trained like torch: a LLaMA-style attention with complex rotary embeddings
(torch.polar / view_as_complex / view_as_real) and a two-layer GCN over a
sparse COO adjacency (torch.sparse_coo_tensor / torch.spmm / torch.sparse.mm).

Each program runs under torch and, converted, under MindSpore (torch's state
dict moved by the weight conversion) on the same inputs: outputs and the
gradients of a loss with respect to every parameter and the input must agree.
Gradients are the point: MindSpore has no gradient for a product of complex
tensors, and none for CSRTensor.mm.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest

from tests.golden_files import ROOT
from transpiler.convert.pipeline import convert_source

ROTARY = '''import torch
import torch.nn as nn
import torch.nn.functional as F


def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)


def reshape_for_broadcast(freqs_cis, x):
    ndim = x.ndim
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


class Attention(nn.Module):
    def __init__(self, dim=16, n_heads=2, max_len=8):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, dim // n_heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.freqs_cis = precompute_freqs_cis(self.head_dim, max_len)

    def forward(self, x):
        bsz, seqlen, _ = x.shape
        xq = self.wq(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = self.wk(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xv = self.wv(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        xq, xk = apply_rotary_emb(xq, xk, self.freqs_cis[:seqlen])
        xq, xk, xv = xq.transpose(1, 2), xk.transpose(1, 2), xv.transpose(1, 2)
        scores = torch.matmul(xq, xk.transpose(2, 3)) / (self.head_dim ** 0.5)
        out = torch.matmul(F.softmax(scores.float(), dim=-1), xv)
        return self.wo(out.transpose(1, 2).reshape(bsz, seqlen, -1))


def build(inputs):
    return Attention(), (inputs["x"],)
'''

GCN = '''import torch
import torch.nn as nn
import torch.nn.functional as F


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.FloatTensor(in_features, out_features))
        self.bias = nn.Parameter(torch.FloatTensor(out_features))

    def forward(self, input, adj):
        support = torch.mm(input, self.weight)
        output = torch.spmm(adj, support)
        return output + self.bias


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout=0):
        super().__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        x = torch.sparse.mm(adj, self.gc2(x, adj))
        return F.log_softmax(x, dim=1)


def build(inputs):
    indices = torch.from_numpy(inputs["edges"])
    values = torch.from_numpy(inputs["weights"])
    adj = torch.sparse_coo_tensor(indices, values, torch.Size([6, 6]))
    return GCN(4, 5, 3), (inputs["x"], adj)
'''

# the build function converts with the program: its sparse adjacency is MindSpore's
TORCH_SIDE = """
import sys
import numpy as np
import torch

saved = dict(np.load("inputs.npz"))
scope = {"__name__": "program"}
exec(open("program.py").read(), scope)
torch.manual_seed(0)
inputs = {k: torch.from_numpy(v) if k == "x" else v for k, v in saved.items()}
inputs["x"].requires_grad_()
net, args = scope["build"](inputs)
rng = np.random.default_rng(1)
state = {k: torch.from_numpy(rng.standard_normal(tuple(v.shape)).astype(np.float32) * 0.5)
         for k, v in net.state_dict().items()}
net.load_state_dict(state)
out = net(*args)
(out * torch.from_numpy(saved["probe"])).sum().backward()
np.savez("torch.npz", out=out.detach().numpy(), grad_x=inputs["x"].grad.numpy(),
         **{"state:" + k: v.numpy() for k, v in state.items()},
         **{"grad:" + n: p.grad.numpy() for n, p in net.named_parameters()})
"""

MINDSPORE_SIDE = """
import mindspore
import numpy as np
from transpiler.proof.weights import convert_state_dict

mindspore.set_device("CPU")
saved = dict(np.load("inputs.npz"))
torch_side = np.load("torch.npz")
scope = {"__name__": "program"}
exec(open("converted.py").read(), scope)
inputs = {k: mindspore.Tensor(v) if k == "x" else v for k, v in saved.items()}
net, args = scope["build"](inputs)
state = {k[len("state:"):]: torch_side[k] for k in torch_side.files if k.startswith("state:")}
not_loaded, unused = mindspore.load_param_into_net(net, convert_state_dict(state, net), strict_load=True)
assert not not_loaded and not unused, (not_loaded, unused)
net.set_train(True)
probe = mindspore.Tensor(saved["probe"])
params = net.trainable_params()


def loss(x, *rest):
    return (net(x, *rest) * probe).sum()


out = net(*args)
grad_x, grads = mindspore.grad(loss, grad_position=0, weights=params)(*args)
np.savez("mindspore.npz", out=out.asnumpy(), grad_x=grad_x.asnumpy(),
         **{"grad:" + p.name: g.asnumpy() for p, g in zip(params, grads)})
"""


def _run(code: str, cwd) -> None:
    env = {**os.environ, "GLOG_v": "3", "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]


def _inputs(name: str) -> dict:
    rng = np.random.default_rng(7)
    if name == "rotary":
        return {"x": rng.standard_normal((2, 5, 16)).astype(np.float32),
                "probe": rng.standard_normal((2, 5, 16)).astype(np.float32)}
    # a symmetric graph of 6 nodes with self-loops, one edge listed twice (summed, as torch sums it)
    rows = [0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 0, 1, 2, 3, 4, 5, 2]
    cols = [1, 0, 2, 1, 3, 2, 4, 3, 5, 4, 0, 1, 2, 3, 4, 5, 3]
    return {"x": rng.standard_normal((6, 4)).astype(np.float32),
            "edges": np.array([rows, cols], dtype=np.int64),
            "weights": rng.uniform(0.2, 1.0, len(rows)).astype(np.float32),
            "probe": rng.standard_normal((6, 3)).astype(np.float32)}


@pytest.mark.parametrize("name, program", [("rotary", ROTARY), ("gcn", GCN)])
def test_trains_like_torch(tmp_path, name, program):
    converted = convert_source(program, "program.py").output
    assert "TODO(ms-migrate)" not in converted and not re.search(r"^(import|from) torch", converted, re.M), converted
    (tmp_path / "program.py").write_text(program)
    (tmp_path / "converted.py").write_text(converted)
    np.savez(tmp_path / "inputs.npz", **_inputs(name))
    _run(TORCH_SIDE, tmp_path)
    _run(MINDSPORE_SIDE, tmp_path)
    torch_side, ms_side = np.load(tmp_path / "torch.npz"), np.load(tmp_path / "mindspore.npz")
    np.testing.assert_allclose(ms_side["out"], torch_side["out"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ms_side["grad_x"], torch_side["grad_x"], rtol=1e-4, atol=1e-5)
    torch_grads = sorted(k for k in torch_side.files if k.startswith("grad:"))
    assert len(torch_grads) == len([k for k in ms_side.files if k.startswith("grad:")])
    for key in torch_grads:  # parameter names and layouts equal for these layers (Dense stores (out, in) too)
        np.testing.assert_allclose(ms_side[key], torch_side[key], rtol=1e-4, atol=1e-5, err_msg=key)


def test_complex_products_are_written_in_real_arithmetic():
    """The reason for the real form: MindSpore's complex Mul has no gradient."""
    converted = convert_source(ROTARY, "program.py").output
    assert "ops.view_as_real(xq_ * freqs_cis)" not in converted
    assert "ops.real(xq_) * ops.real(freqs_cis) - ops.imag(xq_) * ops.imag(freqs_cis)" in converted
    probe = (
        "import mindspore\nfrom mindspore import ops\nmindspore.set_device('CPU')\n"
        "z = ops.polar(ops.ones((2, 3)), ops.ones((2, 3)))\n"
        "try:\n"
        "    mindspore.grad(lambda x: ops.view_as_real(ops.Complex()(x, x) * z).sum())(ops.ones((2, 3)))\n"
        "except TypeError as error:\n"
        "    assert 'gradient not support for complex' in str(error), error\n"
        "else:\n"
        "    raise SystemExit('MindSpore differentiates complex Mul now: ops.view_as_real(a * b) would do')\n"
    )
    _run(probe, ROOT)
