"""torchvision.utils.make_grid / save_image convert into code that gives
torchvision's grid and writes torchvision's PNG, without torch.

For each argument combination, the same images go through torchvision's
functions (tests/training/torchvision_utils.py: torchvision cannot be
installed next to this torch build) and through the converted snippet
(NumPy and Pillow only: nothing the user did not have) under MindSpore; the
grids must agree to float32 rounding and the PNG files pixel for pixel.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
from tests.golden_files import ROOT
from transpiler.convert.pipeline import convert_source
from transpiler.convert.requirements import new_third_party_imports

CASES = {  # name -> (shape of the images, arguments)
    "defaults": ((5, 3, 4, 6), ""),
    "nrow and padding": ((5, 3, 4, 6), "nrow=2, padding=1"),
    "fewer images than nrow": ((3, 3, 4, 4), "nrow=8"),
    "single channel": ((4, 1, 5, 5), "nrow=2"),
    "one image": ((1, 3, 4, 4), ""),
    "one image, no batch axis": ((3, 4, 4), ""),
    "normalize": ((6, 3, 4, 4), "nrow=3, normalize=True"),
    "normalize, value range": ((4, 3, 4, 4), "normalize=True, value_range=(-1, 1)"),
    "normalize each": ((4, 3, 4, 4), "normalize=True, scale_each=True"),
    "pad value": ((4, 3, 4, 4), "nrow=2, pad_value=0.5"),
    "no padding, a full last row": ((6, 3, 3, 5), "nrow=3, padding=0"),
    "many images, wide padding": ((11, 3, 2, 3), "nrow=4, padding=3, pad_value=1.0"),
    "normalize each, value range": ((3, 3, 4, 4), "nrow=2, normalize=True, value_range=(-0.5, 0.5), scale_each=True"),
    "four channels": ((3, 4, 4, 4), "nrow=2"),
}

SNIPPET = """import numpy as np
import torch
from torchvision.utils import make_grid, save_image

images = torch.tensor(np.load("../images.npy"))
grid = make_grid(images, {args})
save_image(images, "grid.png", {args})
"""


_RUNNER = """
import json, os, sys
{setup}
for case in json.loads(sys.argv[1]):
    os.chdir(case["directory"])
    scope = {{}}
    exec(compile(open(case["program"]).read(), case["program"], "exec"), scope)
    grid = scope["grid"]
    print("GRID " + json.dumps([case["name"], (grid.numpy() if hasattr(grid, "numpy") else grid.asnumpy()).tolist()]))
"""


def _run_all(cases: list[dict], setup: str) -> dict[str, np.ndarray]:
    """Run every case's program in one process (MindSpore takes seconds to import)."""
    env = {**os.environ, "GLOG_v": "3", "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-c", _RUNNER.format(setup=setup), json.dumps(cases)]
    run = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    grids = [json.loads(line[5:]) for line in run.stdout.splitlines() if line.startswith("GRID ")]
    return {name: np.array(grid) for name, grid in grids}


def test_grids_and_files_match_torchvision(tmp_path):
    torch_cases, ms_cases = [], []
    for seed, (name, (shape, args)) in enumerate(sorted(CASES.items())):
        case_dir = tmp_path / f"case{seed}"
        for framework in ("torch", "mindspore"):
            (case_dir / framework).mkdir(parents=True)
        np.save(case_dir / "images.npy", np.random.default_rng(seed).uniform(-1.5, 1.5, size=shape).astype(np.float32))
        snippet = SNIPPET.format(args=args).replace(", )", ")")
        converted = convert_source(snippet, "grid.py").output
        assert "TODO(ms-migrate)" not in converted and "torch" not in converted, converted
        assert new_third_party_imports(snippet, converted) == [], converted  # NumPy and Pillow come with MindSpore
        (case_dir / "torch_program.py").write_text(snippet)
        (case_dir / "mindspore_program.py").write_text(converted)
        for framework, cases in (("torch", torch_cases), ("mindspore", ms_cases)):
            cases.append({"name": name, "directory": str(case_dir / framework),
                          "program": str(case_dir / f"{framework}_program.py")})
    expected = _run_all(torch_cases, "from tests.training.script_runner import _torchvision_utils\n"
                                     "_torchvision_utils()")
    actual = _run_all(ms_cases, "")
    from PIL import Image

    for seed, name in enumerate(sorted(CASES)):
        assert actual[name].shape == expected[name].shape, name
        np.testing.assert_allclose(actual[name], expected[name], rtol=0, atol=2e-7, err_msg=name)
        torch_png = np.asarray(Image.open(tmp_path / f"case{seed}" / "torch" / "grid.png"))
        ms_png = np.asarray(Image.open(tmp_path / f"case{seed}" / "mindspore" / "grid.png"))
        assert torch_png.shape == ms_png.shape and (torch_png == ms_png).all(), name
