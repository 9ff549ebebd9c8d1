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
carries no example inputs, which ``mindspore.export`` needs: it is marked,
unless the file traces it in the same function (``traced = torch.jit.trace(model,
x)`` then ``torch.jit.save(traced, f)``, ``traced.save(f)`` or the chained
``torch.jit.trace(model, x).save(f)``): then the save is ``mindspore.export`` with
the trace's example inputs. ``torch.export.export`` / ``torch.export.save`` are
rewritten the same way, and ``.module()`` of the program is the model itself
(transpiler/convert/structural/graph_exports.py, which says what was measured);
the rules below mark what that pass does not rewrite. ``torch.export.load``
reads the MindIR file as ``torch.jit.load`` does.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.api import ApiRule, Drop, Example, Unconvertible, Unsupported, keyword_arg

_SUFFIX = ".mindir"
_X = {"x": "randn(2, 4)"}

# Execution cases: a network traced / exported, saved, loaded back as a graph and run
# (the harness copies torch's weights into the Cell when it is built)
_NET = (
    "import os\nimport tempfile\n"
    "class Net(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(4, 3)\n\n"
    "    def forward(self, x):\n        return torch.tanh(self.fc(x))\n\n\n"
    "net = Net()\n"
    'path = os.path.join(tempfile.mkdtemp(), "model.pt")\n'
)
_EXPORT_TO = "the MindIR graph of the Cell, exported with the trace's example inputs"


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


def _unpaired(reason: str):
    """The hook of a save the graph-export pass did not rewrite (it rewrites the saves whose trace or
    export it sees in the same function): the call is marked with the reason."""

    def hook(call, ctx) -> None:
        raise Unconvertible(reason)

    return hook


_NO_INPUTS = ("carries no example inputs: export the Cell with mindspore.export(net, *inputs, file_name=f, "
              "file_format=\"MINDIR\")")

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
        "mindspore.export",
        signature="m, f, _extra_files=None",
        hook=_unpaired(f"a TorchScript module not traced in this function {_NO_INPUTS}"),
        notes="a TorchScript module carries no example inputs: export the Cell with "
        "mindspore.export(net, *inputs, file_name=f, file_format=\"MINDIR\"); a module traced in the same "
        "function is exported with the trace's example inputs (transpiler/convert/structural/graph_exports.py)",
        proven_by=("tests/proof/test_export_forms.py::test_traced_saves_load_back_as_graphs",),
        examples=(
            Example("torch.jit.save(traced, 'model.pt')", marked="torch.jit.save"),
            Example("traced = torch.jit.trace(model, x)\ntorch.jit.save(traced, 'model.pt')",
                    'traced = model\nmindspore.export(traced, x, file_name="model.pt", file_format="MINDIR")'),
            Example("traced = torch.jit.trace(model, (x, mask))\ny = traced(x, mask)\ntraced.save(path)",
                    'traced = model\ny = traced(x, mask)\n'
                    'mindspore.export(traced, x, mask, file_name=path, file_format="MINDIR")'),
            Example("torch.jit.trace(model, x).save('model.pt')",
                    'mindspore.export(model, x, file_name="model.pt", file_format="MINDIR")'),
            Example("traced = torch.jit.trace(model, x)\nx = x * 2\ntraced.save('model.pt')",
                    marked="assigned again between the trace and the save"),
            Example("traced = torch.jit.trace(model, next(batches))\ntraced.save('model.pt')",
                    marked="the example inputs are computed in the trace"),
            Example("scripted = torch.jit.script(model)\nscripted.save('model.pt')", marked="no example inputs"),
            Example(_NET + "traced = torch.jit.trace(net, x)\ntraced.save(path)\n"
                    "result = torch.jit.load(path)(x)\n", inputs=_X, notes=_EXPORT_TO),
            Example(_NET + "torch.jit.save(torch.jit.trace(net, x), path)\n"
                    "result = torch.jit.load(path)(x)\n", inputs=_X, notes=_EXPORT_TO),
        ),
    ),
    ApiRule(
        "torch.export.export",
        "mindspore.export",
        signature="mod, args, kwargs=None, *, dynamic_shapes=None, strict=False, preserve_module_call_signature=()",
        hook=_unpaired("an ExportedProgram is kept only as a name whose uses are .module() and torch.export.save: "
                       "MindSpore exports the Cell itself with mindspore.export(net, *args, file_name=f, "
                       "file_format=\"MINDIR\")"),
        notes="the model itself where the ExportedProgram is used only as ep.module() and torch.export.save(ep, f) "
        "(which becomes mindspore.export(ep, *args, file_name=f, file_format=\"MINDIR\")); otherwise marked: "
        "MindSpore exports the Cell itself (transpiler/convert/structural/graph_exports.py)",
        proven_by=("tests/proof/test_export_forms.py::test_exported_program_saves_and_loads",),
        examples=(
            Example("ep = torch.export.export(model, (x,))\ny = ep.module()(x)\ntorch.export.save(ep, 'model.pt2')",
                    'ep = model\ny = ep(x)\nmindspore.export(ep, x, file_name="model.pt2", file_format="MINDIR")'),
            Example("ep = torch.export.export(model, inputs)\ntorch.export.save(ep, path)",
                    'ep = model\nmindspore.export(ep, *inputs, file_name=path, file_format="MINDIR")'),
            Example("ep = torch.export.export(model, (x,))\nprint(ep.graph)", marked="used as more than ep.module()"),
            Example("programs.append(torch.export.export(model, (x,)))", marked="torch.export.export"),
            Example(_NET + "ep = torch.export.export(net, (x,))\ntorch.export.save(ep, path)\n"
                    "result = torch.export.load(path).module()(x) - ep.module()(x)\n", inputs=_X,
                    notes="the loaded MindIR graph gives the Cell's outputs"),
        ),
    ),
    ApiRule(
        "torch.export.save",
        "mindspore.export",
        signature="ep, f, *, extra_files=None, opset_version=None, pickle_protocol=2",
        hook=_unpaired(f"an ExportedProgram not exported in this function {_NO_INPUTS}"),
        notes="mindspore.export of the model with the example inputs of the torch.export.export in the same "
        "function; an ExportedProgram made elsewhere is marked",
        proven_by=("tests/proof/test_export_forms.py::test_exported_program_saves_and_loads",),
        examples=(Example("torch.export.save(ep, 'model.pt2')", marked="torch.export.save"),),
    ),
    ApiRule(
        "torch.export.load",
        "mindspore.load",
        signature="f, *, extra_files=None, expected_opset_version=None",
        args={"extra_files": Unsupported("extra files: a MindIR file holds the graph only"),
              "expected_opset_version": Drop("an ExportedProgram's operator versions: MindIR has none")},
        hook=_load,
        notes="nn.GraphCell of the MindIR file mindspore.export wrote (+ '.mindir'); the program's .module() is "
        "the GraphCell itself; a loaded program used otherwise is marked",
        proven_by=("tests/proof/test_export_forms.py::test_exported_program_saves_and_loads",),
        examples=(
            Example("ep = torch.export.load('model.pt2')\nnet = ep.module()",
                    'ep = nn.GraphCell(mindspore.load("model.pt2.mindir"))\nnet = ep'),
            Example("net = torch.export.load(path).module()", 'net = nn.GraphCell(mindspore.load(path + ".mindir"))'),
            Example("ep = torch.export.load(path)\nprint(ep.graph_signature)", marked="used as more than"),
        ),
    ),
]
