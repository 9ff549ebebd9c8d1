"""Runs one training sample under one framework and prints its losses as JSON.

    python -m tests.training.runner torch samples/train_x.py WEIGHTS_DIR '{"epochs": 2}' '{}'
    python -m tests.training.runner mindspore CONVERTED.py WEIGHTS_DIR '{"epochs": 2}' '{}'

The torch run saves the initial weights of every model (``model_<i>.npz``)
before training; the MindSpore run loads them through the weight converter,
so both start from the same weights and see the same synthetic batches.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import sys

import numpy as np


def _load(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def _quiet(*args, **kwargs):
    pass


def run_torch(sample, weights: pathlib.Path, build_kwargs, train_kwargs):
    import torch

    torch.manual_seed(0)
    models = sample.build_models(**build_kwargs)
    for index, model in enumerate(models):
        arrays = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}
        np.savez(weights / f"model_{index}.npz", **arrays)
    return sample.train(*models, log=_quiet, **train_kwargs)


def run_mindspore(sample, weights: pathlib.Path, build_kwargs, train_kwargs):
    import mindspore

    from transpiler.proof.weights import convert_state_dict

    mindspore.set_seed(0)
    models = sample.build_models(**build_kwargs)
    for index, model in enumerate(models):
        with np.load(weights / f"model_{index}.npz") as arrays:
            state = {k: arrays[k] for k in arrays.files}
        params = convert_state_dict(state, model)
        mindspore.load_param_into_net(model, params, strict_load=True)
    return sample.train(*models, log=_quiet, **train_kwargs)


def main(argv: list[str]) -> None:
    framework, path, weights, build_kwargs, train_kwargs = argv
    sample = _load(pathlib.Path(path))
    run = run_torch if framework == "torch" else run_mindspore
    losses = run(sample, pathlib.Path(weights), json.loads(build_kwargs), json.loads(train_kwargs))
    print("LOSSES " + json.dumps([list(map(float, l)) if isinstance(l, tuple) else float(l) for l in losses]))


if __name__ == "__main__":
    main(sys.argv[1:])
