"""Runs one training script in this process as ``python SCRIPT ARGV`` would,
from the current directory; on the MindSpore side torch is made unimportable
first (transpiler/proof/no_torch.py). On the torch side, torchvision's Python
part (the registry's build cannot load its compiled ops beside this torch) is
made importable as benchmarks/zoo does, from the directory named by
``TRAINING_SCRIPTS_TORCHVISION``.

    python benchmarks/training_scripts/launch.py torch|mindspore SCRIPT [ARGV...]
"""

from __future__ import annotations

import os
import runpy
import sys


def main() -> None:
    side, script, *argv = sys.argv[1:]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    script = os.path.abspath(script)
    sys.path[0] = os.path.dirname(script)  # as `python SCRIPT` puts it
    sys.path.insert(0, root)
    if side == "mindspore":
        from transpiler.proof.no_torch import block_torch

        block_torch()
    elif os.environ.get("TRAINING_SCRIPTS_TORCHVISION"):
        from benchmarks.zoo.torch_side import import_torchvision_python_part

        import_torchvision_python_part(os.environ["TRAINING_SCRIPTS_TORCHVISION"])
    sys.path.remove(root)
    for name in [n for n in sys.modules if n.split(".")[0] in ("transpiler", "benchmarks")]:
        del sys.modules[name]  # the script's own modules may share the name
    sys.argv = [script, *argv]
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
