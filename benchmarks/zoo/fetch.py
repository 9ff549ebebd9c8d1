"""Getting timm's source (and, for the torch side only, torchvision's Python
part) from the package registry, unpacked into a work directory."""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import zipfile

TIMM = "timm==1.0.31"
# timm imports torchvision.ops.misc.FrozenBatchNorm2d at import time. The
# registry's torchvision is a CUDA build whose compiled ops do not load beside
# the CPU torch; its Python part is enough for timm (see torch_side.py).
# 0.29.1: the newest release the package index of these machines allows (pip is capped there)
TORCHVISION = "torchvision==0.29.1"


def fetch(work: str) -> tuple[str, str]:
    """(directory holding the ``timm`` package, directory holding ``torchvision``)."""
    return fetch_timm(work), fetch_torchvision(work)


def fetch_timm(work: str) -> str:
    """The directory holding the ``timm`` package."""
    return _unpacked(work, TIMM, "timm")


def fetch_torchvision(work: str) -> str:
    """The directory holding the ``torchvision`` package (its Python part is what runs here)."""
    return _unpacked(work, TORCHVISION, "torchvision")


def _unpacked(work: str, requirement: str, package: str) -> str:
    name = requirement.replace("==", "-")
    target = os.path.join(work, name)
    if os.path.isdir(os.path.join(target, package)):
        return target
    downloads = os.path.join(work, "wheels")
    os.makedirs(downloads, exist_ok=True)
    wheel_glob = os.path.join(downloads, f"{name}-*.whl")
    if not glob.glob(wheel_glob):
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", downloads, requirement],
            check=True,
        )
    with zipfile.ZipFile(glob.glob(wheel_glob)[0]) as wheel:
        wheel.extractall(target)
    return target
