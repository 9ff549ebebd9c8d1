"""Attribute reads of converted layers give torch's values.

Every attribute a layer rule declares (``ApiRule.attributes``, plus the
parameter renames of ``ApiRule.weights``) is read in a torch snippet and in
its conversion, and the values are compared: numbers, tuples and booleans
exactly, tensors by shape (the values of freshly initialised parameters are
random in both frameworks). Attributes MindSpore does not keep are marked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from rewrite_rules.registry import load_rules
from rewrite_rules.spec import AttributeRead
from tests.golden_files import ROOT
from tests.snippets import convert_full, convert_snippet

# a layer built with arguments whose attributes differ from the defaults
LAYERS = {
    "torch.nn.Linear": "nn.Linear(3, 4)",
    "torch.nn.Embedding": "nn.Embedding(10, 4)",
    "torch.nn.Embedding.from_pretrained": "nn.Embedding.from_pretrained(torch.ones(10, 4))",
    "torch.nn.Conv1d": "nn.Conv1d(2, 4, 3, stride=2, dilation=2, groups=2)",
    "torch.nn.Conv2d": "nn.Conv2d(2, 4, (3, 5), stride=(2, 1), groups=2)",
    "torch.nn.Conv3d": "nn.Conv3d(2, 4, 3, groups=2)",
    "torch.nn.ConvTranspose1d": "nn.ConvTranspose1d(2, 4, 3, stride=2)",
    "torch.nn.ConvTranspose2d": "nn.ConvTranspose2d(2, 4, 3, stride=2)",
    "torch.nn.ConvTranspose3d": "nn.ConvTranspose3d(2, 4, 3)",
    "torch.nn.BatchNorm1d": "nn.BatchNorm1d(4)",
    "torch.nn.BatchNorm2d": "nn.BatchNorm2d(4)",
    "torch.nn.BatchNorm3d": "nn.BatchNorm3d(4)",
    "torch.nn.SyncBatchNorm": "nn.SyncBatchNorm(4)",
    "torch.nn.LayerNorm": "nn.LayerNorm(6, eps=1e-3)",
    "torch.nn.GroupNorm": "nn.GroupNorm(2, 4)",
    "torch.nn.InstanceNorm1d": "nn.InstanceNorm1d(4, affine=True)",
    "torch.nn.InstanceNorm2d": "nn.InstanceNorm2d(4, affine=True)",
    "torch.nn.InstanceNorm3d": "nn.InstanceNorm3d(4, affine=True)",
    "torch.nn.LSTM": "nn.LSTM(3, 5, num_layers=2, bias=False)",
    "torch.nn.GRU": "nn.GRU(3, 5)",
    "torch.nn.RNN": "nn.RNN(3, 5)",
    "torch.nn.PReLU": "nn.PReLU(3)",
}


# torchvision's compiled part does not load beside the CPU build of torch used
# here, so its layers cannot be built on the torch side of this test;
# FrozenBatchNorm2d declares BatchNorm2d's renames (test below).
# FrozenBatchNorm2d is read below through BatchNorm2d's reads; finfo/iinfo are not layers: their rule
# cases (rewrite_rules/torch_functions/dtypes.py) read every mapped attribute under both frameworks
NOT_HERE = {"torchvision.ops.misc.FrozenBatchNorm2d", "torch.finfo", "torch.iinfo"}


def test_frozen_batch_norm_reads_like_batch_norm():
    rules = load_rules()
    frozen = rules.calls["torchvision.ops.misc.FrozenBatchNorm2d"].attribute_reads
    assert frozen and frozen.items() <= rules.calls["torch.nn.BatchNorm2d"].attribute_reads.items()


def test_frozen_batch_norm_normalises_like_torchvision():
    """torchvision's forward: x * w / sqrt(running_var + eps) + (b - running_mean * w / sqrt(running_var + eps)),
    in training mode too; the converted layer read through torch's attribute names."""
    code = convert_full("from torchvision.ops.misc import FrozenBatchNorm2d\nlayer = FrozenBatchNorm2d(3, eps=0.001)\n")
    run = (
        "import numpy as np, mindspore, json\n" + code
        + "rng = np.random.default_rng(0)\n"
        "w, b, m, v = (rng.random(3).astype(np.float32) + 0.5 for _ in range(4))\n"
        "for name, value in (('weight', w), ('bias', b), ('running_mean', m), ('running_var', v)):\n"
        "    getattr(layer, name).set_data(mindspore.Tensor(value))\n"
        "x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)\n"
        "scale = w / np.sqrt(v + 0.001)\n"
        "expected = x * scale[:, None, None] + (b - m * scale)[:, None, None]\n"
        "layer.set_train(True)\n"
        "got = layer(mindspore.Tensor(x)).asnumpy()\n"
        "frozen = [p.requires_grad for p in (layer.weight, layer.bias)]\n"
        "print('VALUES ' + json.dumps({'err': float(np.abs(got - expected).max()), 'frozen': frozen}))\n"
    )
    values = _run(run)
    assert values["err"] < 1e-5 and values["frozen"] == [False, False], values


def _declared():
    """(layer, attribute, how it is read) for every layer rule that maps its attributes."""
    rules = load_rules()
    found = []
    for name, rule in sorted(rules.calls.items()):
        if name != rule.torch:
            continue
        for attribute, read in sorted(rule.attribute_reads.items()):
            found.append((name, attribute, read))
    return found


DECLARED = _declared()


def test_every_layer_that_maps_attributes_is_read_here():
    assert {layer for layer, _, _ in DECLARED} <= set(LAYERS) | NOT_HERE


def _reads(layer: str, attributes: list[str]) -> str:
    lines = [f"layer = {LAYERS[layer]}"]
    for attribute in attributes:
        lines.append(f"values[{attribute!r}] = layer.{attribute}")
    return "\n".join(lines) + "\n"


_PRINT = (
    "\nimport json\n"
    "def _value(value):\n"
    "    if hasattr(value, 'shape') and not isinstance(value, (int, float, bool)):\n"
    "        return {'shape': list(value.shape)}\n"
    "    return list(value) if isinstance(value, tuple) else value\n"
    "print('VALUES ' + json.dumps({layer: {k: _value(v) for k, v in read.items()} for layer, read in all_values.items()}))\n"
)


def _run(code: str) -> dict:
    env = {**os.environ, "GLOG_v": "3", "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(next(l for l in run.stdout.splitlines() if l.startswith("VALUES "))[len("VALUES "):])


def test_converted_layers_give_torch_values():
    torch_parts, ms_parts = [], []
    expected_layers = {}
    for layer in sorted({layer for layer, _, _ in DECLARED} - NOT_HERE):
        readable = [a for l, a, read in DECLARED if l == layer and not _marked(read)]
        if not readable:
            continue
        code = "values = {}\n" + _reads(layer, readable)
        converted = convert_full(code)
        assert "TODO(ms-migrate)" not in converted, converted
        torch_parts.append(f"all_values[{layer!r}] = (lambda: (exec({code!r}, globals()), values)[1])()")
        ms_parts.append(f"all_values[{layer!r}] = (lambda: (exec({converted!r}, globals()), values)[1])()")
        expected_layers[layer] = readable
    prelude = "import torch\nimport torch.nn as nn\nall_values = {}\n"
    printer = _PRINT
    torch_values = _run(prelude + "\n".join(torch_parts) + printer)
    ms_values = _run("all_values = {}\n" + "\n".join(ms_parts) + printer)
    for layer, attributes in expected_layers.items():
        for attribute in attributes:
            assert ms_values[layer][attribute] == torch_values[layer][attribute], (layer, attribute)


def _marked(read) -> bool:
    """Reads MindSpore cannot give: no template, or a reason beside one (the template then
    serves subclasses reading it on ``self`` only: BatchNorm's num_batches_tracked)."""
    return isinstance(read, AttributeRead) and (read.template is None or bool(read.reason))


@pytest.mark.parametrize("layer, attribute", [(l, a) for l, a, r in DECLARED if _marked(r)])
def test_attributes_mindspore_does_not_keep_are_marked(layer, attribute):
    converted = convert_snippet(f"layer = {LAYERS[layer]}\nvalue = layer.{attribute}\n")
    assert "TODO(ms-migrate)" in converted and f"{layer}.{attribute}" in converted, converted


def test_reads_follow_where_the_layer_was_made():
    converted = convert_snippet(
        "class Net(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.emb = nn.Embedding(10, 4)\n"
        "        self.head = nn.Linear(self.emb.embedding_dim, 10, bias=False)\n"
        "        self.head.weight = self.emb.weight  # tied\n"
        "        self.embedding_dim = 7  # the file's own attribute\n"
        "\n"
        "    def init(self, m):\n"
        "        if isinstance(m, nn.Embedding):\n"
        "            print(m.weight.shape, m.embedding_dim)\n"
        "\n"
        "net = Net()\n"
        "net = nn.DataParallel(net)\n"
        "print(net.module.head.in_features, net.embedding_dim, other.in_features)\n"
    )
    assert "nn.Dense(self.emb.embedding_size, 10, has_bias=False)" in converted
    assert "self.head.weight = self.emb.embedding_table  # tied" in converted
    assert "print(m.embedding_table.shape, m.embedding_size)" in converted
    # unknown objects and the file's own attributes keep their names
    assert "print(net.head.in_channels, net.embedding_dim, other.in_features)" in converted
