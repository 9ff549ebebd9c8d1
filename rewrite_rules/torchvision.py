"""torchvision datasets and transforms -> mindspore.dataset counterparts.

Datasets become mindspore.dataset pipelines whose rows are (image, label);
a ``transform=`` becomes ``.map(operations=..., input_columns="image")``.
Transforms keep their order inside ``Compose``: torchvision's ToTensor makes
CHW float images in [0, 1], and so does mindspore.dataset.vision.ToTensor, so
Normalize after it works on CHW data (``is_hwc=False``). Anything else from
torchvision has no rule and is marked.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.spec import ApiRule, Arg, Drop, Example, Unconvertible, Unsupported
from transpiler.engine import code_of, keyword_arg

_DATASET_SIGNATURE = "root, train=True, transform=None, target_transform=None, download=False"


def _usage(train: cst.BaseExpression) -> cst.BaseExpression:
    code = code_of(train)
    if code in ("True", "False"):
        return cst.SimpleString('"train"' if code == "True" else '"test"')
    return cst.IfExp(train, cst.SimpleString('"train"'), cst.SimpleString('"test"'))


def _dataset_hook(target: str, warning: str):
    def hook(call, ctx):
        args = [cst.Arg(call.get("root"))]
        if any(p.name == "train" for p in call.rule.params):
            args.append(keyword_arg("usage", _usage(call.get("train") or cst.Name("True"))))
        if call.has("download"):
            ctx.warn(call.source, call.rule.torch, "download= dropped: mindspore.dataset does not download; " + warning)
        else:
            ctx.warn(call.source, call.rule.torch, warning)
        pipeline: cst.BaseExpression = cst.Call(ctx.ref(target), args)
        for name, column in (("transform", "image"), ("target_transform", "label")):
            operations = call.get(name)
            if operations is not None and code_of(operations) != "None":
                pipeline = cst.Call(
                    cst.Attribute(pipeline, cst.Name("map")),
                    [keyword_arg("operations", operations), keyword_arg("input_columns", cst.SimpleString(f'"{column}"'))],
                )
        call.result = pipeline

    return hook


def _random_crop(call, ctx):
    mode = call.literal("padding_mode", "constant")
    if mode != "constant":
        raise Unconvertible(f"padding_mode={mode!r}: pass mindspore.dataset.vision.Border by hand")
    call.remove("padding_mode")


_INTERPOLATION = Unsupported("interpolation: pass mindspore.dataset.vision.Inter by hand")

RULES = [
    ApiRule(
        "torchvision.datasets.MNIST",
        None,
        signature=_DATASET_SIGNATURE,
        hook=_dataset_hook("mindspore.dataset.MnistDataset",
                           "MnistDataset reads the raw idx files directly from the given directory "
                           "(torchvision keeps them in root/MNIST/raw)"),
        examples=(
            Example(
                'import torchvision\nds = torchvision.datasets.MNIST("data", train=False, transform=tf, download=True)',
                'ds = mindspore.dataset.MnistDataset("data", usage="test").map(\n'
                '    operations=tf, input_columns="image"\n)',
            ),
        ),
    ),
    ApiRule(
        "torchvision.datasets.CIFAR10",
        None,
        signature=_DATASET_SIGNATURE,
        hook=_dataset_hook("mindspore.dataset.Cifar10Dataset",
                           "Cifar10Dataset reads the binary version (cifar-10-batches-bin); torchvision uses the "
                           "python version"),
    ),
    ApiRule(
        "torchvision.datasets.ImageFolder",
        None,
        signature="root, transform=None, target_transform=None, loader=None, is_valid_file=None, allow_empty=False",
        args={"loader": Unsupported("a custom image loader has no counterpart"),
              "is_valid_file": Unsupported("is_valid_file has no counterpart"),
              "allow_empty": Drop()},
        hook=_dataset_hook("mindspore.dataset.ImageFolderDataset",
                           "ImageFolderDataset decodes images to HWC uint8 arrays (torchvision: PIL images)"),
    ),
    ApiRule("torchvision.transforms.Compose", "mindspore.dataset.transforms.Compose", signature="transforms",
            examples=(
                Example(
                    "import torchvision.transforms as T\n"
                    "tf = T.Compose([T.RandomCrop(28, padding=2), T.RandomHorizontalFlip(), T.ToTensor(), "
                    "T.Normalize((0.1307,), (0.3081,))])",
                    "tf = mindspore.dataset.transforms.Compose(\n    [\n"
                    "        mindspore.dataset.vision.RandomCrop(28, padding=2),\n"
                    "        mindspore.dataset.vision.RandomHorizontalFlip(prob=0.5),\n"
                    "        mindspore.dataset.vision.ToTensor(),\n"
                    "        mindspore.dataset.vision.Normalize((0.1307,), (0.3081,), is_hwc=False),\n    ]\n)",
                ),
            )),
    ApiRule("torchvision.transforms.ToTensor", "mindspore.dataset.vision.ToTensor", signature=""),
    ApiRule("torchvision.transforms.Normalize", "mindspore.dataset.vision.Normalize",
            signature="mean, std, inplace=False",
            args={"inplace": Drop("the result is the same")},
            hook=lambda call, ctx: call.add_keyword("is_hwc", "False"),
            notes="after ToTensor images are CHW"),
    ApiRule("torchvision.transforms.Resize", "mindspore.dataset.vision.Resize",
            signature="size, interpolation=None, max_size=None, antialias=True",
            args={"interpolation": _INTERPOLATION, "max_size": Unsupported("max_size has no counterpart"),
                  "antialias": Drop("MindSpore resizes PIL-style")}),
    ApiRule("torchvision.transforms.CenterCrop", "mindspore.dataset.vision.CenterCrop", signature="size"),
    ApiRule("torchvision.transforms.RandomCrop", "mindspore.dataset.vision.RandomCrop",
            signature="size, padding=None, pad_if_needed=False, fill=0, padding_mode='constant'",
            args={"fill": "fill_value"}, hook=_random_crop),
    ApiRule("torchvision.transforms.RandomHorizontalFlip", "mindspore.dataset.vision.RandomHorizontalFlip",
            signature="p=0.5", args={"p": Arg(to="prob", explicit=True)}),
    ApiRule("torchvision.transforms.RandomVerticalFlip", "mindspore.dataset.vision.RandomVerticalFlip",
            signature="p=0.5", args={"p": Arg(to="prob", explicit=True)}),
]
