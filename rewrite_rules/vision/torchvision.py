"""torchvision datasets and transforms -> mindspore.dataset counterparts.

Datasets become mindspore.dataset pipelines whose rows are (image, label), in
file order (``shuffle=False``: MindSpore's datasets shuffle by default, torch's
DataLoader does the shuffling) with int64 labels (torch's collate gives int64).
torchvision hands its transforms PIL images, so a ``transform=`` becomes
``.map(operations=Compose([ToPIL(), transform]), input_columns="image")``:
MindSpore's vision ops then take their PIL code path, which computes what
torchvision computes (measured: Resize on the NumPy path differs by up to
106/255 when it shrinks an image, CenterCrop by a pixel of offset when the
margin is odd; on the PIL path both are exact).

Transforms keep their order inside ``Compose``: torchvision's ToTensor makes
CHW float images in [0, 1], and so does mindspore.dataset.vision.ToTensor, so
Normalize after it works on CHW data (``is_hwc=False``). Anything else from
torchvision has no rule and is marked.

torchvision cannot be installed next to this machine's CPU build of torch, so
these rules are proven by tests/rules/test_torchvision_rules.py against torchvision's
behaviour written out with PIL and NumPy (``ApiRule.proven_by``).
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.api import ApiRule, Arg, Drop, Example, Unconvertible, Unsupported, code_of, keyword_arg

_DATASET_SIGNATURE = "root, train=True, transform=None, target_transform=None, download=False"


def _usage(train: cst.BaseExpression) -> cst.BaseExpression:
    code = code_of(train)
    if code in ("True", "False"):
        return cst.SimpleString('"train"' if code == "True" else '"test"')
    return cst.IfExp(train, cst.SimpleString('"train"'), cst.SimpleString('"test"'))


def _under(root: cst.BaseExpression, folder: str) -> cst.BaseExpression:
    """``root``/``folder``: a literal when root is one, else an f-string (str or Path roots)."""
    if isinstance(root, cst.SimpleString) and isinstance(root.evaluated_value, str):
        return cst.SimpleString(repr(root.evaluated_value.rstrip("/") + "/" + folder))
    return cst.parse_expression(f'f"{{{code_of(root)}}}/{folder}"')


def _map(pipeline: cst.BaseExpression, operations: cst.BaseExpression, column: str) -> cst.Call:
    return cst.Call(
        cst.Attribute(pipeline, cst.Name("map")),
        [keyword_arg("operations", operations), keyword_arg("input_columns", cst.SimpleString(f'"{column}"'))],
    )


# torchvision.datasets.folder.IMG_EXTENSIONS, compared without case by torchvision;
# MindSpore compares extensions with case
_IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def _extensions() -> cst.Call:
    """``".jpg .jpeg ... .JPG .JPEG ...".split()``: both cases, in one line."""
    spelled = " ".join(_IMAGE_EXTENSIONS + tuple(e.upper() for e in _IMAGE_EXTENSIONS))
    return cst.Call(cst.Attribute(cst.SimpleString(f'"{spelled}"'), cst.Name("split")), [])


def _dataset_hook(target: str, folder: str | None, warning: str, image_folder: bool = False):
    def hook(call, ctx):
        root = call.get("root")
        args = [cst.Arg(_under(root, folder) if folder else root)]
        if any(p.name == "train" for p in call.rule.params):
            args.append(keyword_arg("usage", _usage(call.get("train") or cst.Name("True"))))
        args.append(keyword_arg("shuffle", cst.Name("False")))
        transform = call.get("transform")
        if transform is not None and code_of(transform) == "None":
            transform = None
        if image_folder:
            args.append(keyword_arg("extensions", _extensions()))
            if transform is None:
                args.append(keyword_arg("decode", cst.Name("True")))
        if call.has("download"):
            ctx.warn(call.source, call.rule.torch, "download= dropped: mindspore.dataset does not download; " + warning)
        else:
            ctx.warn(call.source, call.rule.torch, warning)
        pipeline: cst.BaseExpression = cst.Call(ctx.ref(target), args)
        int64 = cst.Call(ctx.ref("mindspore.dataset.transforms.TypeCast"), [cst.Arg(ctx.ref("mindspore.int64"))])
        pipeline = _map(pipeline, int64, "label")
        if transform is not None:
            # torchvision's transforms receive PIL images: so do these (their PIL code path)
            to_pil = "mindspore.dataset.vision.Decode" if image_folder else "mindspore.dataset.vision.ToPIL"
            first = cst.Call(ctx.ref(to_pil), [keyword_arg("to_pil", cst.Name("True"))] if image_folder else [])
            steps = cst.List([cst.Element(first), cst.Element(transform)])
            pipeline = _map(pipeline, cst.Call(ctx.ref("mindspore.dataset.transforms.Compose"), [cst.Arg(steps)]), "image")
        target_transform = call.get("target_transform")
        if target_transform is not None and code_of(target_transform) != "None":
            pipeline = _map(pipeline, target_transform, "label")
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
        hook=_dataset_hook("mindspore.dataset.MnistDataset", "MNIST/raw",
                           "MnistDataset reads the uncompressed idx files in root/MNIST/raw, where torchvision "
                           "keeps them"),
        proven_by=("tests/rules/test_torchvision_rules.py::test_mnist",),
        examples=(
            Example(
                'import torchvision\nds = torchvision.datasets.MNIST("data", train=False, transform=tf, download=True)',
                'ds = (\n    mindspore.dataset.MnistDataset("data/MNIST/raw", usage="test", shuffle=False)\n'
                '    .map(\n        operations=mindspore.dataset.transforms.TypeCast(mindspore.int64),\n'
                '        input_columns="label",\n    )\n'
                '    .map(\n        operations=mindspore.dataset.transforms.Compose(\n'
                '            [mindspore.dataset.vision.ToPIL(), tf]\n        ),\n'
                '        input_columns="image",\n    )\n)',
            ),
        ),
    ),
    *(
        ApiRule(
            f"torchvision.datasets.{name}",
            None,
            signature=_DATASET_SIGNATURE,
            hook=_dataset_hook(f"mindspore.dataset.{target}", f"{name}/raw",
                               f"{target} reads the uncompressed idx files in root/{name}/raw, where torchvision "
                               "keeps them"),
            proven_by=(f"tests/training/test_dataset_idioms.py::test_{name.lower()}",),
        )
        for name, target in (("FashionMNIST", "FashionMnistDataset"), ("KMNIST", "KMnistDataset"))
    ),
    ApiRule(
        "torchvision.datasets.CIFAR10",
        None,
        signature=_DATASET_SIGNATURE,
        hook=_dataset_hook("mindspore.dataset.Cifar10Dataset", "cifar-10-batches-bin",
                           "Cifar10Dataset reads CIFAR-10's binary version (cifar-10-binary.tar.gz, extracted in "
                           "root/cifar-10-batches-bin); torchvision reads the python version"),
        proven_by=("tests/rules/test_torchvision_rules.py::test_cifar10",),
    ),
    ApiRule(
        "torchvision.datasets.ImageFolder",
        None,
        signature="root, transform=None, target_transform=None, loader=None, is_valid_file=None, allow_empty=False",
        args={"loader": Unsupported("a custom image loader has no counterpart"),
              "is_valid_file": Unsupported("is_valid_file has no counterpart"),
              "allow_empty": Drop()},
        hook=_dataset_hook("mindspore.dataset.ImageFolderDataset", None,
                           "ImageFolderDataset yields the same files, classes and labels in the same order; "
                           "without a transform its images are HWC uint8 arrays (torchvision: PIL images)",
                           image_folder=True),
        proven_by=("tests/rules/test_torchvision_rules.py::test_image_folder",),
    ),
    ApiRule("torchvision.transforms.Compose", "mindspore.dataset.transforms.Compose", signature="transforms",
            proven_by=("tests/rules/test_torchvision_rules.py::test_compose",),
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
    ApiRule("torchvision.transforms.ToTensor", "mindspore.dataset.vision.ToTensor", signature="",
            proven_by=("tests/rules/test_torchvision_rules.py::test_to_tensor",)),
    ApiRule("torchvision.transforms.Normalize", "mindspore.dataset.vision.Normalize",
            signature="mean, std, inplace=False",
            args={"inplace": Drop("the result is the same")},
            hook=lambda call, ctx: call.add_keyword("is_hwc", "False"),
            notes="after ToTensor images are CHW", proven_by=("tests/rules/test_torchvision_rules.py::test_normalize",)),
    ApiRule("torchvision.transforms.Resize", "mindspore.dataset.vision.Resize",
            signature="size, interpolation=None, max_size=None, antialias=True",
            args={"interpolation": _INTERPOLATION, "max_size": Unsupported("max_size has no counterpart"),
                  "antialias": Drop("PIL images are always resized with antialiasing, in torchvision too")},
            notes="exact on PIL images (the converted torchvision datasets hand their transforms PIL images); "
                  "on tensors torchvision interpolates differently",
            proven_by=("tests/rules/test_torchvision_rules.py::test_resize",)),
    ApiRule("torchvision.transforms.CenterCrop", "mindspore.dataset.vision.CenterCrop", signature="size",
            notes="exact on PIL images for a crop no larger than the image (torchvision pads a larger image's "
                  "margins first)",
            proven_by=("tests/rules/test_torchvision_rules.py::test_center_crop",)),
    ApiRule("torchvision.transforms.RandomCrop", "mindspore.dataset.vision.RandomCrop",
            signature="size, padding=None, pad_if_needed=False, fill=0, padding_mode='constant'",
            args={"fill": "fill_value"}, hook=_random_crop, proven_by=("tests/rules/test_torchvision_rules.py::test_random_crop",)),
    ApiRule("torchvision.transforms.RandomHorizontalFlip", "mindspore.dataset.vision.RandomHorizontalFlip",
            signature="p=0.5", args={"p": Arg(to="prob", explicit=True)},
            proven_by=("tests/rules/test_torchvision_rules.py::test_random_horizontal_flip",)),
    ApiRule("torchvision.transforms.RandomVerticalFlip", "mindspore.dataset.vision.RandomVerticalFlip",
            signature="p=0.5", args={"p": Arg(to="prob", explicit=True)},
            proven_by=("tests/rules/test_torchvision_rules.py::test_random_vertical_flip",)),
]
