"""File side of ``ms-migrate weights``: reading torch checkpoints and building
the converted Cell named on the command line."""

from __future__ import annotations

import importlib
import os
import sys
from typing import Mapping

from transpiler.proof.verify import load_module, parse_json_arg

_NESTED_KEYS = ("state_dict", "model_state_dict", "model")


def load_torch_state(path: str) -> Mapping:
    """A state dict from a torch.save file. Only tensors and plain containers
    are unpickled (weights_only=True): checkpoints are untrusted input."""
    import torch

    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise ValueError(
            f"cannot read {path} as a weights-only torch file ({exc}); save the model's state_dict() instead"
        ) from None
    for key in _NESTED_KEYS:  # training checkpoints: {"state_dict": ..., "optimizer": ...}
        if isinstance(state, Mapping) and isinstance(state.get(key), Mapping):
            state = state[key]
    if not isinstance(state, Mapping):
        raise ValueError(f"{path} holds a {type(state).__name__}, not a state dict")
    return state


def build_cell(spec: str, args_json: str | None, kwargs_json: str | None):
    """``"pkg.module:Class"`` or ``"path/to/file.py:Class"`` -> an instance."""
    module_name, sep, class_name = spec.rpartition(":")
    if not sep or not module_name or not class_name:
        raise ValueError(f"--model {spec!r}: expected MODULE:CLASS, e.g. converted.resnet:ResNet")
    if module_name.endswith(".py") or os.sep in module_name:
        module = load_module(module_name, "_ms_migrate_weights_model")
    else:
        sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(module_name)
        finally:
            sys.path.remove(os.getcwd())
    cls = module
    for part in class_name.split("."):
        cls = getattr(cls, part)
    return cls(*parse_json_arg(args_json, list, "--args"), **parse_json_arg(kwargs_json, dict, "--kwargs"))
