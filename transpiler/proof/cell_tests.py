"""Runtime of the per-Cell tests that ``--emit-tests`` writes: build the torch
module and the converted Cell, find inputs the torch module accepts, and
compare through ``transpiler.proof.verify``."""

from __future__ import annotations

import inspect

from transpiler.proof.verify import MATCH, VerifyRequest, load_module, verify
from transpiler.proof.verify_inputs import InputSpec, make_inputs, parse_input

_SIZES = (16, 32, 28, 8, 64)
_loaded: dict[str, object] = {}


def check_cell(original: str, converted: str, name: str, build: dict, inputs=None, rtol=1e-4, atol=1e-4) -> None:
    """Assert that Cell ``name`` of ``converted`` matches ``name`` of ``original``."""
    args, kwargs = build.get("args", []), build.get("kwargs", {})
    if inputs is None:
        torch_class = getattr(_load(original), name)
        specs = guess_inputs(torch_class(*args, **kwargs))
        assert specs is not None, (
            f"no input shape found for {name}: set INPUTS[{name!r}] to a list of --input specs"
        )
    else:
        specs = [parse_input(text) for text in inputs]
    result = verify(VerifyRequest(original, converted, name, specs, list(args), dict(kwargs), rtol, atol))
    assert result.status == MATCH, "\n".join(result.lines())


def _load(path: str):
    if path not in _loaded:
        _loaded[path] = load_module(path, f"_ms_migrate_cell_test_{len(_loaded)}")
    return _loaded[path]


def guess_inputs(model) -> list[InputSpec] | None:
    """Specs for a forward() of one tensor, from the first layer with
    parameters; the first candidate the torch module runs on wins."""
    import torch

    forward = inspect.signature(model.forward)
    required = [p for p in forward.parameters.values()
                if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(required) != 1:
        return None
    model.eval()
    for spec in _candidates(model):
        try:
            with torch.no_grad():
                model(*[torch.from_numpy(a) for a in make_inputs([spec], 0)])
        except Exception:  # a wrong guess: try the next shape
            continue
        return [spec]
    return None


def _candidates(model):
    import torch.nn as nn

    layer = next((m for m in model.modules() if list(m.parameters(recurse=False))), None)
    if isinstance(layer, nn.Embedding):
        yield InputSpec((2, 8), "int64", 0, layer.num_embeddings)
        return
    if isinstance(layer, (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d,
                          nn.ConvTranspose3d)):
        ndim = len(layer.kernel_size)
        for size in _SIZES:
            yield InputSpec((2, layer.in_channels) + (size,) * ndim)
        return
    if isinstance(layer, nn.Linear):
        yield InputSpec((2, layer.in_features))
        yield InputSpec((2, 5, layer.in_features))
        return
    if isinstance(layer, nn.RNNBase):
        yield InputSpec((2, 5, layer.input_size) if layer.batch_first else (5, 2, layer.input_size))
        return
    if isinstance(layer, nn.LayerNorm):
        yield InputSpec((2, 5) + tuple(layer.normalized_shape))
        return
    if isinstance(layer, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.GroupNorm)):
        channels = getattr(layer, "num_features", None) or layer.num_channels
        yield InputSpec((2, channels))
        for size in _SIZES:
            yield InputSpec((2, channels, size))
            yield InputSpec((2, channels, size, size))
