"""The torch side of the research benchmark, run in a child process.

    python torch_side.py reference --path DIR... [--torchvision DIR] MODEL_ID OUT_NPZ
    python torch_side.py imports --path DIR... [--torchvision DIR] TOP [PART...]

``reference`` builds the model from the original source (``torch.manual_seed(0)``
before it is built), gives every all-zero floating parameter small seeded values
(zero-initialised output layers, adaLN and LoRA ``up`` weights would otherwise make
the output exactly zero or the last bias, a comparison that proves little; the
perturbed weights are the ones saved, so both sides run the same network), runs
it in eval mode under ``torch.no_grad`` on the seeded inputs (benchmarks/research/build.py) and saves as numpy arrays: the inputs
(``input:*``), every output tensor in order (``output:<i>``), the state dict
(``weight:<key>``, as torch saves weights), and the outputs of the same model in
float64 (``output64:<i>``; how far float32 itself is from the exact result, see
benchmarks/zoo/verdict.py) or why it could not run in float64 (``float64_error``).
A model that cannot be made writes ``OUT_NPZ`` with ``.error.json`` for ``.npz``.

``imports`` imports every module of the original tree and prints one JSON
line {module: "" or the error}: the modules that import with torch are the
ones whose converted files must import without it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from benchmarks.research import model_by_id  # noqa: E402
from benchmarks.research.build import build, call_inputs, draw_inputs, flatten, method as _callable  # noqa: E402
from benchmarks.zoo.torch_side import import_torchvision_python_part  # noqa: E402


def _to_numpy(tensor):
    import torch

    tensor = tensor.detach().cpu()
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.float()
    return tensor.numpy()


def _is_tensor(value) -> bool:
    import torch

    return isinstance(value, torch.Tensor)


# what a reference file holds; older files are made again
REFERENCE_FORMAT = 2


def perturb_zero_parameters(model) -> list[str]:
    """Fill each all-zero floating parameter with N(0, 0.02) drawn from a seeded generator;
    the names of those changed."""
    import torch

    generator = torch.Generator().manual_seed(1)
    changed = []
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if parameter.is_floating_point() and parameter.numel() and not parameter.any():
                noise = torch.randn(parameter.shape, generator=generator, dtype=torch.float32)
                parameter.copy_((noise * 0.02).to(parameter.dtype))
                changed.append(name)
    return changed


def reference(model_id: str, out: str) -> None:
    import numpy as np
    import torch

    spec = model_by_id(model_id)
    torch.manual_seed(0)
    model = build(spec)
    model.eval()
    perturbed = perturb_zero_parameters(model)
    arrays = draw_inputs(spec)
    args, kwargs = call_inputs(spec, arrays, torch.from_numpy)
    with torch.no_grad():
        outputs = flatten(_callable(model, spec)(*args, **kwargs), _is_tensor, _to_numpy)
    if not outputs:
        raise ValueError("the model's output holds no tensor")
    saved = dict(arrays)
    saved.update({f"output:{i}": value for i, value in enumerate(outputs)})
    saved.update({f"weight:{k}": _to_numpy(v) for k, v in model.state_dict().items() if isinstance(v, torch.Tensor)})
    saved["spec"] = np.array(repr(spec))
    saved["perturbed"] = np.array(len(perturbed))
    saved["format"] = np.array(REFERENCE_FORMAT)
    try:
        doubled = {k: v.astype(np.float64) if v.dtype == np.float32 else v for k, v in arrays.items()}
        args, kwargs = call_inputs(spec, doubled, torch.from_numpy)
        with torch.no_grad():
            outputs64 = flatten(_callable(model.double(), spec)(*args, **kwargs), _is_tensor, _to_numpy)
        if len(outputs64) != len(outputs):
            raise ValueError(f"{len(outputs64)} outputs in float64, {len(outputs)} in float32")
        saved.update({f"output64:{i}": value for i, value in enumerate(outputs64)})
    except Exception as exc:  # a model that only runs in float32 is compared in float32 only
        saved["float64_error"] = np.array(f"{type(exc).__name__}: {exc}"[:500])
    np.savez(out, **saved)


def _describe(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("reference", "imports"))
    parser.add_argument("--path", action="append", default=[])
    parser.add_argument("--torchvision")
    parser.add_argument("rest", nargs="+")
    args = parser.parse_args(argv)
    if args.torchvision:
        import_torchvision_python_part(args.torchvision)
    for path in reversed(args.path):
        sys.path.insert(0, path)
    if args.mode == "imports":
        from benchmarks.research.imports import import_each

        top, *parts = args.rest
        print(json.dumps(import_each(top, tuple(parts), _describe)))
        return 0
    model_id, out = args.rest
    try:
        reference(model_id, out)
    except BaseException as exc:  # noqa: BLE001 - a reference that cannot be made is reported
        with open(out[: -len(".npz")] + ".error.json", "w") as handle:
            json.dump({"error": _describe(exc), "trace": traceback.format_exc()}, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
