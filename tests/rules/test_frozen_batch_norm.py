"""torchvision.ops.FrozenBatchNorm2d (and torchvision.ops.misc's) converts to a
MindSpore layer that gives torchvision's result.

torchvision's compiled part does not load beside this machine's CPU torch, but
its Python part does (as the zoo benchmark runs it: benchmarks/zoo/torch_side.py,
the wheel benchmarks/zoo/fetch.py unpacks). A model using both spellings runs
under torch with torchvision's own FrozenBatchNorm2d, its buffers set to random
values; the converted model gets torch's state dict through the weight
conversion (transpiler/proof/weights.py) and must give the same outputs, in
training mode as in eval mode (the statistics stay frozen in both), and train
only what torch trains.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np

from benchmarks.corpus import ZOO_WORK
from benchmarks.zoo.fetch import fetch_torchvision
from tests.golden_files import ROOT
from transpiler.convert.pipeline import convert_source

PROGRAM = """import torch
import torch.nn as nn
import torchvision
from torchvision.ops.misc import FrozenBatchNorm2d


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.frozen = FrozenBatchNorm2d(4, eps=0.001)
        self.alias = torchvision.ops.FrozenBatchNorm2d(4)

    def forward(self, x):
        return self.alias(self.frozen(self.conv(x)))
"""

TORCH_SIDE = """
import sys
import numpy as np
import torch
from benchmarks.zoo.torch_side import import_torchvision_python_part

import_torchvision_python_part(sys.argv[1])
scope = {"__name__": "program"}
exec(open("program.py").read(), scope)
net = scope["Net"]()
import torchvision.ops.misc
assert type(net.frozen) is torchvision.ops.misc.FrozenBatchNorm2d  # torchvision's own class
rng = np.random.default_rng(0)
state = {k: torch.from_numpy(rng.uniform(0.5, 1.5, v.shape).astype(np.float32) if "var" in k
                             else rng.standard_normal(v.shape).astype(np.float32))
         for k, v in net.state_dict().items()}
net.load_state_dict(state)
x = torch.from_numpy(rng.standard_normal((2, 3, 6, 6)).astype(np.float32))
with torch.no_grad():
    train = net.train()(x).numpy()
    evaluated = net.eval()(x).numpy()
np.savez("torch.npz", x=x.numpy(), train=train, eval=evaluated,
         trained=np.array(sorted(n for n, p in net.named_parameters() if p.requires_grad)),
         **{"state:" + k: v.numpy() for k, v in net.state_dict().items()})
"""

MINDSPORE_SIDE = """
import mindspore
import numpy as np
from transpiler.proof.weights import convert_state_dict

mindspore.set_device("CPU")
scope = {"__name__": "program"}
exec(open("converted.py").read(), scope)
net = scope["Net"]()
saved = np.load("torch.npz")
state = {k[len("state:"):]: saved[k] for k in saved.files if k.startswith("state:")}
not_loaded, unused = mindspore.load_param_into_net(net, convert_state_dict(state, net), strict_load=True)
assert not not_loaded and not unused, (not_loaded, unused)
x = mindspore.Tensor(saved["x"])
train = net.set_train(True)(x).asnumpy()
evaluated = net.set_train(False)(x).asnumpy()
np.savez("mindspore.npz", train=train, eval=evaluated, trained=np.array(sorted(p.name for p in net.trainable_params())))
"""


def _run(code: str, *args: str, cwd) -> None:
    env = {**os.environ, "GLOG_v": "3", "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]


def test_frozen_batch_norm_matches_torchvision(tmp_path):
    converted = convert_source(PROGRAM, "program.py").output
    assert "TODO(ms-migrate)" not in converted and not re.search(r"^(import|from) torch", converted, re.M), converted
    (tmp_path / "program.py").write_text(PROGRAM)
    (tmp_path / "converted.py").write_text(converted)
    _run(TORCH_SIDE, fetch_torchvision(ZOO_WORK), cwd=tmp_path)
    _run(MINDSPORE_SIDE, cwd=tmp_path)
    torch_side, ms_side = np.load(tmp_path / "torch.npz"), np.load(tmp_path / "mindspore.npz")
    for mode in ("train", "eval"):
        np.testing.assert_allclose(ms_side[mode], torch_side[mode], rtol=1e-5, atol=1e-5, err_msg=mode)
    # torch trains only the convolution (FrozenBatchNorm2d keeps all four as buffers)
    assert list(torch_side["trained"]) == ["conv.bias", "conv.weight"]
    assert sorted(ms_side["trained"].tolist()) == ["conv.bias", "conv.weight"]
