"""An adapter class (torch's signature over a MindSpore layer, for a layer class passed
as a value) holds what the project can reach, not the whole torch class: a 19-line file
that passes ``nn.LayerNorm`` and ``nn.GELU`` as defaults got 62 lines of adapters
(properties for every renamed attribute, ``reset_parameters``, one check per refused
argument). A property with torch's name stays where any file of the project names it
(monai's DenseNet sets ``m.weight`` on the BatchNorms that its layer factory, another
file, makes); ``ms-migrate convert`` knows the project, a conversion of a lone text
(no project) keeps every member. Each case runs as torch does."""

import pathlib
import textwrap

import numpy as np
import pytest

from tests.conversion import converted_pair, eval_outputs, load, move_torch_weights
from transpiler.cli import main

_BLOCK = '''
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim, norm_layer=nn.LayerNorm, act=nn.GELU):
        super().__init__()
        self.norm = norm_layer(dim)
        self.fc = nn.Linear(dim, dim)
        self.act = act()

    def forward(self, x):
        return x + self.act(self.fc(self.norm(x))){extra}
'''


def _adapters(text: str) -> str:
    return "class torch_nn" + text.split("\nclass Block")[0].split("class torch_nn", 1)[1]


def _convert_project(tmp_path: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    """``files`` written to tmp_path/src and converted with ``ms-migrate convert`` into tmp_path/out."""
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    for name, text in files.items():
        (src / name).write_text(textwrap.dedent(text))
    assert main(["convert", str(src), "-o", str(out), "--no-cache", "-q"]) == 0
    return out


def _block_matches_torch(torch_module, converted_module) -> None:
    torch_block, cell = torch_module.Block(8), converted_module.Block(8)
    move_torch_weights(torch_block, cell)
    x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    expected, actual = eval_outputs(torch_block, cell, x)
    np.testing.assert_allclose(actual.asnumpy(), expected.numpy(), rtol=1e-5, atol=1e-5)


def test_an_adapter_no_file_reaches_holds_its_constructor(tmp_path):
    out = _convert_project(tmp_path, {"model.py": _BLOCK.format(extra="")})
    adapters = _adapters((out / "model.py").read_text())
    assert "@property" not in adapters and "reset_parameters" not in adapters, adapters
    # elementwise_affine and bias are refused for one reason: one check
    assert "if elementwise_affine is not True or bias is not True:" in adapters, adapters
    assert adapters.count("raise NotImplementedError") == 2, adapters
    assert len(adapters.strip().splitlines()) <= 28, adapters  # 62 before
    _block_matches_torch(load(tmp_path / "src" / "model.py"), load(out / "model.py"))


def test_what_the_file_names_stays(tmp_path):
    extra = "\n\n    def scale(self):\n        self.norm.reset_parameters()\n        return self.norm.weight, self.norm.eps\n"
    out = _convert_project(tmp_path, {"model.py": _BLOCK.format(extra=extra)})
    adapters = _adapters((out / "model.py").read_text())
    assert "def weight(self)" in adapters and "def eps(self)" in adapters and "def reset_parameters" in adapters
    assert "def bias(self)" not in adapters, adapters
    converted, torch_module = load(out / "model.py"), load(tmp_path / "src" / "model.py")
    weight, eps = converted.Block(8).scale()
    assert tuple(weight.shape) == (8,) and eps == torch_module.Block(8).scale()[1]


_FACTORY = '''
import torch.nn as nn

NORMS = (nn.BatchNorm1d, nn.BatchNorm2d)


def norm_layer(dim, features):
    return NORMS[dim - 1](features)
'''

_NET = '''
import torch.nn as nn

from layers import NORMS, norm_layer


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.norm = norm_layer(2, 4)
        for m in self.modules():
            if isinstance(m, NORMS[1]):
                nn.init.constant_(m.weight, 2.0)

    def forward(self, x):
        return self.norm(self.conv(x))
'''


def test_a_name_another_file_reads_stays(tmp_path, monkeypatch):
    """monai's pattern: the layer is made in one file (its class a value there, so an
    adapter), its torch attribute set in another on the instances it finds."""
    out = _convert_project(tmp_path, {"layers.py": _FACTORY, "net.py": _NET})
    layers = (out / "layers.py").read_text()
    assert "def weight(self)" in layers and "def bias(self)" not in layers, layers
    monkeypatch.syspath_prepend(str(out))
    net = load(out / "net.py").Net()
    np.testing.assert_allclose(net.norm.gamma.asnumpy(), np.full(4, 2.0, np.float32))


def test_a_class_deriving_from_an_adapter_gets_it_whole(tmp_path):
    source = "import torch.nn as nn\n\n\nclass Norm(nn.LayerNorm):\n    pass\n\n\ndef make():\n    return Norm(4, eps=1e-3)\n"
    out = _convert_project(tmp_path, {"norm.py": source})
    text = (out / "norm.py").read_text()
    assert "def weight(self)" in text and "def bias(self)" in text and "def reset_parameters" in text, text
    norm = load(out / "norm.py").make()
    assert norm.eps == 1e-3 and tuple(norm.weight.shape) == (4,)  # read from another file, by torch's names


def test_without_a_project_every_member_stays(tmp_path):
    model, converted, text = converted_pair(tmp_path, _BLOCK.format(extra=""))
    adapters = _adapters(text)
    assert "def weight(self)" in adapters and "def reset_parameters" in adapters, adapters
    norm = converted.Block(8).norm  # what code the conversion did not see reads by torch's names
    assert tuple(norm.weight.shape) == (8,) and tuple(norm.bias.shape) == (8,) and norm.eps == 1e-5
    norm.reset_parameters()
    _block_matches_torch(model, converted)


@pytest.mark.parametrize("read", ["m.weight", 'getattr(m, "weight")'])
def test_the_index_notes_reads_of_adapter_members_only(tmp_path, read):
    from transpiler.convert.project import ProjectIndex

    (tmp_path / "a.py").write_text(f"def f(m):\n    self.bias = 1\n    return {read}, m.some_name_of_its_own\n")
    facts = ProjectIndex.build(str(tmp_path), [str(tmp_path / "a.py")]).facts(str(tmp_path / "a.py"))
    assert facts.attributes == frozenset({"weight"})
