"""The scripts: public training scripts at pinned commits, each with a tiny
configuration given through its own command-line arguments, and the data it
reads (benchmarks/training_scripts/data.py). Every row was checked on the
torch side first (the loss printed and falling)."""

from __future__ import annotations

from benchmarks.research.spec import Source
from benchmarks.training_scripts.spec import Script

SOURCES: list[Source] = [
    Source("Diego999/pyGAT", "github", "3664f2dc90cbf971564c0bf186dc794f12446d0c", license="MIT"),
    Source("lucidrains/x-transformers", "github", "9252ed7838021ee61e6c5be0930b3a9a88efdf06", license="MIT"),
    Source("rosinality/glow-pytorch", "github", "97081ff115a694cf04aeedbd58447f33d242c879", license="MIT"),
]

_GAT = ("--no-cuda", "--epochs", "8", "--hidden", "4", "--nb_heads", "2", "--patience", "100", "--seed", "1")

SCRIPTS: list[Script] = [
    Script("pygat", "Diego999/pyGAT", "train.py", r"loss_train: ([-\d.]+)", _GAT, data="cora",
           note="dense GAT on a 1500-node citation graph (24 features, 3 classes)"),
    Script("pygat_sparse", "Diego999/pyGAT", "train.py", r"loss_train: ([-\d.]+)", _GAT + ("--sparse",), data="cora",
           note="the same script, --sparse: SpGAT's custom autograd Function over COO indices"),
    Script("xt_copy", "lucidrains/x-transformers", "train_copy.py", r"^(?:\d+): ([-\d.]+)$", stop_after=6,
           packages=("torch-einops-utils==0.2.0",),
           note="encoder-decoder copy task, random tokens drawn by the script; constants in the file: "
                "stopped after 6 losses"),
    Script("glow", "rosinality/glow-pytorch", "train.py", r"Loss: ([-\d.]+);",
           ("--batch", "4", "--iter", "8", "--n_flow", "2", "--n_block", "2", "--img_size", "16", "--n_sample", "2",
            "--affine", "{run}/images"), data="image_folder",
           note="Glow on a 2-class 16 px ImageFolder"),
]
