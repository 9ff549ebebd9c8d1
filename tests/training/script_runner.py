"""Runs a training script (``main(argv)``, as real repositories write them)
under one framework and prints what it logged to TensorBoard as JSON.

    python -m tests.training.script_runner torch samples/train_x.py WORKDIR SPEC_JSON
    python -m tests.training.script_runner mindspore CONVERTED.py WORKDIR SPEC_JSON

SPEC: {"models": ["GPT"], "argv": ["--max_iters", "20"], "linear_layers": true}.
Both runs see the same program input; what would differ between frameworks
is made equal, never what the conversion produced:

- initial weights: each class named in ``models`` saves its state when the
  torch run constructs it (``model_<class>_<i>.npz``); the MindSpore run loads
  it through the weight converter right after construction. With
  ``linear_layers``, every ``nn.Linear`` the script builds (a new head when
  fine-tuning) gets the torch run's initial weights too, by construction order;
- random draws that pick the data: ``torch.randint`` / ``torch.randperm``
  results of the torch run are recorded and handed, in order, to the
  converted ``ops.randint`` / ``ops.randperm`` calls (which must ask for the
  same shape and range); ``random_split`` subsets are recorded and replayed
  into the converted ``split``; DataLoader shuffling is off in both runs;
- the TensorBoard writer: the torch run logs into a recorder (what torch's
  writer itself logs is compared by tests/rules/test_tensorboard_rules.py); the
  MindSpore run uses the real ``tensorboardX`` writer the conversion chose,
  recorded too;
- torchvision cannot be installed next to this torch build: the torch run
  gets ``torchvision.utils`` from a copy of its make_grid/save_image
  (tests/training/torchvision_utils.py).

Every ``add_scalar`` is printed as ``SCALARS {tag: [[step, value], ...]}``.
"""

from __future__ import annotations

import json
import pathlib
import sys
import types

import numpy as np

from tests.training.runner import _load

SCALARS: dict[str, list] = {}


def _record(tag, value, step):
    SCALARS.setdefault(str(tag), []).append([None if step is None else int(step), float(np.asarray(value))])


def _hook_models(module, names, after_init):
    """Replace each named class by a subclass that calls after_init(model, name) once built."""
    for name in names:
        base = getattr(module, name)
        counter = {"built": 0}

        def __init__(self, *args, __base=base, __name=name, __counter=counter, **kwargs):
            __base.__init__(self, *args, **kwargs)
            after_init(self, f"{__name}_{__counter['built']}")
            __counter["built"] += 1

        setattr(module, name, type(name, (base,), {"__init__": __init__, "__module__": module.__name__}))


# -- torch ---------------------------------------------------------------------------
def run_torch(script: pathlib.Path, work: pathlib.Path, spec: dict):
    import torch
    import torch.utils.data

    torch.manual_seed(0)
    draws: list[np.ndarray] = []
    for name in ("randint", "randperm"):
        original = getattr(torch, name)

        def recorded(*args, __original=original, __name=name, **kwargs):
            result = __original(*args, **kwargs)
            draws.append((__name, result.numpy().copy()))
            return result

        setattr(torch, name, recorded)
    splits: list[list[int]] = []
    original_split = torch.utils.data.random_split

    def recorded_split(*args, **kwargs):
        subsets = original_split(*args, **kwargs)
        splits.append([list(map(int, s.indices)) for s in subsets])
        return subsets

    torch.utils.data.random_split = recorded_split
    original_loader = torch.utils.data.DataLoader.__init__

    def unshuffled(self, *args, **kwargs):
        kwargs["shuffle"] = False
        original_loader(self, *args, **kwargs)

    torch.utils.data.DataLoader.__init__ = unshuffled
    _tensorboard_recorder()
    _torchvision_utils()

    def save(model, key):
        arrays = {k: v.detach().cpu().numpy() for k, v in model.state_dict().items()}
        np.savez(work / f"model_{key}.npz", **arrays)

    if spec.get("linear_layers"):
        built = {"count": 0}
        original_linear = torch.nn.Linear.__init__

        def linear(self, *args, **kwargs):
            original_linear(self, *args, **kwargs)
            arrays = {k: v.detach().numpy() for k, v in self.state_dict().items()}
            np.savez(work / f"linear_{built['count']}.npz", **arrays)
            built["count"] += 1

        torch.nn.Linear.__init__ = linear
    module = _load(script)
    _hook_models(module, spec.get("models", ()), save)
    module.main(spec.get("argv", []))
    np.savez(work / "draws.npz", **{f"{i}_{name}": value for i, (name, value) in enumerate(draws)})
    (work / "splits.json").write_text(json.dumps(splits))


def _tensorboard_recorder():
    """Stand in a writer that records for torch.utils.tensorboard's."""

    class SummaryWriter:
        def __init__(self, log_dir=None, *args, **kwargs):
            self.log_dir = log_dir

        def add_scalar(self, tag, scalar_value, global_step=None, *args, **kwargs):
            _record(tag, scalar_value.item() if hasattr(scalar_value, "item") else scalar_value, global_step)

        def __getattr__(self, name):
            return lambda *args, **kwargs: None

    stub = types.ModuleType("torch.utils.tensorboard")
    stub.SummaryWriter = SummaryWriter
    sys.modules["torch.utils.tensorboard"] = stub
    import torch.utils

    torch.utils.tensorboard = stub


def _torchvision_utils():
    from tests.training import torchvision_utils

    package = types.ModuleType("torchvision")
    package.utils = torchvision_utils
    sys.modules["torchvision"] = package
    sys.modules["torchvision.utils"] = torchvision_utils


# -- MindSpore ------------------------------------------------------------------------
def run_mindspore(script: pathlib.Path, work: pathlib.Path, spec: dict):
    import mindspore
    import mindspore.dataset as ds
    import tensorboardX

    from transpiler.proof.weights import convert_state_dict

    mindspore.set_seed(0)
    with np.load(work / "draws.npz") as saved:
        draws = [(key.split("_", 1)[1], saved[key]) for key in sorted(saved.files, key=lambda k: int(k.split("_")[0]))]
    _replay_draws(mindspore, draws)
    _replay_splits(ds, json.loads((work / "splits.json").read_text()))

    original_generator = ds.GeneratorDataset.__init__

    def unshuffled(self, *args, **kwargs):
        if kwargs.get("sampler") is None:
            kwargs["shuffle"] = False
        original_generator(self, *args, **kwargs)

    ds.GeneratorDataset.__init__ = unshuffled
    ds.Dataset.shuffle = lambda self, buffer_size: self
    original_add_scalar = tensorboardX.SummaryWriter.add_scalar

    def add_scalar(self, tag, scalar_value, global_step=None, *args, **kwargs):
        _record(tag, scalar_value, global_step)
        return original_add_scalar(self, tag, scalar_value, global_step, *args, **kwargs)

    tensorboardX.SummaryWriter.add_scalar = add_scalar

    def load(model, key):
        with np.load(work / f"model_{key}.npz") as arrays:
            state = {k: arrays[k] for k in arrays.files}
        mindspore.load_param_into_net(model, convert_state_dict(state, model), strict_load=True)

    if spec.get("linear_layers"):
        built = {"count": 0}
        original_dense = mindspore.nn.Dense.__init__

        def dense(self, *args, **kwargs):
            original_dense(self, *args, **kwargs)
            with np.load(work / f"linear_{built['count']}.npz") as arrays:
                self.weight.set_data(mindspore.Tensor(arrays["weight"]))
                if "bias" in arrays.files:
                    self.bias.set_data(mindspore.Tensor(arrays["bias"]))
            built["count"] += 1

        mindspore.nn.Dense.__init__ = dense
    module = _load(script)
    _hook_models(module, spec.get("models", ()), load)
    module.main(spec.get("argv", []))
    if draws:
        raise AssertionError(f"{len(draws)} recorded random draws were not asked for by the converted script")


def _replay_draws(mindspore, draws: list):
    ops = mindspore.ops

    def replay(name):
        def call(*args, **kwargs):
            if not draws or draws[0][0] != name:
                raise AssertionError(f"converted script asked for {name}, torch drew {draws[0][0] if draws else None}")
            _, value = draws.pop(0)
            size = kwargs.get("size", args[2] if name == "randint" and len(args) > 2 else None)
            if size is not None and tuple(size) != value.shape:
                raise AssertionError(f"{name}: shape {tuple(size)} asked, torch drew {value.shape}")
            if name == "randint":
                low, high = args[0], args[1]
                if value.size and not (low <= value.min() and value.max() < high):
                    raise AssertionError(f"randint({low}, {high}): torch drew values outside")
            return mindspore.Tensor(value)

        return call

    ops.randint = replay("randint")
    ops.randperm = replay("randperm")


def _replay_splits(ds, splits: list):
    def split(self, sizes, randomize=True):
        if not splits:
            raise AssertionError("the converted script splits a dataset torch did not split")
        indices = splits.pop(0)
        if [len(i) for i in indices] != list(sizes) and not all(isinstance(s, float) for s in sizes):
            raise AssertionError(f"split sizes {sizes}, torch split into {[len(i) for i in indices]}")
        return [ds.GeneratorDataset(self.source, column_names=self.column_names, sampler=part) for part in indices]

    ds.GeneratorDataset.split = split


def main(argv: list[str]) -> None:
    framework, script, work, spec = argv
    run = run_torch if framework == "torch" else run_mindspore
    run(pathlib.Path(script).resolve(), pathlib.Path(work), json.loads(spec))
    print("SCALARS " + json.dumps(SCALARS))


if __name__ == "__main__":
    main(sys.argv[1:])
