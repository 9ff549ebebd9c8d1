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
    Source("PetarV-/DGI", "github", "61baf67d7052905c77bdeb28c22926f04e182362", license="MIT"),
    Source("facebookresearch/deit", "github", "7e160fe43f0252d17191b71cbb5826254114ea5b", license="Apache-2.0"),
    Source("karpathy/ng-video-lecture", "github", "52201428ed7b46804849dea0b3ccf0de9df1a5c3", license="MIT"),
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
    Script("dgi", "PetarV-/DGI", "execute.py", r"Loss: (?:tensor\(|Tensor\(shape=\[\], dtype=\w+, value=\s*)?([-\d.]+)",
           data="planetoid", stop_after=8,
           note="Deep Graph Infomax on a 1000-node Planetoid-format graph; no arguments (10000 epochs, "
                "early stopping): stopped after 8 losses"),
    Script("bigram", "karpathy/ng-video-lecture", "bigram.py", r"step \d+: train loss ([-\d.]+)", stop_after=4,
           note="bigram language model on the repository's input.txt; constants in the file (3000 steps, "
                "evaluation every 300): stopped after 4 evaluations"),
    Script("deit", "facebookresearch/deit", "main.py", r"Epoch: \[\d+\].*? loss: ([-\d.]+)",
           ("--model", "deit_tiny_patch16_224", "--input-size", "32", "--batch-size", "4", "--epochs", "3",
            "--data-set", "IMNET", "--data-path", "{run}/imnet", "--device", "cpu", "--num_workers", "0",
            "--no-model-ema", "--no-repeated-aug", "--no-pin-mem", "--mixup", "0", "--cutmix", "0",
            "--reprob", "0", "--warmup-epochs", "0", "--output_dir", "{run}/out"),
           data="imagenet_folder", packages=("timm==1.0.31",),
           note="DeiT-tiny at 32 px (4 patches), 1000-way head, 2-class ImageFolder; timm from the registry"),
]
