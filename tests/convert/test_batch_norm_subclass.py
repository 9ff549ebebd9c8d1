"""torch's BatchNorm forward copied into a subclass (timm's BatchNormAct2d) trains after
conversion: ``num_batches_tracked`` reads None on the adapter, as torch's forward has it
with ``track_running_stats=False``, which skips the count that only ``momentum=None``
(refused by the rule) would read. Run against torch: the training-mode output, the
running statistics it leaves and the eval-mode output after it, in PyNative and in
GRAPH_MODE."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from transpiler.convert.pipeline import convert_source

SOURCE = textwrap.dedent('''
    import torch
    from torch import nn
    import torch.nn.functional as F


    class BatchNormAct2d(nn.BatchNorm2d):
        def __init__(self, num_features, momentum=0.1):
            super().__init__(num_features, momentum=momentum)
            self.act = nn.ReLU()

        def forward(self, x):
            if self.momentum is None:
                exponential_average_factor = 0.0
            else:
                exponential_average_factor = self.momentum
            if self.training and self.track_running_stats:
                if self.num_batches_tracked is not None:
                    self.num_batches_tracked.add_(1)
                    if self.momentum is None:
                        exponential_average_factor = 1.0 / float(self.num_batches_tracked)
                    else:
                        exponential_average_factor = self.momentum
            x = F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias, self.training,
                             exponential_average_factor, self.eps)
            return self.act(x)
''')

RUN = textwrap.dedent('''
    import sys
    import numpy as np
    import mindspore
    sys.path.insert(0, sys.argv[1])
    if sys.argv[2] == "graph":
        mindspore.set_context(mode=mindspore.GRAPH_MODE)
    import converted
    x = np.load(sys.argv[3])
    layer = converted.BatchNormAct2d(3, momentum=0.3)
    trained = layer(mindspore.Tensor(x)).asnumpy()
    layer.set_train(False)
    evaluated = layer(mindspore.Tensor(x)).asnumpy()
    np.savez(sys.argv[4], trained=trained, evaluated=evaluated, mean=layer.moving_mean.asnumpy(),
             var=layer.moving_variance.asnumpy())
''')


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_adapter_reads_no_batch_count():
    output = convert_source(SOURCE, "norm_act.py").output
    assert "def num_batches_tracked(self):\n            return None\n" in output, output


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_a_copied_batch_norm_forward_trains_as_torch_does(tmp_path, mode):
    import torch

    (tmp_path / "original.py").write_text(SOURCE)
    (tmp_path / "converted.py").write_text(convert_source(SOURCE, "norm_act.py").output)
    x = np.random.RandomState(0).randn(4, 3, 5, 5).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    layer = _load(tmp_path / "original.py", "original").BatchNormAct2d(3, momentum=0.3)
    trained = layer(torch.tensor(x)).detach().numpy()
    layer.eval()
    evaluated = layer(torch.tensor(x)).detach().numpy()

    (tmp_path / "run.py").write_text(RUN)
    # MindSpore in its own process: the graph-mode context is process-wide
    subprocess.run([sys.executable, str(tmp_path / "run.py"), str(tmp_path), mode, str(tmp_path / "x.npy"),
                    str(tmp_path / "out.npz")], check=True, capture_output=True)
    out = np.load(tmp_path / "out.npz")
    np.testing.assert_allclose(out["trained"], trained, atol=1e-5)
    np.testing.assert_allclose(out["mean"], layer.running_mean.numpy(), atol=1e-6)
    np.testing.assert_allclose(out["var"], layer.running_var.numpy(), atol=1e-5)
    np.testing.assert_allclose(out["evaluated"], evaluated, atol=1e-5)
