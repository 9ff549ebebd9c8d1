"""Export for offline inference: torch's graph exports -> ``mindspore.export`` of a
MindIR file, and loading one -> ``nn.GraphCell(mindspore.load(...))``.

MindSpore 2.10 exports ONNX on CPU for few networks: measured, a Conv2d +
BatchNorm2d + AdaptiveAvgPool2d + Dense network fails ("Exporting
AdaptiveAvgPool2D operator is not yet supported", then a BiasAdd "out of
range"), while MINDIR exports it and the loaded GraphCell gives the Cell's
outputs. So ``torch.onnx.export`` writes MindIR too. ``mindspore.export`` adds
the ``.mindir`` suffix to a file name without it (``"model.onnx"`` ->
``model.onnx.mindir``); ``torch.jit.load("model.pt")`` reads the file
``mindspore.export(..., file_name="model.pt")`` wrote: ``"model.pt.mindir"``.

MindSpore compiles the Cell in the mode it is in; ``torch.onnx.export`` exports in
eval mode (``training=TrainingMode.EVAL``), so the Cell is set to eval first
(``set_train`` returns the Cell). A TorchScript module (``torch.jit.save(m, f)``)
carries no example inputs, which ``mindspore.export`` needs: it is marked.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.api import ApiRule, Drop, Example, Unconvertible, Unsupported, keyword_arg

_SUFFIX = ".mindir"
_X = {"x": "randn(2, 4)"}



def _export(call, ctx) -> None:
    """torch.onnx.export(model, args, f) -> mindspore.export(model.set_train(False), *args, file_name=f, "MINDIR")."""
    model, inputs, path = call.get("model"), call.get("args"), call.get("f")
    if path is None:
        raise Unconvertible("torch.onnx.export without a file returns an ONNX program: MindSpore exports to a file")
    if call.has("dynamic_axes"):
        ctx.warn(call.original, "torch.onnx.export", "dynamic_axes dropped: the MindIR graph has the example "
                 "inputs' shapes (export again for other shapes)")
    args = [cst.Arg(cst.Call(cst.Attribute(model, cst.Name("set_train")), [cst.Arg(cst.Name("False"))]))]
    if isinstance(inputs, cst.Tuple):
        args.extend(cst.Arg(element.value) for element in inputs.elements)
    else:
        args.append(cst.Arg(inputs))
    args.append(keyword_arg("file_name", path))
    args.append(keyword_arg("file_format", cst.SimpleString('"MINDIR"')))
    call.result = cst.Call(ctx.ref("mindspore.export"), args)


def _load(call, ctx) -> None:
    """torch.jit.load(f) -> nn.GraphCell(mindspore.load(f + ".mindir"))."""
    path = call.get("f")
    if isinstance(path, cst.SimpleString) and path.value[-1] in "'\"" and path.value[:1] in "'\"":
        quote = path.value[-1]
        text = path.value[:-1] + ("" if path.evaluated_value.endswith(_SUFFIX) else _SUFFIX) + quote
        path = cst.SimpleString(text)
    else:
        path = cst.BinaryOperation(path, cst.Add(), cst.SimpleString(f'"{_SUFFIX}"'))
    loaded = cst.Call(ctx.ref("mindspore.load"), [cst.Arg(path)])
    call.result = cst.Call(ctx.ref("mindspore.nn.GraphCell"), [cst.Arg(loaded)])


_NO_EFFECT = Drop("an ONNX exporter setting: the MindIR graph has none")

RULES = [
    ApiRule(
        "torch.onnx.export",
        "mindspore.export",
        signature="model, args=(), f=None, *, kwargs=None, export_params=True, verbose=None, input_names=None, "
        "output_names=None, opset_version=None, dynamic_axes=None, keep_initializers_as_inputs=False, "
        "dynamo=False, external_data=True, dynamic_shapes=None, training=None, do_constant_folding=True, "
        "operator_export_type=None, custom_opsets=None, export_modules_as_functions=False, "
        "autograd_inlining=True, optimize=True, verify=False, report=False, profile=False, dump_exported_program=False, "
        "artifacts_dir='.', fallback=False",
        args={
            "kwargs": Unsupported("keyword inputs: mindspore.export takes positional inputs"),
            "export_params": Unsupported("a graph without its weights: MindIR keeps them"),
            "training": Unsupported("exporting in training mode: set the Cell's mode and call mindspore.export"),
            **{name: _NO_EFFECT for name in (
                "verbose", "input_names", "output_names", "opset_version", "dynamic_axes",
                "keep_initializers_as_inputs", "dynamo", "external_data", "do_constant_folding", "operator_export_type",
                "custom_opsets", "export_modules_as_functions", "autograd_inlining", "optimize", "verify", "report",
                "profile", "dump_exported_program", "artifacts_dir", "fallback")},
            "dynamic_shapes": Unsupported("dynamic shapes: export one MindIR per input shape"),
        },
        hook=_export,
        notes="MindIR, not ONNX: MindSpore 2.10's ONNX export fails on CPU for common layers (AdaptiveAvgPool2d, "
        "measured); the file is file_name + '.mindir', read by nn.GraphCell(mindspore.load(...)); exported in "
        "eval mode as torch does",
        proven_by=("tests/proof/test_verify_export.py::test_converted_export_and_load",),
        examples=(
            Example("torch.onnx.export(model, x, 'model.onnx', input_names=['x'], opset_version=17)",
                    'mindspore.export(\n    model.set_train(False), x, file_name="model.onnx", file_format="MINDIR"\n)'),
            Example("torch.onnx.export(model, (x, mask), path, dynamic_axes={'x': {0: 'batch'}})",
                    'mindspore.export(model.set_train(False), x, mask, file_name=path, file_format="MINDIR")'),
        ),
    ),
    ApiRule(
        "torch.jit.load",
        "mindspore.load",
        signature="f, map_location=None, _extra_files=None, _restore_shapes=False",
        args={"map_location": Drop("device placement is global in MindSpore"),
              "_extra_files": Unsupported("extra files: a MindIR file holds the graph only")},
        hook=_load,
        notes="the MindIR file mindspore.export wrote for the same name (+ '.mindir'), run as nn.GraphCell",
        proven_by=("tests/proof/test_verify_export.py::test_converted_export_and_load",),
        examples=(
            Example("net = torch.jit.load('model.pt', map_location='cpu')",
                    'net = nn.GraphCell(mindspore.load("model.pt.mindir"))'),
            Example("net = torch.jit.load(path)", 'net = nn.GraphCell(mindspore.load(path + ".mindir"))'),
        ),
    ),
    ApiRule(
        "torch.jit.save",
        None,
        signature="m, f, _extra_files=None",
        notes="a TorchScript module carries no example inputs: export the Cell with "
        "mindspore.export(net, *inputs, file_name=f, file_format=\"MINDIR\")",
        examples=(Example("torch.jit.save(traced, 'model.pt')", marked="torch.jit.save"),),
    ),
]
