"""The torch side of the zoo benchmark, run in a child process: build each
timm model, run it in eval mode on a seeded input and save the input, the
output and its state dict (as torch saves weights) as numpy arrays; then the
output of the same model in float64 (``output_float64``: how far float32
itself is from the exact result, see verdict.py), or why it could not run in
float64 (``float64_error``).

    python torch_side.py TIMM_DIR TORCHVISION_DIR OUT_DIR NAME...
"""

from __future__ import annotations

import json
import os
import sys
import traceback
import types


def import_torchvision_python_part(torchvision_dir: str) -> None:
    # torchvision's fake-kernel registrations need its compiled ops, which the
    # registry's CUDA build cannot load beside the CPU torch; timm uses only
    # pure-Python parts (FrozenBatchNorm2d, transforms).
    sys.path.insert(0, torchvision_dir)
    sys.modules["torchvision._meta_registrations"] = types.ModuleType("torchvision._meta_registrations")


def reference(name: str, out_dir: str) -> None:
    import numpy as np
    import timm
    import torch

    torch.manual_seed(0)
    model = timm.create_model(name, pretrained=False)
    model.eval()
    size = model.pretrained_cfg["input_size"]
    x = np.random.default_rng(0).standard_normal((1, *size)).astype(np.float32)
    with torch.no_grad():
        y = model(torch.from_numpy(x))
    weights = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    arrays = {"input": x, "output": y.detach().numpy()}
    arrays.update({f"weight:{k}": v for k, v in weights.items()})
    try:
        with torch.no_grad():
            arrays["output_float64"] = model.double()(torch.from_numpy(x).double()).numpy()
    except Exception as exc:  # a model that only runs in float32 is compared in float32 only
        arrays["float64_error"] = np.array(f"{type(exc).__name__}: {exc}")
    np.savez(os.path.join(out_dir, f"{name}.npz"), **arrays)


def main() -> int:
    timm_dir, torchvision_dir, out_dir, *names = sys.argv[1:]
    import_torchvision_python_part(torchvision_dir)
    sys.path.insert(0, timm_dir)
    for name in names:
        try:
            reference(name, out_dir)
        except Exception as exc:  # a reference that cannot be made is reported, the rest go on
            with open(os.path.join(out_dir, f"{name}.error.json"), "w") as handle:
                json.dump({"error": f"{type(exc).__name__}: {exc}", "trace": traceback.format_exc()}, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
