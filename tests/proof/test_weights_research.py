"""Weight conversion on the shapes public research code takes: layers built
without affine parameters, modules and weights torch shares under two names,
parameters MindSpore names alike, keys that hold no tensor. Each model is
converted, its torch weights are moved with ``convert_state_dict`` and loaded
with ``load_param_into_net(strict_load=True)``, and both sides must give the
same outputs; what cannot be placed is named in a WeightConversionError."""

from __future__ import annotations

import textwrap

import mindspore
import numpy as np
import pytest
import torch

from tests.conversion import convert_to, load
from transpiler.proof.weights import WeightConversionError, convert_state_dict, map_weights

HEAD = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"

MODELS = {
    # pix2pix / CycleGAN generators: InstanceNorm2d without affine parameters (torch saves nothing for them)
    "norms_without_affine": ("""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)
                self.inorm = nn.InstanceNorm2d(8)
                self.inorm_affine = nn.InstanceNorm2d(8, affine=True)
                self.gn = nn.GroupNorm(4, 8, affine=False)
                self.body = nn.Sequential(nn.Conv2d(8, 8, 1), nn.InstanceNorm2d(8, affine=False), nn.ReLU(True))

            def forward(self, x):
                return self.body(self.gn(self.inorm_affine(self.inorm(self.conv(x)))))
        """, "randn(2, 3, 6, 6)"),
    # BatchNorm without affine parameters, or without running statistics (MindSpore keeps both)
    "batch_norms_without_state": ("""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)
                self.bn = nn.BatchNorm2d(8, affine=False)
                self.bn_batch = nn.BatchNorm2d(8, track_running_stats=False)
                self.bn_bare = nn.BatchNorm2d(8, affine=False, track_running_stats=False)

            def forward(self, x):
                return self.bn_bare(self.bn_batch(self.bn(self.conv(x))))
        """, "randn(2, 3, 6, 6)"),
    # lm_head tied to the token embedding, both directions
    "tied_head": ("""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.wte = nn.Embedding(10, 4)
                self.lm_head = nn.Linear(4, 10, bias=False)
                self.lm_head.weight = self.wte.weight

            def forward(self, ids):
                return self.lm_head(self.wte(ids))
        """, "ids"),
    "tied_embedding": ("""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.wte = nn.Embedding(10, 4)
                self.lm_head = nn.Linear(4, 10, bias=False)
                self.wte.weight = self.lm_head.weight

            def forward(self, ids):
                return self.lm_head(self.wte(ids))
        """, "ids"),
    # one module under two names: torch's state dict holds its tensors twice
    "shared_module": ("""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.alias = self.fc
                self.layers = nn.ModuleList([self.fc, nn.Linear(4, 4)])

            def forward(self, x):
                return self.layers[1](self.alias(x))
        """, "randn(2, 4)"),
    # Parameters made after their layer was attached: MindSpore names them all "weight" / "bias" / "gamma"
    "parameters_set_on_children": ("""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.a = nn.Linear(4, 4)
                self.b = nn.Linear(4, 6)
                self.a.weight = nn.Parameter(torch.randn(4, 4))
                self.b.weight = nn.Parameter(torch.randn(6, 4))

            def forward(self, x):
                return self.b(self.a(x))
        """, "randn(2, 4)"),
    "parameters_set_in_a_loop": ("""
        class Block(nn.Module):
            def __init__(self, width):
                super().__init__()
                self.fc = nn.Linear(4, width)

            def forward(self, x):
                return self.fc(x) * self.gamma


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([Block(4), Block(4)])
                for block in self.blocks:
                    block.gamma = nn.Parameter(torch.rand(4) + 0.5)

            def forward(self, x):
                for block in self.blocks:
                    x = block(x)
                return x
        """, "randn(2, 4)"),
    # GroupNorms of two widths whose gamma/beta are replaced by an init function: alike names, other shapes
    "parameters_set_by_apply": ("""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, 1)
                self.n1 = nn.GroupNorm(2, 4)
                self.conv2 = nn.Conv2d(4, 8, 1)
                self.n2 = nn.GroupNorm(2, 8)
                self.apply(self._init)

            def _init(self, m):
                if isinstance(m, nn.GroupNorm):
                    m.weight = nn.Parameter(torch.rand(m.num_channels) + 0.5)
                    m.bias = nn.Parameter(torch.rand(m.num_channels))

            def forward(self, x):
                return self.n2(self.conv2(self.n1(self.conv(x))))
        """, "randn(2, 3, 4, 4)"),
    "parameter_name_with_a_space": ("""
        class Scale(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_parameter("my scale", nn.Parameter(torch.rand(4) + 0.5))
                self.register_buffer("my shift", torch.randn(4))

            def forward(self, x):
                return x * getattr(self, "my scale") + getattr(self, "my shift")


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.first = Scale()
                self.blocks = nn.ModuleList([Scale(), Scale()])

            def forward(self, x):
                return self.blocks[1](self.blocks[0](self.first(x)))
        """, "randn(2, 4)"),
}


def _input(spec: str):
    rng = np.random.RandomState(0)
    if spec == "ids":
        return rng.randint(0, 10, (2, 5))
    shape = tuple(int(n) for n in spec[len("randn("):-1].split(","))
    return rng.standard_normal(shape).astype(np.float32)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    folder = tmp_path_factory.mktemp("research_weights")
    sides = {}
    for name, (code, _) in MODELS.items():
        source = folder / f"{name}.py"
        source.write_text(HEAD + textwrap.dedent(code))
        out = folder / "out"
        out.mkdir(exist_ok=True)
        sides[name] = (load(source), load(convert_to(source, out)))
    return sides


def _pair(built, name):
    torch_module, ms_module = built[name]
    torch.manual_seed(0)
    model = torch_module.Net()
    return model, ms_module.Net()


def _outputs_match(model, cell, name):
    x = _input(MODELS[name][1])
    model.eval()
    cell.set_train(False)
    expected = model(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(cell(mindspore.Tensor(x)).asnumpy(), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_weights_load_strictly_and_outputs_match(built, name, tmp_path):
    model, cell = _pair(built, name)
    state = model.state_dict()
    path = tmp_path / "weights.pth"  # as users hand them over: a torch.save file (shared tensors stay shared)
    torch.save(state, path)
    for given in (model, state, torch.load(path, weights_only=True)):
        model, cell = _pair(built, name)
        params = convert_state_dict(given, cell)
        not_loaded, unused = mindspore.load_param_into_net(cell, params, strict_load=True)
        assert not not_loaded and not unused, (not_loaded, unused)
        _outputs_match(model, cell, name)
    # and the Cell saves a checkpoint that a fresh Cell loads by name
    checkpoint = str(tmp_path / "net.ckpt")
    mindspore.save_checkpoint(cell, checkpoint)
    fresh = _pair(built, name)[1]
    convert_state_dict(state, fresh)  # names the fresh Cell's parameters as the first's
    assert mindspore.load_param_into_net(fresh, mindspore.load_checkpoint(checkpoint), strict_load=True) == ([], [])
    _outputs_match(model, fresh, name)


def test_parameters_torch_builds_without_are_kept_and_listed(built):
    model, cell = _pair(built, "norms_without_affine")
    for given in (model, model.state_dict()):  # the torch module says affine=False; the state dict alone, the Cell
        _, cell = _pair(built, "norms_without_affine")
        params, report = map_weights(given, cell)
        assert report.ok, report.problems()
        assert set(report.kept) == {"inorm.gamma", "inorm.beta", "gn.gamma", "gn.beta", "body.1.gamma", "body.1.beta"}
        assert "affine=False" in report.kept["inorm.gamma"]
        assert report.placed["inorm_affine.weight"] == "inorm_affine.gamma"
        np.testing.assert_array_equal(params["inorm.gamma"].asnumpy(), np.ones(8, np.float32))


def test_running_statistics_torch_does_not_track_are_kept_and_listed(built):
    model, _ = _pair(built, "batch_norms_without_state")
    for given in (model, model.state_dict()):
        _, cell = _pair(built, "batch_norms_without_state")
        _, report = map_weights(given, cell)
        assert report.ok, report.problems()
        assert set(report.kept) == {"bn.gamma", "bn.beta", "bn_batch.moving_mean", "bn_batch.moving_variance",
                                    "bn_bare.gamma", "bn_bare.beta", "bn_bare.moving_mean", "bn_bare.moving_variance"}
        assert "track_running_stats=False" in report.kept["bn_batch.moving_mean"]


def test_a_trainable_parameter_without_its_key_is_still_refused(built):
    """Only a parameter torch's layer does not have is kept: a missing key of a
    layer that has it (affine=True) is named."""
    model, cell = _pair(built, "norms_without_affine")
    state = dict(model.state_dict())
    del state["inorm_affine.weight"]
    with pytest.raises(WeightConversionError) as info:
        convert_state_dict(state, cell)
    assert info.value.report.unfilled == {"inorm_affine.gamma": "no torch key inorm_affine.weight"}


def test_what_torch_shares_is_placed_once(built):
    model, cell = _pair(built, "shared_module")
    params, report = map_weights(model, cell)
    assert report.ok, report.problems()
    assert "the same tensor as fc.weight" in report.dropped["alias.weight"]
    assert set(report.placed) >= {"fc.weight", "layers.0.weight", "layers.1.weight"}
    model, cell = _pair(built, "tied_head")
    params, report = map_weights(model, cell)
    assert report.ok and list(params) == ["wte.embedding_table"], (report.problems(), list(params))
    assert report.placed == {"wte.weight": "wte.embedding_table", "lm_head.weight": "wte.embedding_table"}


def test_a_tie_torch_does_not_have_is_refused(built):
    """The converted model ties lm_head to the embedding: a state dict whose two
    tensors differ cannot fill one Parameter (sabotage of the tied case)."""
    model, cell = _pair(built, "tied_head")
    state = {key: value.clone() for key, value in model.state_dict().items()}
    state["lm_head.weight"] += 1
    with pytest.raises(WeightConversionError) as info:
        convert_state_dict(state, cell)
    assert "ties what torch keeps apart" in info.value.report.unplaced["lm_head.weight"]


def test_parameters_named_alike_are_renamed_to_their_paths(built):
    model, cell = _pair(built, "parameters_set_by_apply")
    assert sorted(p.name for p in cell.get_parameters()).count("gamma") == 2  # what MindSpore does
    params, report = map_weights(model, cell)
    assert report.ok, report.problems()
    assert report.renamed == {"n1.gamma": "gamma", "n1.beta": "beta", "n2.gamma": "gamma", "n2.beta": "beta"}
    assert tuple(params["n2.gamma"].shape) == (8,) and tuple(params["n1.gamma"].shape) == (4,)
    assert sorted(p.name for p in cell.get_parameters()) == sorted(n for n, _ in cell.parameters_and_names())


def test_keys_that_hold_no_tensor_are_named(built):
    model, cell = _pair(built, "parameter_name_with_a_space")
    state = {**model.state_dict(), "first._extra_state": {"version": 2}, "blocks.0.my scale": torch.empty(4, device="meta")}
    with pytest.raises(WeightConversionError) as info:
        convert_state_dict(state, cell)
    unplaced = info.value.report.unplaced
    assert "cannot be read as an array" in unplaced["first._extra_state"]
    assert "cannot be read as an array" in unplaced["blocks.0.my scale"]
    assert "blocks.0.my scale is unplaced: cannot be read" in info.value.report.unfilled["blocks.0.my scale"]


def test_running_statistics_of_an_old_instance_norm_are_named_with_the_reason(built):
    model, cell = _pair(built, "norms_without_affine")
    state = {**model.state_dict(), "inorm.running_mean": torch.zeros(8), "inorm.running_var": torch.ones(8)}
    for given in (state,):
        with pytest.raises(WeightConversionError) as info:
            convert_state_dict(given, cell)
        assert "saved before torch 0.4" in info.value.report.unplaced["inorm.running_mean"]


def test_what_is_not_a_cell_is_refused_by_name(built):
    model, _ = _pair(built, "tied_head")
    with pytest.raises(TypeError, match="expected the converted mindspore.nn.Cell, got .*Net"):
        convert_state_dict(model.state_dict(), model)
    with pytest.raises(TypeError, match="expected a state dict or a torch Module"):
        convert_state_dict([1, 2], _pair(built, "tied_head")[1])
