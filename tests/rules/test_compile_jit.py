"""torch.compile -> mindspore.jit: the converted model and functions are compiled by
MindSpore and give torch's outputs; a compiled model stays a Cell that trains.

torch's side compiles with backend="eager" (the graph capture without TorchInductor's
C++ build, minutes on this machine); the backend is dropped on the MindSpore side."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conversion import convert_to, load

SOURCE = '''
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class Decorated(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    @torch.compile(backend="eager")
    def forward(self, x):
        return self.fc(x) * 2


@torch.compile(backend="eager", fullgraph=True, mode="max-autotune")
def scaled(x, y):
    return x * 3 + y


def build():
    torch.manual_seed(0)
    model = Net()
    model = torch.compile(model, backend="eager", dynamic=True)
    return model
'''


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    directory = tmp_path_factory.mktemp("compile_jit")
    source = directory / "torch_side" / "compiled.py"
    source.parent.mkdir()
    source.write_text(SOURCE, encoding="utf-8")
    out = directory / "ms_side"
    out.mkdir()
    path = convert_to(source, out)
    return source, path, path.read_text(encoding="utf-8")


def test_text(converted):
    _, _, text = converted
    assert "torch" not in text.replace("torch.compile(obj)", "")
    assert "@mindspore.jit\n    def construct(self, x):" in text
    assert "@mindspore.jit\ndef scaled(x, y):" in text  # mode, fullgraph and backend dropped
    assert "model = jit_compile(model, dynamic=1)" in text


def test_compiled_model_is_a_cell_with_torch_outputs(converted):
    import mindspore
    import torch

    from transpiler.proof.weights import convert_state_dict

    source, path, _ = converted
    torch_side, ms_side = load(source), load(path)
    model = torch_side.build()
    cell = ms_side.build()
    assert isinstance(cell, mindspore.nn.Cell)
    assert getattr(cell.construct, "__wrapped_by_jit__", False)  # compiled, not run as Python
    assert len(cell.trainable_params()) == 4
    mindspore.load_param_into_net(cell, convert_state_dict(model._orig_mod.state_dict(), cell))
    x = np.random.RandomState(0).randn(2, 4).astype(np.float32)
    expected = model(torch.tensor(x)).detach().numpy()
    np.testing.assert_allclose(cell(mindspore.Tensor(x)).asnumpy(), expected, rtol=1e-5, atol=1e-6)
    # another batch size: dynamic=True became dynamic=1
    x3 = np.random.RandomState(1).randn(3, 4).astype(np.float32)
    expected3 = model(torch.tensor(x3)).detach().numpy()
    np.testing.assert_allclose(cell(mindspore.Tensor(x3)).asnumpy(), expected3, rtol=1e-5, atol=1e-6)

    # it trains: gradients through the compiled construct are PyNative's
    cell.set_train(True)
    plain = ms_side.Net()
    mindspore.load_param_into_net(plain, convert_state_dict(model._orig_mod.state_dict(), plain))
    target = mindspore.Tensor(np.ones((2, 3), np.float32))

    def gradients(net):
        loss = lambda inputs: ((net(inputs) - target) ** 2).mean()  # noqa: E731
        return mindspore.value_and_grad(loss, None, net.trainable_params())(mindspore.Tensor(x))

    (loss_jit, grads_jit), (loss_plain, grads_plain) = gradients(cell), gradients(plain)
    np.testing.assert_allclose(loss_jit.asnumpy(), loss_plain.asnumpy(), rtol=1e-6)
    for jit_grad, plain_grad in zip(grads_jit, grads_plain):
        np.testing.assert_allclose(jit_grad.asnumpy(), plain_grad.asnumpy(), rtol=1e-5, atol=1e-7)


def test_decorated_construct_and_function(converted):
    import mindspore
    import torch

    from transpiler.proof.weights import convert_state_dict

    source, path, _ = converted
    torch_side, ms_side = load(source), load(path)
    torch.manual_seed(0)
    model = torch_side.Decorated()
    cell = ms_side.Decorated()
    mindspore.load_param_into_net(cell, convert_state_dict(model.state_dict(), cell))
    x = np.random.RandomState(2).randn(2, 4).astype(np.float32)
    np.testing.assert_allclose(cell(mindspore.Tensor(x)).asnumpy(), model(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    y = np.random.RandomState(3).randn(2, 4).astype(np.float32)
    np.testing.assert_allclose(ms_side.scaled(mindspore.Tensor(x), mindspore.Tensor(y)).asnumpy(),
                               torch_side.scaled(torch.tensor(x), torch.tensor(y)).numpy(), rtol=1e-6)
