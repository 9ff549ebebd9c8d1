"""Runs one training script in this process as ``python SCRIPT ARGV`` would,
from the current directory; on the MindSpore side torch is made unimportable
first (transpiler/proof/no_torch.py).

    python benchmarks/training_scripts/launch.py torch|mindspore SCRIPT [ARGV...]
"""

from __future__ import annotations

import os
import runpy
import sys


def main() -> None:
    side, script, *argv = sys.argv[1:]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if side == "mindspore":
        sys.path.insert(0, root)
        from transpiler.proof.no_torch import block_torch

        block_torch()
        del sys.path[0]
        for name in [n for n in sys.modules if n == "transpiler" or n.startswith("transpiler.")]:
            del sys.modules[name]  # the script's own modules may share the name
    script = os.path.abspath(script)
    sys.path[0] = os.path.dirname(script)  # as `python SCRIPT` puts it
    sys.argv = [script, *argv]
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
