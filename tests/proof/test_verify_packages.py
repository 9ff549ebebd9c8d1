"""``ms-migrate verify --grad`` on a model file inside a package, as in a model
zoo (timm): the file imports its siblings relatively and through the
package's name, the model comes from a factory function, and the original and
converted packages have the same name. Also: a failure in a statement
ms-migrate marked names the marker; gradients that torch itself
gets as zero are pointed out, and a gradient that differs from torch's float32
one only by float32 rounding (measured against torch in float64) passes with a
note while a wrong one still fails."""

from __future__ import annotations

import sys
import textwrap

import pytest

from tests.conversion import convert_to
from transpiler.cli import main
from transpiler.proof.declared_dtypes import DeclaredDtypes

LAYERS = '''
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim, act_layer=nn.GELU):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.act = act_layer()

    def forward(self, x):
        return x + self.act(self.norm(self.fc(x)))
'''

NET = '''
import torch
import torch.nn as nn

from ..layers import Block
from zoo_pkg.layers import Block as SameBlock


class Net(nn.Module):
    def __init__(self, block, width=8, depth=2, num_classes=3):
        super().__init__()
        assert block is SameBlock
        self.stem = nn.Conv2d(3, width, 3, stride=2, padding=1)
        self.blocks = nn.Sequential(*[block(width, act_layer=nn.SiLU) for _ in range(depth)])
        self.head = nn.Linear(width, num_classes)

    def forward(self, x):
        x = self.stem(x).flatten(2).transpose(1, 2)
        return self.head(self.blocks(x).mean(1))


def tiny_net(pretrained=False, **kwargs):
    return Net(Block, **kwargs)
'''


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    """zoo_pkg/{__init__,layers}.py and zoo_pkg/models/{__init__,net}.py, and its conversion."""
    source = tmp_path_factory.mktemp("torch_side") / "zoo_pkg"
    (source / "models").mkdir(parents=True)
    (source / "__init__.py").write_text("from . import layers\n")
    (source / "layers.py").write_text(LAYERS)
    (source / "models" / "__init__.py").write_text("from .net import tiny_net\n")
    (source / "models" / "net.py").write_text(NET)
    converted = tmp_path_factory.mktemp("converted") / "zoo_pkg"
    assert main(["convert", str(source), "-o", str(converted), "-q"]) == 0
    return source / "models" / "net.py", converted / "models" / "net.py"


def test_a_module_of_a_package_built_by_its_factory(package, capsys):
    original, converted = package
    placeholder = sys.modules.setdefault("zoo_pkg", type(sys)("zoo_pkg"))  # a package of that name already imported
    status = main(["verify", str(original), str(converted), "--model", "tiny_net", "--kwargs", '{"width": 6}',
                   "--input", "2,3,8,8", "--grad"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "grad blocks.1.fc.weight" in out and "grad stem.weight" in out
    assert out.strip().endswith("MATCH")
    # each side imported its own zoo_pkg and forgot it; what was there before is back
    assert sys.modules["zoo_pkg"] is placeholder
    assert not [name for name in sys.modules if name.startswith("zoo_pkg.")]
    del sys.modules["zoo_pkg"]


def test_the_dtype_declarations_are_read_only_when_a_dtype_differs(tmp_path):
    missing = DeclaredDtypes([str(tmp_path / "not_there.py")])  # reading it would fail
    with pytest.raises(FileNotFoundError):
        missing.get(("int64", "int32"))


ZERO_HEAD = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class ZeroHead(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(4, 4)
            self.head = nn.Linear(4, 2)
            nn.init.zeros_(self.head.weight)

        def forward(self, x):
            return self.head(torch.tanh(self.body(x)))
''')


def test_gradients_torch_gets_as_zero_are_pointed_out(tmp_path, capsys):
    original = tmp_path / "zero_head.py"
    original.write_text(ZERO_HEAD)
    (tmp_path / "out").mkdir()
    converted = convert_to(original, tmp_path / "out")
    status = main(["verify", str(original), str(converted), "--model", "ZeroHead", "--input", "3,4", "--grad"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "grad body.weight" in out and "ok (zero in torch)" in out
    assert "2 of 4 parameters get a gradient of zero in torch" in out


# In float32, 1000 - 999.99999 is 0 (999.99999 rounds to 1000): the ReLU lets no
# gradient through; in float64 the difference is 1e-5 and the gradient is 1000.
KINK = textwrap.dedent('''
    import torch
    import torch.nn as nn


    class Kink(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(4))

        def forward(self, x):
            return torch.relu(self.w * 1000.0 - 999.99999) + x
''')


@pytest.fixture(scope="module")
def kink(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kink")
    original = folder / "kink.py"
    original.write_text(KINK)
    (folder / "out").mkdir()
    converted = convert_to(original, folder / "out")
    assert converted.read_text().count("self.w * 1000.0 - 999.99999") == 1
    return original, converted


def _rewritten(converted, folder, expression):
    folder.mkdir()
    out = folder / converted.name
    out.write_text(converted.read_text().replace("self.w * 1000.0 - 999.99999", expression))
    return out


def test_a_gradient_off_torch_float32_by_its_rounding_passes_with_a_note(kink, tmp_path, capsys):
    original, converted = kink
    exact = _rewritten(converted, tmp_path / "exact", "(self.w - 1) * 1000.0 + 1e-05")  # the float64 value
    status = main(["verify", str(original), str(exact), "--model", "Kink", "--input", "4", "--grad"])
    out = capsys.readouterr().out
    assert status == 0, out
    line = next(line for line in out.splitlines() if line.startswith("grad w"))
    assert "ok (torch float32 vs float64: " in line and "float32 rounding" in line
    assert "1 gradients differ from torch's float32 ones but are within tolerance of torch's float64" in out


def test_a_gradient_off_both_torch_gradients_still_fails(kink, tmp_path, capsys):
    original, converted = kink
    # 5000 where float64 says 1000: four times as far from it as torch's float32 0
    wrong = _rewritten(converted, tmp_path / "wrong", "(self.w - 1) * 5000.0 + 1e-05")
    status = main(["verify", str(original), str(wrong), "--model", "Kink", "--input", "4", "--grad"])
    out = capsys.readouterr().out
    assert status == 1, out
    assert any(line.startswith("grad w") and "MISMATCH" in line for line in out.splitlines())


FRACTIONAL = textwrap.dedent('''
    import torch.nn as nn
    import torch.nn.functional as F


    class Upscale(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(2, 2, 1)

        def forward(self, x):
            return self.conv(F.interpolate(x, scale_factor=1.5))
''')


def test_a_failure_in_a_marked_statement_names_the_marker(tmp_path, capsys):
    original = tmp_path / "upscale.py"
    original.write_text(FRACTIONAL)
    (tmp_path / "out").mkdir()
    converted = convert_to(original, tmp_path / "out")
    assert "# TODO(ms-migrate): torch.nn.functional.interpolate: non-integral scale_factor" in converted.read_text()
    status = main(["verify", str(original), str(converted), "--model", "Upscale", "--input", "1,2,4,4"])
    out = capsys.readouterr().out
    assert status == 2, out
    error = next(line for line in out.splitlines() if line.startswith("error:"))
    assert error.startswith("error: running the models: reached a statement ms-migrate marked as not converted (")
    assert f"{converted}:" in error and error.endswith("pass recompute_scale_factor=True to accept that")


def test_a_factory_that_returns_no_model_is_named(tmp_path, capsys):
    original = tmp_path / "factory.py"
    original.write_text(ZERO_HEAD + "\n\ndef make(pretrained=False):\n    return {'model': ZeroHead()}\n")
    (tmp_path / "out").mkdir()
    converted = convert_to(original, tmp_path / "out")
    status = main(["verify", str(original), str(converted), "--model", "make", "--input", "3,4"])
    out = capsys.readouterr().out
    assert status == 2, out
    assert f"error: building the models: make in {original} returned dict, not a torch Module" in out
