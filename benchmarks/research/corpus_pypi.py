"""Research model code from the package registry, by many authors, at pinned
versions (``pip download --no-deps``; nothing is installed). Small configs:
tiny widths, one or two layers, 32x32 or 64x64 images, short sequences, so
each model runs in seconds on MindSpore's CPU backend.

What the originals import and ms-migrate does not convert must be installed
for the torch side: einops (converted to plain MindSpore ops, but the
original needs it), einx, loguru, huggingface_hub (segmentation_models_pytorch,
at import time), numpy, scipy. Torch-based packages that a source imports are
sources themselves (``needs``), converted along with it.
"""

from __future__ import annotations

from benchmarks.research.spec import Call, Input, Model, Ref, Source

IMAGE32 = (Input((1, 3, 32, 32)),)
IMAGE64 = (Input((1, 3, 64, 64)),)
IMAGE224 = (Input((1, 3, 224, 224)),)  # networks that end in a fixed 7x7 pooling
GRAY32 = (Input((1, 1, 32, 32)),)
GRAY64 = (Input((1, 1, 64, 64)),)
TOKENS = (Input((1, 16), "int64", 0, 64),)
SEQUENCE = (Input((1, 16, 32)),)

SOURCES: list[Source] = [
    Source("segmentation-models-pytorch", "pypi", "0.6.0", convert=("segmentation_models_pytorch",),
           needs=("timm",), license="MIT"),
    Source("monai", "pypi", "1.6.1", convert=("monai",), license="Apache-2.0"),
    Source("pytorchcv", "pypi", "0.0.74", convert=("pytorchcv",), license="MIT"),
    Source("torch-einops-utils", "pypi", "0.2.0", convert=("torch_einops_utils",), license="MIT"),
    Source("x-transformers", "pypi", "2.31.10", convert=("x_transformers",), needs=("torch-einops-utils",),
           license="MIT"),
    Source("vector-quantize-pytorch", "pypi", "1.32.0", convert=("vector_quantize_pytorch",),
           needs=("torch-einops-utils",), license="MIT"),
    Source("conformer", "pypi", "0.3.2", convert=("conformer",), license="MIT"),
    Source("mlp-mixer-pytorch", "pypi", "0.3.1", convert=("mlp_mixer_pytorch",), license="MIT"),
    Source("g-mlp-pytorch", "pypi", "0.1.5", convert=("g_mlp_pytorch",), license="MIT"),
    Source("nystrom-attention", "pypi", "0.0.14", convert=("nystrom_attention",), license="MIT"),
    Source("lambda-networks", "pypi", "0.4.0", convert=("lambda_networks",), license="MIT"),
    Source("rotary-embedding-torch", "pypi", "0.9.1", convert=("rotary_embedding_torch",), license="MIT"),
    Source("pytorch-crf", "pypi", "0.7.2", convert=("torchcrf",), license="MIT"),
    Source("ncps", "pypi", "1.0.1", convert=("ncps",), license="Apache-2.0"),
    Source("pytorch-tcn", "pypi", "1.2.3", convert=("pytorch_tcn",), license="MIT"),
    Source("facenet-pytorch", "pypi", "2.6.0", convert=("facenet_pytorch",), license="MIT"),
    Source("pretrainedmodels", "pypi", "0.7.4", convert=("pretrainedmodels",), license="BSD-3-Clause"),
    Source("pytorch-tabnet", "pypi", "4.1.0", convert=("pytorch_tabnet",), license="MIT"),
    Source("siren-pytorch", "pypi", "0.1.7", convert=("siren_pytorch",), license="MIT"),
    Source("axial-attention", "pypi", "0.6.1", convert=("axial_attention",), license="MIT"),
    Source("resnest", "pypi", "0.0.5", convert=("resnest/__init__.py", "resnest/torch"), license="Apache-2.0"),
]

SMP = "segmentation_models_pytorch"
MONAI = "monai.networks.nets"
CV = "pytorchcv.models"

MODELS: list[Model] = [
    # segmentation_models_pytorch: decoders over encoders of several origins
    Model("smp_unet_resnet18", "segmentation-models-pytorch", SMP, "Unet", "segmentation",
          kwargs=dict(encoder_name="resnet18", encoder_weights=None, classes=2), inputs=IMAGE64,
          note="encoder from torchvision's ResNet"),
    Model("smp_fpn_efficientnet_b0", "segmentation-models-pytorch", SMP, "FPN", "segmentation",
          kwargs=dict(encoder_name="efficientnet-b0", encoder_weights=None, classes=2), inputs=IMAGE64),
    Model("smp_segformer_mit_b0", "segmentation-models-pytorch", SMP, "Segformer", "segmentation",
          kwargs=dict(encoder_name="mit_b0", encoder_weights=None, classes=2), inputs=IMAGE64),
    Model("smp_deeplabv3plus_tu_resnet18", "segmentation-models-pytorch", SMP, "DeepLabV3Plus", "segmentation",
          kwargs=dict(encoder_name="tu-resnet18", encoder_weights=None, classes=2), inputs=IMAGE64,
          note="encoder from timm"),
    Model("smp_linknet_mobileone_s0", "segmentation-models-pytorch", SMP, "Linknet", "segmentation",
          kwargs=dict(encoder_name="mobileone_s0", encoder_weights=None, classes=2), inputs=IMAGE64),
    # monai: medical segmentation networks, 2-D and small
    Model("monai_unet", "monai", MONAI, "UNet", "segmentation",
          kwargs=dict(spatial_dims=2, in_channels=1, out_channels=2, channels=(8, 16, 32), strides=(2, 2),
                      num_res_units=1), inputs=GRAY32),
    Model("monai_basic_unet", "monai", MONAI, "BasicUNet", "segmentation",
          kwargs=dict(spatial_dims=2, in_channels=1, out_channels=2, features=(8, 8, 16, 16, 32, 8)), inputs=GRAY32),
    Model("monai_dynunet", "monai", MONAI, "DynUNet", "segmentation",
          kwargs=dict(spatial_dims=2, in_channels=1, out_channels=2, kernel_size=[3, 3, 3], strides=[1, 2, 2],
                      upsample_kernel_size=[2, 2], filters=[8, 16, 32]), inputs=GRAY32),
    Model("monai_segresnet", "monai", MONAI, "SegResNet", "segmentation",
          kwargs=dict(spatial_dims=2, init_filters=8, in_channels=1, out_channels=2, blocks_down=(1, 2, 2),
                      blocks_up=(1, 1)), inputs=GRAY32),
    Model("monai_attention_unet", "monai", MONAI, "AttentionUnet", "segmentation",
          kwargs=dict(spatial_dims=2, in_channels=1, out_channels=2, channels=(8, 16, 32), strides=(2, 2)),
          inputs=GRAY32),
    Model("monai_vnet", "monai", MONAI, "VNet", "segmentation",
          kwargs=dict(spatial_dims=2, in_channels=1, out_channels=2), inputs=GRAY32),
    Model("monai_unetr", "monai", MONAI, "UNETR", "segmentation",
          kwargs=dict(in_channels=1, out_channels=2, img_size=(32, 32), feature_size=8, hidden_size=48, mlp_dim=96,
                      num_heads=4, spatial_dims=2), inputs=GRAY32),
    Model("monai_swin_unetr", "monai", MONAI, "SwinUNETR", "segmentation",
          kwargs=dict(in_channels=1, out_channels=2, feature_size=12, depths=(1, 1, 1, 1), num_heads=(3, 3, 3, 3),
                      spatial_dims=2), inputs=GRAY64),
    Model("monai_densenet", "monai", MONAI, "DenseNet", "classification",
          kwargs=dict(spatial_dims=2, in_channels=1, out_channels=3, init_features=8, growth_rate=8,
                      block_config=(2, 2)), inputs=GRAY32),
    Model("monai_vit", "monai", MONAI, "ViT", "vit",
          kwargs=dict(in_channels=1, img_size=(32, 32), patch_size=(8, 8), hidden_size=48, mlp_dim=96, num_layers=2,
                      num_heads=4, spatial_dims=2, classification=True, num_classes=3), inputs=GRAY32),
    # pytorchcv: one author's reimplementations of many papers
    Model("pytorchcv_resnet20_cifar10", "pytorchcv", f"{CV}.resnet_cifar", "resnet20_cifar10", "classification",
          inputs=IMAGE32),
    Model("pytorchcv_densenet40_k12_cifar10", "pytorchcv", f"{CV}.densenet_cifar", "densenet40_k12_cifar10",
          "classification", inputs=IMAGE32),
    Model("pytorchcv_shufflenetv2_wd2", "pytorchcv", f"{CV}.shufflenetv2", "shufflenetv2_wd2", "classification",
          inputs=IMAGE224),
    Model("pytorchcv_mobilenetv3_small_w7d20", "pytorchcv", f"{CV}.mobilenetv3", "mobilenetv3_small_w7d20",
          "classification", inputs=IMAGE224),
    Model("pytorchcv_sepreresnet20_cifar10", "pytorchcv", f"{CV}.sepreresnet_cifar", "sepreresnet20_cifar10",
          "classification", inputs=IMAGE32),
    # x-transformers
    Model("xt_decoder_lm", "x-transformers", "x_transformers", "TransformerWrapper", "llm",
          kwargs=dict(num_tokens=64, max_seq_len=32, attn_layers=Call("Decoder", kwargs=dict(dim=32, depth=1, heads=2))),
          inputs=TOKENS),
    Model("xt_llama_style", "x-transformers", "x_transformers", "TransformerWrapper", "llm",
          kwargs=dict(num_tokens=64, max_seq_len=32, use_abs_pos_emb=False,
                      attn_layers=Call("Decoder", kwargs=dict(dim=32, depth=2, heads=2, rotary_pos_emb=True,
                                                              use_rmsnorm=True, ff_glu=True, attn_kv_heads=1))),
          inputs=TOKENS, note="rotary, RMSNorm, GLU feed-forward, grouped-query attention"),
    Model("xt_encoder", "x-transformers", "x_transformers", "TransformerWrapper", "encoder",
          kwargs=dict(num_tokens=64, max_seq_len=32, attn_layers=Call("Encoder", kwargs=dict(dim=32, depth=1, heads=2))),
          inputs=TOKENS),
    Model("xt_vit", "x-transformers", "x_transformers", "ViTransformerWrapper", "vit",
          kwargs=dict(image_size=32, patch_size=8, num_classes=10,
                      attn_layers=Call("Encoder", kwargs=dict(dim=32, depth=1, heads=2))), inputs=IMAGE32),
    # vector-quantize-pytorch
    Model("vq_vector_quantize", "vector-quantize-pytorch", "vector_quantize_pytorch", "VectorQuantize", "quantizer",
          kwargs=dict(dim=32, codebook_size=64), inputs=SEQUENCE),
    Model("vq_residual_vq", "vector-quantize-pytorch", "vector_quantize_pytorch", "ResidualVQ", "quantizer",
          kwargs=dict(dim=32, codebook_size=64, num_quantizers=2), inputs=SEQUENCE),
    Model("vq_fsq", "vector-quantize-pytorch", "vector_quantize_pytorch", "FSQ", "quantizer",
          kwargs=dict(levels=[8, 5, 5], dim=32), inputs=SEQUENCE),
    # lucidrains' single-paper packages
    Model("conformer_block_lucidrains", "conformer", "conformer", "ConformerBlock", "speech",
          kwargs=dict(dim=32, dim_head=8, heads=4, ff_mult=2, conv_expansion_factor=2, conv_kernel_size=7),
          inputs=SEQUENCE),
    Model("conformer_lucidrains", "conformer", "conformer", "Conformer", "speech",
          kwargs=dict(dim=32, depth=2, dim_head=8, heads=4, ff_mult=2, conv_kernel_size=7), inputs=SEQUENCE),
    Model("mlp_mixer", "mlp-mixer-pytorch", "mlp_mixer_pytorch", "MLPMixer", "mlp",
          kwargs=dict(image_size=32, channels=3, patch_size=8, dim=32, depth=2, num_classes=10), inputs=IMAGE32),
    Model("g_mlp_lm", "g-mlp-pytorch", "g_mlp_pytorch", "gMLP", "llm",
          kwargs=dict(num_tokens=64, dim=32, depth=2, seq_len=16), inputs=TOKENS),
    Model("g_mlp_vision", "g-mlp-pytorch", "g_mlp_pytorch", "gMLPVision", "mlp",
          kwargs=dict(image_size=32, patch_size=8, num_classes=10, dim=32, depth=2), inputs=IMAGE32),
    Model("nystromformer", "nystrom-attention", "nystrom_attention", "Nystromformer", "encoder",
          kwargs=dict(dim=32, dim_head=8, heads=4, depth=1, num_landmarks=8), inputs=(Input((1, 32, 32)),)),
    Model("lambda_layer", "lambda-networks", "lambda_networks", "LambdaLayer", "attention",
          kwargs=dict(dim=16, dim_out=16, r=7, dim_k=8, heads=4, dim_u=1), inputs=(Input((1, 16, 8, 8)),)),
    Model("rotary_embedding", "rotary-embedding-torch", "rotary_embedding_torch", "RotaryEmbedding", "attention",
          kwargs=dict(dim=16), method="rotate_queries_or_keys", inputs=(Input((1, 2, 8, 16)),)),
    # other authors
    Model("torchcrf_crf", "pytorch-crf", "torchcrf", "CRF", "sequence-labelling",
          kwargs=dict(num_tags=5, batch_first=True),
          inputs=(Input((2, 6, 5)), Input((2, 6), "int64", 0, 5)), note="log-likelihood of the tags"),
    Model("ncps_cfc", "ncps", "ncps.torch", "CfC", "rnn",
          kwargs=dict(input_size=8, units=16), inputs=(Input((1, 10, 8)),)),
    Model("ncps_ltc", "ncps", "ncps.torch", "LTC", "rnn",
          kwargs=dict(input_size=8, units=16), inputs=(Input((1, 10, 8)),)),
    Model("pytorch_tcn", "pytorch-tcn", "pytorch_tcn", "TCN", "tcn",
          kwargs=dict(num_inputs=8, num_channels=[16, 16], kernel_size=3), inputs=(Input((1, 8, 32)),)),
    Model("resnest_small", "resnest", "resnest.torch.resnet", "ResNet", "classification",
          args=(Ref("Bottleneck"), [1, 1, 1, 1]),
          kwargs=dict(radix=2, groups=1, bottleneck_width=64, deep_stem=True, stem_width=16, avg_down=True, avd=True,
                      avd_first=False, num_classes=10), inputs=IMAGE64, note="split attention (ResNeSt)"),
    Model("facenet_inception_resnet_v1", "facenet-pytorch", "facenet_pytorch", "InceptionResnetV1", "face",
          kwargs=dict(classify=True, num_classes=10), inputs=(Input((1, 3, 96, 96)),)),
    Model("facenet_mtcnn_pnet", "facenet-pytorch", "facenet_pytorch", "PNet", "detection",
          kwargs=dict(pretrained=False), inputs=(Input((1, 3, 32, 32)),)),
    Model("facenet_mtcnn_onet", "facenet-pytorch", "facenet_pytorch", "ONet", "detection",
          kwargs=dict(pretrained=False), inputs=(Input((1, 3, 48, 48)),)),
    Model("pretrainedmodels_se_resnet", "pretrainedmodels", "pretrainedmodels.models.senet", "SENet", "classification",
          args=(Ref("SEResNetBottleneck"), [1, 1, 1, 1]),
          kwargs=dict(groups=1, reduction=16, dropout_p=None, inplanes=64, input_3x3=False, downsample_kernel_size=1,
                      downsample_padding=0, num_classes=10), inputs=IMAGE224),
    Model("pretrainedmodels_xception", "pretrainedmodels", "pretrainedmodels.models.xception", "xception",
          "classification", kwargs=dict(num_classes=10, pretrained=None), inputs=(Input((1, 3, 96, 96)),)),
    Model("tabnet_sparsemax", "pytorch-tabnet", "pytorch_tabnet.tab_network", "TabNetNoEmbeddings", "tabular",
          kwargs=dict(input_dim=10, output_dim=2, n_d=8, n_a=8, n_steps=3), inputs=(Input((4, 10)),),
          note="sparsemax is a torch.autograd.Function"),
    Model("tabnet_entmax", "pytorch-tabnet", "pytorch_tabnet.tab_network", "TabNetNoEmbeddings", "tabular",
          kwargs=dict(input_dim=10, output_dim=2, n_d=8, n_a=8, n_steps=2, mask_type="entmax"),
          inputs=(Input((4, 10)),), note="entmax15 is a torch.autograd.Function"),
    Model("siren", "siren-pytorch", "siren_pytorch", "SirenNet", "implicit",
          kwargs=dict(dim_in=2, dim_hidden=32, dim_out=3, num_layers=3), inputs=(Input((1, 64, 2)),)),
    Model("axial_attention", "axial-attention", "axial_attention", "AxialAttention", "attention",
          kwargs=dict(dim=16, dim_index=1, heads=4, num_dimensions=2), inputs=(Input((1, 16, 8, 8)),)),
    Model("axial_image_transformer", "axial-attention", "axial_attention", "AxialImageTransformer", "vit",
          kwargs=dict(dim=16, depth=2, heads=4, reversible=True), inputs=(Input((1, 16, 8, 8)),),
          note="reversible layers are a torch.autograd.Function"),
]
