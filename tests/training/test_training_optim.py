"""Optimizers and lr schedulers: the converted construction, stepped with the
same gradients, sees the same learning rate and makes the same updates as
torch at every step."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests.golden_files import ROOT
from tests.snippets import convert_snippet

STEPS = 12
# optimizer + scheduler construction over parameters w (3,) and v (2,)
CASES = {
    "sgd_momentum_steplr": "opt = torch.optim.SGD([w, v], lr=0.1, momentum=0.9)\n"
                           "sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)",
    "adam_multistep": "opt = torch.optim.Adam([w, v], lr=0.01, betas=(0.8, 0.99))\n"
                      "sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 5, 9], gamma=0.3)",
    "adamw_warmup": "opt = torch.optim.AdamW([w, v], lr=0.01, weight_decay=0.05)\n"
                    "sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: min(1.0, (step + 1) / 5))",
    "sgd_exponential": "opt = torch.optim.SGD([w, v], lr=0.2, weight_decay=1e-3)\n"
                       "sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)",
    "adam_cosine": "opt = torch.optim.Adam([w, v], lr=0.05)\n"
                   "sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=8, eta_min=0.001)",
    "rmsprop_linear": "opt = torch.optim.RMSprop([w, v], lr=0.01, momentum=0.5)\n"
                      "sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=4)",
    "param_groups": "opt = torch.optim.SGD([{'params': [w]}, {'params': [v], 'lr': 0.01}], lr=0.1, momentum=0.5)\n"
                    "sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.1)",
}


def _gradients():
    rng = np.random.default_rng(0)
    return [(rng.standard_normal(3).astype(np.float32), rng.standard_normal(2).astype(np.float32)) for _ in range(STEPS)]


def _run_torch(snippet: str) -> dict:
    import torch

    w = torch.nn.Parameter(torch.tensor(np.linspace(-1, 1, 3, dtype=np.float32)))
    v = torch.nn.Parameter(torch.tensor(np.array([0.5, -0.5], dtype=np.float32)))
    scope = {"torch": torch, "w": w, "v": v}
    exec(snippet, scope)
    opt, sched = scope["opt"], scope["sched"]
    lrs, params = [], []
    for gw, gv in _gradients():
        lrs.append([float(group["lr"]) for group in opt.param_groups])
        w.grad, v.grad = torch.tensor(gw), torch.tensor(gv)
        opt.step()
        sched.step()
        params.append([w.detach().numpy().tolist(), v.detach().numpy().tolist()])
    return {"lrs": lrs, "params": params}


# Runs in a subprocess (MindSpore), converted snippets given as JSON.
_MINDSPORE_DRIVER = r'''
import json, sys
import numpy as np
import mindspore
from mindspore import nn, ops
cases = json.loads(sys.stdin.read())
rng = np.random.default_rng(0)
grads = [(rng.standard_normal(3).astype(np.float32), rng.standard_normal(2).astype(np.float32)) for _ in range(STEPS)]
out = {}
for name, snippet in cases.items():
    w = mindspore.Parameter(mindspore.Tensor(np.linspace(-1, 1, 3, dtype=np.float32)), name="w")
    v = mindspore.Parameter(mindspore.Tensor(np.array([0.5, -0.5], dtype=np.float32)), name="v")
    scope = {"mindspore": mindspore, "nn": nn, "ops": ops, "w": w, "v": v}
    exec(snippet, scope)
    opt, sched = scope["opt"], scope["sched"]
    lrs, params = [], []
    for gw, gv in grads:
        lrs.append([float(group["lr"]) for group in opt.param_groups])
        opt((mindspore.Tensor(gw), mindspore.Tensor(gv)))
        sched.step()
        params.append([w.asnumpy().tolist(), v.asnumpy().tolist()])
    out[name] = {"lrs": lrs, "params": params}
print("RESULT " + json.dumps(out))
'''.replace("STEPS", str(STEPS))


@pytest.fixture(scope="module")
def mindspore_results():
    converted = {name: convert_snippet(snippet) for name, snippet in CASES.items()}
    env = {**os.environ, "GLOG_v": "3"}
    run = subprocess.run([sys.executable, "-c", _MINDSPORE_DRIVER], input=json.dumps(converted), cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    line = next(l for l in run.stdout.splitlines() if l.startswith("RESULT "))
    return converted, json.loads(line[len("RESULT "):])


@pytest.mark.parametrize("name", sorted(CASES))
def test_learning_rate_and_updates_match_torch(name, mindspore_results):
    converted, results = mindspore_results
    assert "mindspore.experimental.optim" in converted[name] and "torch" not in converted[name]
    expected = _run_torch(CASES[name])
    actual = results[name]
    np.testing.assert_allclose(actual["lrs"], expected["lrs"], rtol=1e-6, err_msg="learning rate per step")
    for step, (got, want) in enumerate(zip(actual["params"], expected["params"])):
        for g, e in zip(got, want):
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6, err_msg=f"parameters after step {step}")
