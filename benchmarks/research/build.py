"""Building a model and reading its output, the same way on both sides
(imported by torch_side.py and mindspore_side.py; no framework imports here)."""

from __future__ import annotations

import dataclasses
import importlib
import operator

import numpy as np

from benchmarks.research.spec import Call, Input, Model, Ref


def build(model: Model):
    """``factory(*args, **kwargs)`` from the model's module, ``Call``s resolved."""
    module = importlib.import_module(model.module)
    factory = operator.attrgetter(model.factory)(module)
    return factory(*resolve(model.args, model.module), **resolve(model.kwargs, model.module))


def method(model, spec: Model):
    """What to call: the model, or its ``spec.method``."""
    return getattr(model, spec.method) if spec.method else model


def resolve(value, module_name: str):
    if isinstance(value, Call):
        module = importlib.import_module(value.module or module_name)
        factory = operator.attrgetter(value.factory)(module)
        return factory(*resolve(value.args, module_name), **resolve(value.kwargs, module_name))
    if isinstance(value, Ref):
        return operator.attrgetter(value.name)(importlib.import_module(value.module or module_name))
    if isinstance(value, tuple):
        return tuple(resolve(v, module_name) for v in value)
    if isinstance(value, list):
        return [resolve(v, module_name) for v in value]
    if isinstance(value, dict):
        return {k: resolve(v, module_name) for k, v in value.items()}
    return value


def draw_inputs(model: Model) -> dict[str, np.ndarray]:
    """The seeded arrays: ``input:<i>`` for positional, ``input:<name>`` for keyword inputs."""
    rng = np.random.default_rng(0)
    arrays = {}
    for i, spec in enumerate(model.inputs):
        if isinstance(spec, Input):
            arrays[f"input:{i}"] = spec.make(rng)
    for name, spec in model.keyword_inputs.items():
        if isinstance(spec, Input):
            arrays[f"input:{name}"] = spec.make(rng)
    return arrays


def call_inputs(model: Model, arrays: dict[str, np.ndarray], to_tensor) -> tuple[list, dict]:
    """(positional, keyword) arguments: the arrays as tensors, other values as they are."""
    args = [to_tensor(arrays[f"input:{i}"]) if isinstance(spec, Input) else spec for i, spec in enumerate(model.inputs)]
    kwargs = {name: to_tensor(arrays[f"input:{name}"]) if isinstance(spec, Input) else spec
              for name, spec in model.keyword_inputs.items()}
    return args, kwargs


def flatten(output, is_tensor, to_numpy) -> list[np.ndarray]:
    """Every tensor in ``output`` in order: tuples and lists in order, dicts by
    key (sorted when the keys sort), dataclasses by their fields;
    other values (ints, None, strings) are left out."""
    found: list[np.ndarray] = []

    def walk(value):
        if is_tensor(value):
            found.append(to_numpy(value))
        elif isinstance(value, (tuple, list)):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            keys = list(value)
            try:
                keys = sorted(keys)
            except TypeError:
                pass
            for key in keys:
                walk(value[key])
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            for item in dataclasses.fields(value):
                walk(getattr(value, item.name))

    walk(output)
    return found
