"""Devices: MindSpore places computation by a global setting, so device moves
are dropped and device objects become inert strings."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.dtypes import DTYPE_NAMES
from rewrite_rules.api import ApiRule, AttributeRule, Example, MethodRule, Unconvertible, code_of
from transpiler.names import chain_parts
from transpiler.structural.devices import is_device_string

_DEVICE_WORDS = ("device", "dev")


_X = {"x": "randn(2, 3)"}


def _device(call, ctx):
    value = call.get("type")
    call.result = value if value is not None else cst.SimpleString('"cpu"')


def _from_device_target(template: str):
    """A hook answering from MindSpore's device target: ``template`` with
    ``{target}`` for ``mindspore.get_context("device_target")``."""

    def hook(call, ctx):
        call.result = cst.parse_expression(template.format(target='mindspore.get_context("device_target")'))
        ctx.imports_needed.add(("mindspore", "mindspore"))

    return hook


_cuda_available = _from_device_target('{target} == "GPU"')
_accelerator_available = _from_device_target('{target} != "CPU"')
_current_accelerator = _from_device_target("{target}.lower()")


def _is_device(expr, source, method) -> bool:
    qualified = method.qualified(source)
    if qualified is not None and qualified.startswith("torch.device"):
        return True
    if isinstance(expr, cst.SimpleString):
        return is_device_string(expr)
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
    parts = chain_parts(expr)
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
                  Example('device = torch.device("cpu")\nresult = x.to(device) * 2', inputs=_X),
                  Example('device = torch.device("cpu", 0)\nlayer = nn.Linear(3, 2).to(device)\nresult = layer(x)',
                          inputs=_X, notes="index")),
    ),
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
            notes="the device target's name, an inert device string like torch.device's",
            examples=(Example("device = torch.accelerator.current_accelerator()",
                              'device = mindspore.get_context("device_target").lower()'),
                      Example('device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() '
                              'else torch.device("cpu")\nlayer = nn.Linear(3, 2).to(device)\nresult = layer(x)',
                              inputs=_X))),
    # the harness replays torch's draws to MindSpore, which would make any seed look right: proven by a test
    # that runs the converted code on its own (same seed, same draws and weights; another seed, other draws)
    ApiRule("torch.manual_seed", "mindspore.set_seed", signature="seed",
            proven_by=("tests/test_seed_rules.py::test_manual_seed_repeats_the_draws_as_in_torch",),
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
