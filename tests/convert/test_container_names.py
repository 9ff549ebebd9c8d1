"""Containers filled after they are assigned (``self.convs = nn.ModuleList()`` then
``append`` in a loop, as GCNII, ConvNeXt and MONAI write them; one assigned with a
cell and appended to, as improved-diffusion's ``input_blocks``) keep torch's parameter
names after conversion: the model's parameters are named by their paths, so two such
lists do not collide, an optimizer takes them, a checkpoint saved by MindSpore restores
every weight, and the outputs match torch's with torch's weights."""

from __future__ import annotations

import mindspore
import numpy as np
import torch

from tests.conversion import converted_pair, move_torch_weights

SOURCE = '''
import torch
import torch.nn as nn


class Stack(nn.Module):
    def __init__(self, width, depth, classes):
        super().__init__()
        self.convs = nn.ModuleList()
        for _ in range(depth):
            self.convs.append(nn.Linear(width, width))
        self.fcs = nn.ModuleList([])
        self.fcs.append(nn.Linear(width, width))
        self.fcs.extend([nn.Linear(width, classes)])
        self.params1 = list(self.convs.parameters())  # read between the lists (GCNII's optimizer groups)
        self.heads = nn.ModuleDict()
        for name in ("a", "b"):
            self.heads[name] = nn.Linear(classes, 1)
        self.tail = nn.Sequential()
        if classes > 1:
            self.tail.add_module("proj", nn.Linear(2, 2))
        self.blocks = nn.ModuleList([nn.Sequential(nn.Linear(2, 2))])  # improved-diffusion's input_blocks
        self.blocks.append(nn.Sequential(nn.Linear(2, 2)))

    def forward(self, x):
        for conv in self.convs:
            x = torch.relu(conv(x))
        for fc in self.fcs:
            x = fc(x)
        x = self.tail(torch.cat([self.heads["a"](x), self.heads["b"](x)], dim=-1))
        return self.blocks[1](self.blocks[0](x))
'''

TORCH_NAMES = ["convs.0.weight", "convs.0.bias", "convs.1.weight", "convs.1.bias", "fcs.0.weight", "fcs.0.bias",
               "fcs.1.weight", "fcs.1.bias", "heads.a.weight", "heads.a.bias", "heads.b.weight", "heads.b.bias",
               "tail.proj.weight", "tail.proj.bias", "blocks.0.0.weight", "blocks.0.0.bias", "blocks.1.0.weight",
               "blocks.1.0.bias"]


def test_filled_containers_keep_torch_names_train_save_and_match(tmp_path):
    torch_module, converted, text = converted_pair(tmp_path, SOURCE)
    for attribute in ("convs", "fcs", "heads", "tail", "blocks"):
        assert f'self.{attribute}.update_parameters_name("{attribute}.")' in text, text
    assert text.count("# MindSpore names what is added") == 1, text  # once per block
    model = torch_module.Stack(4, 2, 3).eval()
    assert list(model.state_dict()) == TORCH_NAMES

    cell = converted.Stack(4, 2, 3)
    names = [p.name for p in cell.trainable_params()]
    assert sorted(names) == sorted(TORCH_NAMES)
    assert [p.name for p in cell.params1] == TORCH_NAMES[:4]
    mindspore.nn.SGD(cell.trainable_params(), learning_rate=0.1)  # refused when two names collide

    move_torch_weights(model, cell)
    path = str(tmp_path / "stack.ckpt")
    mindspore.save_checkpoint(cell, path)
    fresh = converted.Stack(4, 2, 3)
    assert mindspore.load_param_into_net(fresh, mindspore.load_checkpoint(path)) == ([], [])

    x = np.random.RandomState(0).randn(5, 4).astype(np.float32)
    expected = model(torch.tensor(x)).detach().numpy()
    fresh.set_train(False)
    np.testing.assert_allclose(fresh(mindspore.Tensor(x)).asnumpy(), expected, rtol=1e-5, atol=1e-6)


def test_a_container_filled_before_it_is_assigned_or_never_filled_is_left_alone(tmp_path):
    _, _, text = converted_pair(tmp_path, '''
        import torch.nn as nn


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                layers = nn.ModuleList()
                layers.append(nn.Linear(2, 2))
                self.layers = layers
                self.blocks = nn.ModuleList([nn.Linear(2, 2)])
                self.empty = nn.ModuleList()

            def forward(self, x):
                return self.layers[0](x)
        ''')
    assert "update_parameters_name" not in text, text
