"""The GitHub part of the research benchmark: standalone research model code
from public repositories, each at a pinned commit, and small configurations
of the architectures they define (tiny widths and depths, 32-64 px images or
short sequences, batch 1-2), so each row runs in seconds on MindSpore's CPU
backend.

Every row was checked on the torch side: the pinned commit extracted, ``root``
put on ``sys.path``, ``module`` imported, ``factory(*args, **kwargs)`` built
after ``torch.manual_seed(0)`` and called in eval mode on ``inputs``.

Some snapshots hold files whose content is not stored (large binaries:
notebooks, pdfs, checkpoints, data); a source is read file by file, or with
its ``convert`` paths, never as one ``git archive`` of the whole commit.

Rows whose model zero-initialises its output layer (diffusion UNets, DiT:
``zero_module(conv)``, adaLN zero init) give an all-zero output at
construction; their ``note`` says so, as the comparison alone proves little
there unless the weights are perturbed before the reference is taken.
"""

from __future__ import annotations

from benchmarks.research.spec import Input, Model, Source

ZERO_OUT = "output layer zero-initialised: all-zero output unless weights are perturbed"


def _image(size: int = 32, channels: int = 3, batch: int = 1) -> tuple[Input, ...]:
    return (Input((batch, channels, size, size)),)


SOURCES: list[Source] = [
    Source("facebookresearch/deit", "github", "7e160fe43f0252d17191b71cbb5826254114ea5b",
           convert=("models.py", "models_v2.py", "cait_models.py", "resmlp_models.py"),
           needs=("timm",), license="Apache-2.0"),
    Source("facebookresearch/dino", "github", "7c446df5b9f45747937fb0d72314eb9f7b66930a",
           convert=("vision_transformer.py", "utils.py"), license="Apache-2.0"),
    Source("facebookresearch/ConvNeXt", "github", "048efcea897d999aed302f2639b6270aedf8d4c8",
           convert=("models",), needs=("timm",), license="MIT"),
    Source("facebookresearch/DiT", "github", "ed81ce2229091fd4ecc9a223645f95cf379d582b",
           convert=("models.py",), needs=("timm",), license="CC-BY-NC-4.0"),
    Source("openai/improved-diffusion", "github", "1bc7bbbdc414d83d4abf2ad8cc1446dc36c4e4d5",
           convert=("improved_diffusion/__init__.py", "improved_diffusion/unet.py",
                    "improved_diffusion/nn.py", "improved_diffusion/fp16_util.py"),
           license="MIT"),
    Source("openai/glide-text2im", "github", "69b530740eb6cef69442d6180579ef5ba9ef063e",
           convert=("glide_text2im/__init__.py", "glide_text2im/unet.py", "glide_text2im/nn.py",
                    "glide_text2im/fp16_util.py", "glide_text2im/xf.py"),
           license="MIT"),
]

MODELS: list[Model] = [
    # facebookresearch/deit
    Model("deit_distilled", "facebookresearch/deit", "models", "DistilledVisionTransformer", "vit",
          kwargs=dict(img_size=32, patch_size=8, embed_dim=64, depth=2, num_heads=2, num_classes=10),
          inputs=_image(32)),
    Model("deit3_tiny_ls", "facebookresearch/deit", "models_v2", "deit_tiny_patch16_LS", "vit",
          kwargs=dict(img_size=32, num_classes=10),
          inputs=_image(32)),
    Model("cait_tiny", "facebookresearch/deit", "cait_models", "cait_models", "vit",
          kwargs=dict(img_size=32, patch_size=8, embed_dim=64, depth=2, num_heads=2, depth_token_only=1,
                      num_classes=10),
          inputs=_image(32)),
    Model("resmlp_tiny", "facebookresearch/deit", "resmlp_models", "resmlp_models", "mlp",
          kwargs=dict(img_size=32, patch_size=8, embed_dim=64, depth=2, num_classes=10),
          inputs=_image(32)),
    # facebookresearch/dino
    Model("dino_vit", "facebookresearch/dino", "vision_transformer", "VisionTransformer", "vit",
          kwargs=dict(img_size=[32], patch_size=8, embed_dim=64, depth=2, num_heads=2, qkv_bias=True),
          inputs=_image(32)),
    Model("dino_vit_interpolated_pos", "facebookresearch/dino", "vision_transformer", "vit_tiny", "vit",
          kwargs=dict(img_size=[32], patch_size=16),
          inputs=_image(48),
          note="48 px input on a 32 px model: the position embedding is resized (bicubic)"),
    Model("dino_head", "facebookresearch/dino", "vision_transformer", "DINOHead", "head",
          kwargs=dict(in_dim=64, out_dim=128, hidden_dim=64, bottleneck_dim=32),
          inputs=(Input((2, 64)),),
          note="weight-normalised last layer"),
    # facebookresearch/ConvNeXt
    Model("convnext_tiny_cfg", "facebookresearch/ConvNeXt", "models.convnext", "ConvNeXt", "cnn",
          kwargs=dict(depths=[1, 1, 2, 1], dims=[16, 32, 64, 128], num_classes=10),
          inputs=_image(32)),
    Model("convnext_isotropic", "facebookresearch/ConvNeXt", "models.convnext_isotropic", "ConvNeXtIsotropic",
          "cnn",
          kwargs=dict(depth=2, dim=64, num_classes=10, layer_scale_init_value=1e-6),
          inputs=_image(32)),
    # facebookresearch/DiT
    Model("dit_tiny", "facebookresearch/DiT", "models", "DiT", "diffusion-transformer",
          kwargs=dict(input_size=8, patch_size=2, in_channels=4, hidden_size=64, depth=2, num_heads=2,
                      num_classes=10),
          inputs=(Input((1, 4, 8, 8)), Input((1,), "int64", 0, 1000), Input((1,), "int64", 0, 10)),
          note=ZERO_OUT),
    # openai/improved-diffusion
    Model("improved_diffusion_unet", "openai/improved-diffusion", "improved_diffusion.unet", "UNetModel",
          "diffusion-unet",
          kwargs=dict(in_channels=3, model_channels=32, out_channels=3, num_res_blocks=1,
                      attention_resolutions=(2,), channel_mult=(1, 2), num_heads=2),
          inputs=(Input((1, 3, 16, 16)), Input((1,), "int64", 0, 1000)),
          note=ZERO_OUT),
    Model("improved_diffusion_unet_ckpt_cond", "openai/improved-diffusion", "improved_diffusion.unet",
          "UNetModel", "diffusion-unet",
          kwargs=dict(in_channels=3, model_channels=32, out_channels=6, num_res_blocks=1,
                      attention_resolutions=(2,), channel_mult=(1, 2), num_heads=2, num_classes=10,
                      use_checkpoint=True, use_scale_shift_norm=True),
          inputs=(Input((1, 3, 16, 16)), Input((1,), "int64", 0, 1000), Input((1,), "int64", 0, 10)),
          note="gradient checkpointing as a torch.autograd.Function; " + ZERO_OUT),
    Model("improved_diffusion_superres", "openai/improved-diffusion", "improved_diffusion.unet",
          "SuperResModel", "diffusion-unet",
          kwargs=dict(in_channels=3, model_channels=32, out_channels=3, num_res_blocks=1,
                      attention_resolutions=(), channel_mult=(1, 2)),
          inputs=(Input((1, 3, 16, 16)), Input((1,), "int64", 0, 1000)),
          keyword_inputs=dict(low_res=Input((1, 3, 8, 8))),
          note=ZERO_OUT),
    # openai/glide-text2im
    Model("glide_unet", "openai/glide-text2im", "glide_text2im.unet", "UNetModel", "diffusion-unet",
          kwargs=dict(in_channels=3, model_channels=32, out_channels=6, num_res_blocks=1,
                      attention_resolutions=(2,), channel_mult=(1, 2), num_head_channels=16,
                      use_scale_shift_norm=True, resblock_updown=True),
          inputs=(Input((1, 3, 16, 16)), Input((1,), "int64", 0, 1000)),
          note=ZERO_OUT),
]
