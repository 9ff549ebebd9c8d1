"""torchvision.ops.FrozenBatchNorm2d (and torchvision.ops.misc's) converts to a
MindSpore layer that gives torchvision's result.

torchvision cannot be installed beside this machine's CPU torch (its wheels
require a newer torch and CUDA's libraries), and tests never download. The
torch side therefore imports a package named ``torchvision`` written by the
test, whose ``ops.misc.FrozenBatchNorm2d`` is torchvision 0.29.1's class
(torchvision/ops/misc.py) with only its usage logging left out.
``test_reference_is_torchvisions_code`` compares it with torchvision's own
source when an unpacked wheel is at hand (the zoo benchmark's cache,
benchmarks/zoo/fetch.py); it never fetches one.

A model using both spellings runs under torch with FrozenBatchNorm2d's buffers
set to random values; the converted model gets torch's state dict through the
weight conversion (transpiler/proof/weights.py) and must give the same
outputs, in training mode as in eval mode (the statistics stay frozen in
both), and train only what torch trains.
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from benchmarks.corpus import ZOO_WORK
from benchmarks.zoo.fetch import TORCHVISION
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

# torchvision 0.29.1's torchvision/ops/misc.py FrozenBatchNorm2d, without _log_api_usage_once(self)
FROZEN_BATCH_NORM_2D = '''
class FrozenBatchNorm2d(torch.nn.Module):
    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
    ):
        super().__init__()
        self.eps = eps
        self.register_buffer("weight", torch.ones(num_features))
        self.register_buffer("bias", torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))

    def _load_from_state_dict(
        self,
        state_dict: dict,
        prefix: str,
        local_metadata: dict,
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ):
        num_batches_tracked_key = prefix + "num_batches_tracked"
        if num_batches_tracked_key in state_dict:
            del state_dict[num_batches_tracked_key]

        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )

    def forward(self, x: Tensor) -> Tensor:
        # move reshapes to the beginning
        # to make it fuser-friendly
        w = self.weight.reshape(1, -1, 1, 1)
        b = self.bias.reshape(1, -1, 1, 1)
        rv = self.running_var.reshape(1, -1, 1, 1)
        rm = self.running_mean.reshape(1, -1, 1, 1)
        scale = w * (rv + self.eps).rsqrt()
        bias = b - rm * scale
        return x * scale + bias
'''

TORCHVISION_PACKAGE = {
    "torchvision/__init__.py": "from . import ops\n",
    "torchvision/ops/__init__.py": "from .misc import FrozenBatchNorm2d\n",
    "torchvision/ops/misc.py": "import torch\nfrom torch import Tensor\n\n" + FROZEN_BATCH_NORM_2D,
}

TORCH_SIDE = """
import sys
import numpy as np
import torch

sys.path.insert(0, sys.argv[1])
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


def _write_torchvision(root: Path) -> Path:
    for name, text in TORCHVISION_PACKAGE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_frozen_batch_norm_matches_torchvision(tmp_path):
    converted = convert_source(PROGRAM, "program.py").output
    assert "TODO(ms-migrate)" not in converted and not re.search(r"^(import|from) torch", converted, re.M), converted
    (tmp_path / "program.py").write_text(PROGRAM)
    (tmp_path / "converted.py").write_text(converted)
    _run(TORCH_SIDE, str(_write_torchvision(tmp_path / "packages")), cwd=tmp_path)
    _run(MINDSPORE_SIDE, cwd=tmp_path)
    torch_side, ms_side = np.load(tmp_path / "torch.npz"), np.load(tmp_path / "mindspore.npz")
    for mode in ("train", "eval"):
        np.testing.assert_allclose(ms_side[mode], torch_side[mode], rtol=1e-5, atol=1e-5, err_msg=mode)
    # torch trains only the convolution (FrozenBatchNorm2d keeps all four as buffers)
    assert list(torch_side["trained"]) == ["conv.bias", "conv.weight"]
    assert sorted(ms_side["trained"].tolist()) == ["conv.bias", "conv.weight"]


def _methods(source: str) -> dict[str, str]:
    """FrozenBatchNorm2d's methods as text, without docstrings and the usage-logging line."""
    import ast

    tree = ast.parse(textwrap.dedent(source))
    cls = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "FrozenBatchNorm2d")
    methods = {}
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name != "__repr__":
            node.body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
                         and "_log_api_usage_once" not in ast.unparse(s)]
            methods[node.name] = ast.unparse(node)
    return methods


def test_reference_is_torchvisions_code():
    """The class the torch side runs is torchvision's, where an unpacked torchvision is at hand
    (the zoo benchmark's cache); nothing is downloaded for it."""
    misc = Path(ZOO_WORK) / TORCHVISION.replace("==", "-") / "torchvision" / "ops" / "misc.py"
    if not misc.is_file():
        pytest.skip(f"no unpacked {TORCHVISION} at {misc.parent.parent.parent} (the zoo benchmark unpacks it)")
    assert _methods(FROZEN_BATCH_NORM_2D) == _methods(misc.read_text())


def test_the_test_does_not_fetch():
    source = inspect.getsource(sys.modules[__name__])
    assert "fetch_" + "torchvision" not in source and "pip" + " download" not in source
