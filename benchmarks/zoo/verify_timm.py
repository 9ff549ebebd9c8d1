"""``ms-migrate verify`` for the zoo's gradient checks, run in a child process
with torchvision's Python part importable: timm's original model files import
``torchvision.ops.misc`` (see torch_side.py); the converted side needs neither.

    python verify_timm.py TORCHVISION_DIR ORIGINAL CONVERTED --model NAME ... --grad
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from benchmarks.zoo.torch_side import import_torchvision_python_part  # noqa: E402
from transpiler.cli import main  # noqa: E402

if __name__ == "__main__":
    import_torchvision_python_part(sys.argv[1])
    sys.exit(main(["verify", *sys.argv[2:]]))
