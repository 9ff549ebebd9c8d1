"""torch.utils.tensorboard.SummaryWriter -> tensorboardX.SummaryWriter, a new
requirement the output names on its import line.

torch's writer is a port of tensorboardX: same constructor, same ``add_*``
methods, same event files, read by the same TensorBoard, and no torch
needed. tensorboardX reads numbers, NumPy arrays and torch tensors, not
MindSpore tensors, so values that may be tensors are handed over as NumPy
arrays (``np.asarray``); values the file shows are Python numbers are passed
as they are. ``add_graph`` traces a torch model and is marked.
tests/rules/test_tensorboard_rules.py proves each method by reading back what torch's
writer and the converted one log from the same values.

Why tensorboardX, although the user of torch.utils.tensorboard had only the
``tensorboard`` package (measured with tensorboard 2.21 and MindSpore 2.10):
``mindspore.SummaryRecord`` writes MindInsight's format, in which TensorBoard
finds no tag at all; tensorboard's own writer (``tensorboard.summary.Writer``,
marked experimental) runs without torch or TensorFlow but logs scalars only,
so images, histograms, audio, PR curves and embeddings would be lost; the
rest of tensorboard is a reader. tensorboardX is pure Python and what it
requires (numpy, packaging, protobuf) comes with tensorboard and MindSpore:
the new requirement is this one package, named in a comment on the import
(``transpiler.convert.requirements``).
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.api import WRITER, ApiRule, Example, MethodRule, Unconvertible, is_number, receiver_origin


def _writer(call, ctx):
    ctx.imports_needed.add(("tensorboardX", "tensorboardX"))
    call.func = cst.Attribute(cst.Name("tensorboardX"), cst.Name("SummaryWriter"))


# method -> (positions, keywords) of the arguments that may hold tensors
_TENSOR_ARGUMENTS = {
    "add_scalar": ((1,), ("scalar_value",)),
    "add_histogram": ((1,), ("values",)),
    "add_image": ((1,), ("img_tensor",)),
    "add_images": ((1,), ("img_tensor",)),
    "add_video": ((1,), ("vid_tensor",)),
    "add_audio": ((1,), ("snd_tensor",)),
    "add_pr_curve": ((1, 2), ("labels", "predictions")),
    "add_embedding": ((0,), ("mat", "label_img")),
}


# what tensorboardX logs differently (measured by tests/rules/test_tensorboard_rules.py)
_DIFFERENCES = {
    "add_scalars": "; each key's run directory is main_tag/key (torch: main_tag_key), the values are the same",
    "add_audio": "; the sound is squeezed to one dimension as torch does; tensorboardX's soundfile rounds the "
                 "16-bit samples where torch truncates (a sample may differ by 2 in 32767)",
    "add_embedding": "; the unused cells of the label_img sprite are left uninitialised (torch: black); "
                     "TensorBoard does not show them",
}


def _is_writer(call, ctx) -> bool:
    origin = receiver_origin(call)
    return origin is not None and origin.kind == WRITER


def _as_array(value: cst.BaseExpression, source: cst.BaseExpression, ctx) -> cst.BaseExpression:
    if is_number(ctx, source) or isinstance(source, (cst.SimpleString, cst.FormattedString)):
        return value
    if _is_numpy_call(source, ctx):
        return value  # np.asarray(...) already (converted output read again)
    return cst.Call(ctx.ref("numpy.asarray"), [cst.Arg(value)])


def _is_numpy_call(expr: cst.BaseExpression, ctx) -> bool:
    if not isinstance(expr, cst.Call) or not isinstance(expr.func, cst.Attribute):
        return False
    root = expr.func.value
    binding = ctx.analysis.imports.get(root.value) if isinstance(root, cst.Name) else None
    return binding is not None and binding.qualified == "numpy"


def _mono(value: cst.BaseExpression, source: cst.BaseExpression, ctx) -> cst.BaseExpression:
    """add_audio: torch squeezes the sound to one dimension ((1, L) -> (L,)); tensorboardX
    reads a 2-D sound as (frames, channels), so it gets the squeezed array."""
    if isinstance(source, cst.Call) and isinstance(source.func, cst.Attribute) and source.func.attr.value == "squeeze" \
            and _is_numpy_call(source.func.value, ctx):
        return value  # np.asarray(...).squeeze() already (converted output read again)
    return cst.Call(cst.Attribute(value, cst.Name("squeeze")), [])


def _values(method: str):
    positions, keywords = _TENSOR_ARGUMENTS[method]

    def hook(call, ctx):
        if not _is_writer(call, ctx):
            return call.call
        sources = call.source.args
        args = []
        position = 0
        for arg, source in zip(call.call.args, sources):
            wanted = (arg.keyword is None and position in positions) or \
                     (arg.keyword is not None and arg.keyword.value in keywords)
            if arg.keyword is None:
                position += 1
            if wanted:
                value = _as_array(arg.value, source.value, ctx)
                if method == "add_audio":
                    value = _mono(value, source.value, ctx)
                arg = arg.with_changes(value=value)
            args.append(arg)
        return call.call.with_changes(args=args)

    return hook


def _scalars(call, ctx):
    """add_scalars(main_tag, {"train": loss, "val": val_loss}, step): each value as an array."""
    if not _is_writer(call, ctx):
        return call.call
    args = list(call.call.args)
    index = next((i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == "tag_scalar_dict"),
                 1 if len(args) > 1 and args[1].keyword is None else None)
    if index is None:
        return call.call
    converted, source = args[index].value, call.source.args[index].value
    if not isinstance(converted, cst.Dict) or not isinstance(source, cst.Dict):
        raise Unconvertible("add_scalars with a dict built elsewhere: give tensorboardX numbers or NumPy arrays "
                            "(np.asarray(value)) as the dict's values")
    elements = [
        element.with_changes(value=_as_array(element.value, original.value, ctx))
        if isinstance(element, cst.DictElement) else element
        for element, original in zip(converted.elements, source.elements)
    ]
    args[index] = args[index].with_changes(value=converted.with_changes(elements=elements))
    return call.call.with_changes(args=args)


_WRITER = "torch.utils.tensorboard.SummaryWriter"

RULES = [
    ApiRule(
        "torch.utils.tensorboard.SummaryWriter",
        "tensorboardX.SummaryWriter",
        signature="log_dir=None, comment='', purge_step=None, max_queue=10, flush_secs=120, filename_suffix=''",
        hook=_writer,
        aliases=("torch.utils.tensorboard.writer.SummaryWriter",),
        # the training scripts' add_scalar values are what that test compares; tests/rules/test_tensorboard_rules.py
        # reads back what torch's writer and the converted one log through every add_* method
        proven_by=("tests/training/test_training_scripts.py::test_training_script_trains_like_torch_at_every_step",
                   "tests/rules/test_tensorboard_rules.py::test_the_same_tags_are_logged"),
        notes="the same writer API and event files (torch's writer is a port of tensorboardX); values that may be "
              "MindSpore tensors are passed as NumPy arrays; tensorboardX is a new requirement (pip install "
              "tensorboardX), named on its import line",
        examples=(
            Example('writer = torch.utils.tensorboard.SummaryWriter("runs/exp")',
                    'writer = tensorboardX.SummaryWriter("runs/exp")'),
            Example('writer = torch.utils.tensorboard.SummaryWriter(log_dir="runs", flush_secs=30)\n'
                    'writer.add_scalar("loss", loss, step)\nwriter.add_scalar("lr", 0.1, step)\n'
                    'writer.add_histogram("w", model.weight, step)\nwriter.close()',
                    'writer = tensorboardX.SummaryWriter(log_dir="runs", flush_secs=30)\n'
                    'writer.add_scalar("loss", np.asarray(loss), step)\nwriter.add_scalar("lr", 0.1, step)\n'
                    'writer.add_histogram("w", np.asarray(model.weight), step)\nwriter.close()'),
            Example('writer = torch.utils.tensorboard.SummaryWriter()\n'
                    'writer.add_scalars("loss", {"train": train_loss, "val": 0.5}, epoch)',
                    'writer = tensorboardX.SummaryWriter()\n'
                    'writer.add_scalars("loss", {"train": np.asarray(train_loss), "val": 0.5}, epoch)'),
            Example('writer = torch.utils.tensorboard.SummaryWriter()\nwriter.add_graph(model, x)', marked="add_graph"),
        ),
    ),
    *(MethodRule(name, hook=_values(name), receiver="any", owner=_WRITER,
                 notes="on a SummaryWriter made in this file: values that may be tensors as NumPy arrays"
                       + _DIFFERENCES.get(name, ""),
                 proven_by=(f"tests/rules/test_tensorboard_rules.py::test_{name}",))
      for name in _TENSOR_ARGUMENTS),
    MethodRule("add_scalars", hook=_scalars, receiver="any", owner=_WRITER,
               notes="on a SummaryWriter made in this file: the dict's values as NumPy arrays"
                     + _DIFFERENCES["add_scalars"],
               proven_by=("tests/rules/test_tensorboard_rules.py::test_add_scalars",)),
    # no hook: every add_graph call is marked, on a writer made elsewhere too (it cannot work on any)
    MethodRule("add_graph", receiver="any", owner=_WRITER,
               notes="add_graph traces a torch model; tensorboardX cannot trace a MindSpore Cell"),
]
