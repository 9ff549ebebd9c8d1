"""Running converted code as on a machine without torch.

The converted code must not need torch (DESIGN 4): ``block_torch()`` makes
``import torch`` / ``import torchvision`` fail as they would there, so a test
or a benchmark proves it in a process that has both frameworks installed."""

from __future__ import annotations

import importlib.abc
import sys

BLOCKED_ROOTS = ("torch", "torchvision", "torchaudio")


class _NoTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".", 1)[0] in BLOCKED_ROOTS:
            raise ModuleNotFoundError(f"No module named {fullname!r} (blocked: the converted code must not need torch)",
                                      name=fullname)
        return None


def block_torch() -> None:
    """From now on this process behaves as if torch were not installed. Call it
    before anything imports torch (modules already imported stay usable)."""
    if any(fullname.split(".", 1)[0] in BLOCKED_ROOTS for fullname in sys.modules):
        raise RuntimeError("torch is already imported in this process: block it before importing anything that uses it")
    if not any(isinstance(finder, _NoTorch) for finder in sys.meta_path):
        sys.meta_path.insert(0, _NoTorch())
