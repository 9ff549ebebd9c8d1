"""Devices: MindSpore places computation by a global setting, so device moves
are dropped and device objects become inert strings in torch's names
("cpu", "cuda:0").

What torch code reads from a device keeps working: a tensor's ``.device``
(MindSpore says "CPU", "GPU:0", "Ascend:0") is read through ``torch_device``,
a ``str`` written at the top of the file that names it as torch does ("cpu",
"cuda:0", "npu:0": comparisons and ``str()`` give torch's answers) and has
torch's ``.type`` and ``.index``; those of a literal device are written out.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.torch_functions.dtypes import DTYPE_NAMES
from rewrite_rules.api import (ApiRule, AttributeRule, Example, MethodRule, PropertyRule, Unconvertible, code_of, define,
                               defined, dotted_parts, is_device_string, is_torch_name, literal_value)

_DEVICE_WORDS = ("device", "dev", "rank", "gpu")  # x.to(local_rank), x.to(args.gpu): a DDP process's device


_X = {"x": "randn(2, 3)"}

# torch.device for the converted code: written once above the code of a file that reads a device
_DEVICE_CLASS = '''
class {name}(str):
    """torch.device over MindSpore's device strings (written by ms-migrate)."""

    # a device in torch's names: MindSpore's "CPU", "GPU:0", "Ascend:0" are "cpu", "cuda:0", "npu:0"
    def __new__(cls, type, index=None):
        if type is None:
            return None  # an unset device stays unset
        name, _, number = str(type).partition(":")
        name = {{"CPU": "cpu", "GPU": "cuda", "Ascend": "npu"}}.get(name, name)
        number = number if index is None else str(index)
        return super().__new__(cls, f"{{name}}:{{number}}" if number else name)

    @property
    def type(self):
        return str(self).partition(":")[0]

    @property
    def index(self):
        return int(str(self).partition(":")[2]) if ":" in self else None
'''


def _after_device_class(code: str) -> str:
    """The golden text of an example whose output reads a device through torch_device."""
    return _DEVICE_CLASS.format(name="torch_device").strip() + "\n\n\n" + code


def _device_class(ctx) -> cst.Name:
    """The file's ``torch_device`` class (written once, above the code)."""
    return define(ctx, "torch_device", _DEVICE_CLASS)


def _device(call, ctx):
    """torch.device("cuda", 1) -> "cuda:1"; a device or its type alone passes as it is."""
    value = call.get("type")
    index = call.get("index")
    if value is None:
        call.result = cst.SimpleString('"cpu"')
    elif index is None or (isinstance(index, cst.Name) and index.value == "None"):
        # the call's parentheses may have been what let the argument span lines
        loose = not isinstance(value, (cst.Name, cst.Attribute, cst.BaseString, cst.Call, cst.Subscript))
        call.result = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if loose and not value.lpar \
            else value
    elif isinstance(value, cst.SimpleString) and isinstance(index, cst.Integer):
        call.result = cst.SimpleString(repr(f"{literal_value(value)}:{literal_value(index)}").replace("'", '"'))
    else:
        call.result = cst.Call(_device_class(ctx), [cst.Arg(value), cst.Arg(index)])


def _placement(receiver, ctx):
    """x.device -> torch_device(x.device): the tensor's place in torch's names.
    Only in torch code (converted code reads it through torch_device already)."""
    # (the torch imports a converted file keeps stand under markers in ``try: ... except ImportError:``)
    torch_code = any(b.module_level and not b.optional and is_torch_name(b.qualified)
                     for b in ctx.analysis.imports.values())
    if not torch_code:
        return None
    return cst.Call(_device_class(ctx), [cst.Arg(cst.Attribute(receiver, cst.Name("device")))])


def _holds_device(expr, ctx) -> bool:
    """An expression that reads a device: ``x.device``, or a variable known or
    named to hold one (``device``, ``dev``, ``self.out_device``)."""
    if not isinstance(expr, (cst.Name, cst.Attribute)):
        return False
    code = code_of(expr)
    last = code.rsplit(".", 1)[-1].lower()
    return ctx.known_kinds.get(code) == "device" or last in _DEVICE_WORDS or last.endswith("_device")


def _device_attribute(name: str):
    """``.type`` / ``.index`` of a device: written out for a literal, read
    through torch_device otherwise; the attribute of anything else is left alone."""

    def hook(receiver, ctx):
        if is_device_string(receiver):
            text = literal_value(receiver)
            kind, _, index = text.partition(":")
            value = kind if name == "type" else (int(index) if index else None)
            return cst.parse_expression(repr(value).replace("'", '"'))
        if not _holds_device(receiver, ctx):
            return None  # a torch_device already, or not a device
        return cst.Attribute(cst.Call(_device_class(ctx), [cst.Arg(receiver)]), cst.Name(name))

    return hook


def on_gpu(ctx) -> cst.BaseExpression:
    """``mindspore.get_context("device_target") == "GPU"``: MindSpore runs on a GPU
    (where torch code asks about CUDA)."""
    ctx.imports_needed.add(("mindspore", "mindspore"))
    return cst.parse_expression('mindspore.get_context("device_target") == "GPU"')


def _from_device_target(template: str):
    """A hook answering from MindSpore's device target: ``template`` with
    ``{target}`` for ``mindspore.get_context("device_target")``."""

    def hook(call, ctx):
        call.result = cst.parse_expression(template.format(target='mindspore.get_context("device_target")'))
        ctx.imports_needed.add(("mindspore", "mindspore"))

    return hook


_cuda_available = _from_device_target('{target} == "GPU"')
_accelerator_available = _from_device_target('{target} != "CPU"')


def _current_accelerator(call, ctx):
    target = cst.parse_expression('mindspore.get_context("device_target")')
    ctx.imports_needed.add(("mindspore", "mindspore"))
    call.result = cst.Call(_device_class(ctx), [cst.Arg(target)])


def _is_device(expr, source, method) -> bool:
    qualified = method.qualified(source)
    if qualified is not None and qualified.startswith("torch.device"):
        return True
    if isinstance(expr, cst.SimpleString):
        return is_device_string(expr)
    if isinstance(expr, cst.Call) and code_of(expr.func) == defined(method.ctx, "torch_device"):
        return True  # a tensor's .device, read through torch_device
    if isinstance(expr, cst.Subscript):  # x.to(device_ids[0])
        expr = expr.value
    if isinstance(expr, (cst.Name, cst.Attribute)):
        code = code_of(expr)
        if method.ctx.known_kinds.get(code) == "device":
            return True
        last = code.rsplit(".", 1)[-1].lower()
        return any(word in last for word in _DEVICE_WORDS)
    return False


def _to(call, ctx):
    """x.to(device) -> x; x.to(dtype) stays; x.to(device, dtype) -> x.to(dtype)."""
    kept = []
    for index, arg in enumerate(call.args):
        if arg.keyword is not None:
            name = arg.keyword.value
            if name in ("device", "non_blocking", "copy", "memory_format"):
                continue
            if name == "dtype":
                kept.append(arg)  # MindSpore's Tensor.to takes dtype= too
                continue
            raise Unconvertible(f"to() with {name}= is not supported")
        source = call.source_arg(index)
        qualified = call.qualified(source) or ""
        if _is_device(arg.value, source, call):
            continue
        if _is_dtype(arg.value, qualified, ctx):
            kept.append(arg)
            continue
        if isinstance(arg.value, (cst.Name, cst.Attribute)) and "dtype" in code_of(arg.value):
            kept.append(arg)
            continue
        raise Unconvertible("to(): cannot tell whether the argument is a device or a dtype")
    if not kept:
        return call.receiver
    kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.rename("to", kept[:1])


def _is_dtype(expr, qualified: str, ctx) -> bool:
    """A torch dtype, or a MindSpore one (output already converted)."""
    if qualified.startswith("torch.") and qualified.split(".")[-1] in DTYPE_NAMES:
        return True
    parts = dotted_parts(expr)
    if parts is None or len(parts) < 2:
        return False
    binding = ctx.analysis.imports.get(parts[0])
    return (
        binding is not None
        and binding.qualified.split(".", 1)[0] == "mindspore"
        and parts[-1] in DTYPE_NAMES | {"bool_"}
    )


def _receiver(call, ctx):
    return call.receiver


# Memory layouts are only ever arguments (.to(memory_format=...), .contiguous(memory_format=...)), which
# the method rules drop: MindSpore tensors have one layout. The names become inert strings meanwhile.
_MEMORY_FORMATS = ("channels_last", "contiguous_format", "preserve_format", "channels_last_3d")

RULES = [
    *(AttributeRule(f"torch.{name}", f'"{name}"', reason="a memory layout; MindSpore tensors have one layout",
                    examples=(Example(f"result = x.contiguous(memory_format=torch.{name}) * 2",
                                      inputs={"x": "randn(2, 3, 4, 5, 2)" if name.endswith("3d") else "randn(2, 3, 4, 5)"}),))
      for name in _MEMORY_FORMATS),
    ApiRule(
        "torch.device",
        None,
        signature="type, index=None",
        hook=_device,
        notes="kept as an inert string; MindSpore selects the device with mindspore.set_device",
        examples=(Example('device = torch.device("cuda")', 'device = "cuda"'),
                  Example('device = torch.device("cuda", 1)', 'device = "cuda:1"'),
                  Example('device = torch.device("cpu")\nresult = x.to(device) * 2', inputs=_X),
                  # the call's parentheses let the argument span lines (mmsegmentation's torchserve handler)
                  Example("class Placed:\n    def __init__(self):\n"
                          "        self.device = torch.device('cuda:' +\n"
                          "                                   str(0) if torch.cuda.is_available() else 'cpu')\n"
                          "device = Placed().device\nresult = (x.to(device) * 2, str(device))",
                          inputs=_X, notes="an argument over several lines"),
                  Example('device = torch.device("cpu", 0)\nlayer = nn.Linear(3, 2).to(device)\nresult = layer(x)',
                          inputs=_X, notes="index"),
                  Example('kind = "cpu"\nnumber = 0\ndevice = torch.device(kind, number)\n'
                          'result = (str(device), device.type, device.index, device == torch.device("cpu:0"))',
                          inputs={}, notes="index through a variable")),
    ),
    # torch.device's attributes, read as torch reads them
    PropertyRule("device", hook=_placement, api="torch.Tensor.device",
                 notes="read through torch_device: MindSpore's placement (\"CPU\", \"GPU:0\") in torch's names",
                 examples=(Example("d = x.device", _after_device_class("d = torch_device(x.device)")),
                           Example('result = (str(x.device), x.device == torch.device("cpu"), '
                                   'x.device != torch.device("cuda"), x.device == x.device)', inputs=_X),
                           Example("y = torch.zeros(3, device=x.device)", "y = ops.zeros(3)"),
                           Example('use_cuda = "cuda" in args.device', 'use_cuda = "cuda" in args.device',
                                   notes="used as a string: an argparse option's device name"),
                           Example("result = len({x.device: 1, torch.device('cpu'): 2})", inputs=_X,
                                   notes="as a dictionary key"))),
    PropertyRule("type", hook=_device_attribute("type"), api="torch.device.type",
                 notes="a literal device's type is written out; any other device's read through torch_device",
                 examples=(Example('kind = torch.device("cuda:1").type', 'kind = "cuda"'),
                           Example("result = x.device.type", inputs=_X),
                           Example('result = "fast" if x.device.type == "cuda" else "slow"', inputs=_X),
                           Example('device = x.device\nresult = (device.type, device.type != "meta")', inputs=_X,
                                   notes="through a variable"),
                           Example("kind = torch.accelerator.current_accelerator().type",
                                   _after_device_class('kind = torch_device(mindspore.get_context("device_target")).type')),
                           Example("result = (torch.device('cpu').type, torch.device('cpu', 0).type)", inputs={}),
                           Example("result = config.type", "result = config.type", notes="not a device"))),
    PropertyRule("index", hook=_device_attribute("index"), api="torch.device.index",
                 notes="a literal device's index is written out; any other device's read through torch_device",
                 examples=(Example('number = torch.device("cuda:1").index', "number = 1"),
                           Example("result = x.device.index", inputs=_X),
                           Example("result = (torch.device('cpu').index, torch.device('cpu:0').index)", inputs={}),
                           Example("lookup = items.index", "lookup = items.index", notes="not a device"))),
    ApiRule(
        "torch.cuda.is_available",
        None,
        signature="",
        hook=_cuda_available,
        examples=(Example("ok = torch.cuda.is_available()", 'ok = mindspore.get_context("device_target") == "GPU"'),
                  # both sides run on CPU here
                  Example('result = torch.cuda.is_available()\ndevice = "cuda" if result else "cpu"', inputs={})),
    ),
    ApiRule("torch.accelerator.is_available", None, signature="", hook=_accelerator_available,
            notes="whether MindSpore's device target is an accelerator (GPU or Ascend)",
            examples=(Example("ok = torch.accelerator.is_available()",
                              'ok = mindspore.get_context("device_target") != "CPU"'),
                      Example('result = torch.accelerator.is_available()', inputs={}))),
    ApiRule("torch.accelerator.current_accelerator", None, signature="check_available=False",
            hook=_current_accelerator,
            notes="the device target in torch's names (\"cpu\", \"cuda\", \"npu\"), a device string like torch.device's",
            examples=(Example("device = torch.accelerator.current_accelerator()",
                              _after_device_class('device = torch_device(mindspore.get_context("device_target"))')),
                      Example('device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() '
                              'else torch.device("cpu")\nlayer = nn.Linear(3, 2).to(device)\nresult = layer(x)',
                              inputs=_X))),
    # the harness replays torch's draws to MindSpore, which would make any seed look right: proven by a test
    # that runs the converted code on its own (same seed, same draws and weights; another seed, other draws)
    ApiRule("torch.manual_seed", "mindspore.set_seed", signature="seed",
            proven_by=("tests/rules/test_seed_rules.py::test_manual_seed_repeats_the_draws_as_in_torch",),
            examples=(Example("torch.manual_seed(0)", "mindspore.set_seed(0)"),)),
    MethodRule(
        "to",
        hook=_to,
        arity=(0, 2),
        receiver="any",
        examples=(
            Example("y = x.to(device)", "y = x"),
            Example("y = x.to(torch.float16)", "y = x.to(mindspore.float16)"),
            Example("y = x.to(device=device, dtype=torch.float32, memory_format=torch.channels_last)",
                    "y = x.to(dtype=mindspore.float32)"),
            # a Module's to() returns the Module: chains keep working
            Example("layer = nn.Linear(3, 4).to('cpu')\nresult = layer(x)", inputs={"x": "randn(2, 3)"}),
            Example("layer = nn.Linear(3, 4).to(torch.float64)\nresult = layer(x.double())", inputs={"x": "randn(2, 3)"}),
            Example("device = torch.device('cpu')\nlayer = nn.Linear(3, 4).to(device)\nresult = layer(x.to(device))",
                    inputs={"x": "randn(2, 3)"}),
            Example('result = x.to("cpu") + 1', inputs=_X),
            Example("result = x.to(torch.float64)", inputs=_X, notes="dtype"),
            Example("result = x.to(dtype=torch.int32)", inputs=_X, notes="dtype_keyword"),
            Example('device = "cpu"\nresult = x.to(device, torch.float16)', inputs=_X, notes="device_and_dtype"),
            # another tensor's device and dtype (timm: distances.to(attn_map.device, attn_map.dtype))
            Example("y = x.to(w.device, w.dtype)", "y = x.to(w.dtype)"),
            Example("w = x.double()\nresult = x.to(w.device, w.dtype)", inputs=_X, notes="device_and_dtype_of_a_tensor"),
            Example('result = x.to(device="cpu", non_blocking=True)', inputs=_X, notes="keywords"),
            Example('layer = nn.Linear(3, 2).to("cpu")\nresult = layer(x)', inputs=_X, notes="module"),
        ),
    ),
    MethodRule("cuda", hook=_receiver, arity=(0, 1), receiver="any",
               examples=(Example("y = x.cuda()", "y = x"),
                         # there is no GPU here: torch runs .cuda() on a layer without tensors (a no-op on CPU);
                         # a tensor's .cuda() needs a CUDA device
                         Example("act = nn.ReLU().cuda()\nresult = act(x)", inputs=_X))),
    MethodRule("cpu", hook=_receiver, arity=(0, 0), receiver="any",
               examples=(Example("y = x.cpu().numpy()", "y = x.numpy()"),
                         Example("result = x.cpu().numpy()", inputs=_X),
                         Example("layer = nn.Linear(3, 2).cpu()\nresult = layer(x.cpu())", inputs=_X, notes="module"))),
]
