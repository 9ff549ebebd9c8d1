"""The things around a training loop: the device runtime (torch.cuda.*),
and single-process data-parallel wrappers.

- memory and stream calls map to ``mindspore.runtime`` (same names);
- seeding the GPU generators is seeding MindSpore (``mindspore.set_seed``
  seeds every device);
- ``nn.DataParallel(model)`` returns the model: one process drives every
  device in torch's DataParallel; MindSpore runs data parallelism with one
  process per device (``mindspore.communication``), so in one process the model
  is the whole program (``model.module`` reads become ``model``,
  transpiler/convert/structural/attributes.py);
- ``torch.cuda.OutOfMemoryError`` has no MindSpore class (device memory errors
  are RuntimeErrors): ``except`` clauses catch Python's ``MemoryError``, so
  an out-of-memory on the device is not swallowed by the handler.

Queries code asks once, often at module level, to choose a branch (a dtype, a
device, a code path) get the answer the converted code's own run has:

- ``torch.cuda.is_bf16_supported()``, ``torch.backends.cudnn.is_available()``:
  whether MindSpore runs on a GPU (as ``torch.cuda.is_available()``,
  rewrite_rules/runtime/devices.py); ``torch.cuda.device_count()``: MindSpore's
  GPU count there, 0 elsewhere (torch's answer without CUDA);
  ``torch.backends.mps.is_available()`` / ``is_built()``: False (MindSpore has
  no Metal backend);
- ``torch.get_default_dtype()``: ``mindspore.float32``, MindSpore's float dtype;
  setting float32 as the default (``set_default_dtype``, ``set_default_tensor_type``)
  changes nothing there and is removed, another default is marked;
- ``torch.cuda.current_device()``: ``mindspore.get_current_device().device_id``;
  which attention kernels torch may use (``torch.backends.cuda.enable_flash_sdp``
  ...) is no setting of MindSpore's: removed; ``torch.set_printoptions``:
  NumPy's, through which MindSpore prints tensors;
- ``torch.__version__``: the torch release the converted code follows (2.13.0,
  the release the rules are proven against), so version checks take torch 2.x's
  branch; comparisons of it fold to their answer
  (transpiler/convert/structural/feature_checks.py).

Backend flags (``torch.backends.cudnn.benchmark = True`` ...) are statements,
handled in transpiler/convert/structural/surroundings.py.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.api import ApiRule, AttributeRule, Example, Unconvertible, literal_value
from rewrite_rules.runtime.devices import on_gpu

# torch.__version__ in the converted code: the torch release the rules are proven against
TORCH_VERSION = "2.13.0"


def _first_argument(call, ctx):
    model = call.get("model")
    if model is None:
        raise Unconvertible("the wrapped model is not given")
    call.result = model
    ctx.converted(call.source, call.rule.torch, f"{call.rule.torch}(model) -> model: {call.rule.notes}")


def _deterministic(call, ctx):
    if call.literal("warn_only", False) is not False:
        raise Unconvertible("warn_only=True has no MindSpore counterpart")
    call.remove("warn_only")


def _bf16_supported(call, ctx):
    """Also torch.backends.cudnn.is_available(), which takes no argument."""
    if call.literal("including_emulation", True) is not True:
        raise Unconvertible("including_emulation=False asks for the GPU's native bfloat16 units, which MindSpore "
                            "does not report")
    call.result = on_gpu(ctx)


def _gpu_count(call, ctx):
    # MindSpore's GPU query raises where there is no GPU; torch's count is 0 there
    count = cst.Call(ctx.ref("mindspore.device_context.gpu.device_count"), [])
    call.result = cst.IfExp(test=on_gpu(ctx), body=count, orelse=cst.Integer("0"),
                            lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _answer(value: str):
    def hook(call, ctx):
        call.result = ctx.ref(value) if value.startswith("mindspore.") else cst.parse_expression(value)

    return hook


def _current_device(call, ctx):
    call.result = cst.Attribute(cst.Call(ctx.ref("mindspore.get_current_device"), []), cst.Name("device_id"))


_FLOAT32 = frozenset({"torch.float32", "torch.float", "torch.FloatTensor", "torch.cuda.FloatTensor"})


def _default_float32(call, ctx):
    """torch.set_default_dtype(torch.float32) / set_default_tensor_type(torch.FloatTensor):
    MindSpore's default already (its device is set globally); any other default is marked."""
    name = call.rule.params[0].name
    value = call.get(name)
    source = call.source.args[0].value if call.source is not None and len(call.source.args) == 1 else None
    qualified = ctx.analysis.qualified(source) if source is not None else None
    text = literal_value(value) if isinstance(value, cst.SimpleString) else None
    if qualified not in _FLOAT32 and text not in _FLOAT32:
        raise Unconvertible("MindSpore has no settable default dtype: only float32, its own, converts")
    call.result = cst.Name("None")  # a statement left with nothing to do is removed


# torch.set_printoptions's profiles (torch/_tensor_str.py)
_PRINT_PROFILES = {"default": {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80},
                   "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
                   "full": {"precision": 4, "threshold": "float('inf')", "edgeitems": 3, "linewidth": 80}}


def _print_options(call, ctx):
    """MindSpore prints a tensor through NumPy, under NumPy's print options."""
    try:
        profile = call.literal("profile")
        sci_mode = call.literal("sci_mode")
    except ValueError as exc:
        raise Unconvertible(f"{exc}: the options must be known to write NumPy's") from None
    if sci_mode is True:
        raise Unconvertible("sci_mode=True: NumPy has no forced scientific notation")
    values = {name: str(value) for name, value in _PRINT_PROFILES.get(profile, {}).items()}
    for name in ("precision", "threshold", "edgeitems", "linewidth"):
        if call.has(name):
            values[name] = call.get(name)
    if sci_mode is False:
        values["suppress"] = "True"
    args = [cst.Arg(cst.parse_expression(v) if isinstance(v, str) else v, keyword=cst.Name(k),
                    equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
            for k, v in values.items()]
    call.result = cst.Call(ctx.ref("numpy.set_printoptions"), args)


def _runs(statement: str, converted: str) -> Example:
    """An execution case for a call that returns nothing: both sides run it and return None."""
    return Example(f"result = {statement} is None", f"result = {converted} is None", inputs={})


def _returns_none(statement: str, torch_error: str) -> Example:
    """A CUDA-only call torch cannot run here: torch documents it to return None and
    change no value, so the converted call must give None and leave the values alone."""
    return Example(f"y = x * 2\nresult = ({statement}, y)", inputs={"x": "randn(3)"},
                   torch_reference="y = x * 2\nresult = (None, y)", notes=torch_error)


_DATA_PARALLEL_NOTES = ("one process: the model itself (MindSpore data parallelism runs one process per device "
                        "with mindspore.communication)")

_GPU = 'mindspore.get_context("device_target") == "GPU"'

RULES = [
    ApiRule("torch.cuda.is_bf16_supported", None, signature="including_emulation=True", hook=_bf16_supported,
            notes="whether MindSpore runs on a GPU (bfloat16 needs CUDA in torch; with emulation, any CUDA device)",
            examples=(Example("ok = torch.cuda.is_bf16_supported()", f"ok = {_GPU}"),
                      Example("dtype = 'bfloat16' if torch.cuda.is_available() and torch.cuda.is_bf16_supported() "
                              "else 'float16'", f'dtype = (\n    "bfloat16"\n    if {_GPU}\n    and {_GPU}\n'
                                                '    else "float16"\n)'),
                      # both sides run on CPU here: False
                      Example("result = torch.cuda.is_bf16_supported()", inputs={}),
                      Example("result = torch.cuda.is_bf16_supported(including_emulation=False)",
                              marked="including_emulation=False"))),
    ApiRule("torch.cuda.device_count", None, signature="", hook=_gpu_count,
            notes="MindSpore's GPU count on a GPU, 0 elsewhere (as torch without CUDA)",
            examples=(Example("n = torch.cuda.device_count()",
                              f"n = (\n    mindspore.device_context.gpu.device_count()\n    if {_GPU}\n    else 0\n)"),
                      Example("result = torch.cuda.device_count()", inputs={}),
                      Example("result = torch.cuda.device_count() * 2 + 1", inputs={}, notes="inside an expression"))),
    ApiRule("torch.backends.cudnn.is_available", None, signature="", hook=_bf16_supported,
            notes="cuDNN runs MindSpore's GPU kernels: whether MindSpore runs on a GPU",
            examples=(Example("ok = torch.backends.cudnn.is_available()", f"ok = {_GPU}"),
                      Example("result = torch.backends.cudnn.is_available()", inputs={}))),
    *(ApiRule(f"torch.backends.mps.{name}", None, signature="", hook=_answer("False"),
              notes="MindSpore has no Metal (MPS) backend",
              examples=(Example(f"ok = torch.backends.mps.{name}()", "ok = False"),
                        Example(f'result = "mps" if torch.backends.mps.{name}() else "cpu"', inputs={})))
      for name in ("is_available", "is_built")),
    ApiRule("torch.get_default_dtype", None, signature="", hook=_answer("mindspore.float32"),
            notes="MindSpore's floating point dtype is float32 (it has no settable default)",
            examples=(Example("dtype = torch.get_default_dtype()", "dtype = mindspore.float32"),
                      Example("result = torch.zeros(2, dtype=torch.get_default_dtype())", inputs={}))),
    AttributeRule("torch.__version__", f'"{TORCH_VERSION}"', aliases=("torch.version.__version__",),
                  reason="the torch release the converted code follows: version checks take torch 2.x's branch",
                  examples=(Example("v = torch.__version__", f'v = "{TORCH_VERSION}"'),
                            Example('result = [int(x) for x in torch.__version__.split(".")[:2]]', inputs={}),
                            Example("result = int(torch.__version__.split('.')[0]) >= 2", inputs={}),
                            Example('result = "new" if torch.__version__ >= "1.10" else "old"', inputs={}),
                            Example('result = torch.__version__ < "2.2"', inputs={},
                                    notes="compared as a version, as torch compares it (not as text)"),
                            Example("result = torch.__version__ >= (1, 10)", inputs={}, notes="with a tuple"),
                            Example('from packaging import version\n'
                                    'result = version.parse(torch.__version__) >= version.parse("1.8")', inputs={}),
                            Example("result = torch.version.__version__.startswith('2.')", inputs={}))),
    # torch.meshgrid took indexing= from 1.10: code asks its keyword defaults (monai's SwinUNETR)
    AttributeRule("torch.meshgrid.__kwdefaults__", "{'indexing': None}",
                  reason="torch 2.x's meshgrid keyword defaults: feature checks take the branch that passes indexing=",
                  examples=(Example("defaults = torch.meshgrid.__kwdefaults__", 'defaults = {"indexing": None}'),
                            Example("mesh_args = torch.meshgrid.__kwdefaults__\n"
                                    "if mesh_args is not None:\n"
                                    "    result = torch.stack(torch.meshgrid(torch.arange(2), torch.arange(3), indexing='ij'))\n"
                                    "else:\n"
                                    "    result = torch.stack(torch.meshgrid(torch.arange(2), torch.arange(3)))",
                                    inputs={}))),
    ApiRule("torch.cuda.current_device", None, signature="", hook=_current_device,
            notes="the index of MindSpore's current device",
            examples=(Example("index = torch.cuda.current_device()", "index = mindspore.get_current_device().device_id"),
                      Example("result = torch.cuda.current_device()", inputs={}, torch_reference="result = 0",
                              notes="torch cannot run it here: AssertionError: Torch not compiled with CUDA enabled"))),
    ApiRule("torch.cuda.memory_reserved", "mindspore.runtime.memory_reserved", signature="device=None",
            examples=(Example("result = torch.cuda.memory_reserved()", "result = mindspore.runtime.memory_reserved()",
                              inputs={}),)),
    ApiRule("torch.cuda.max_memory_reserved", "mindspore.runtime.max_memory_reserved", signature="device=None",
            examples=(Example("result = torch.cuda.max_memory_reserved()",
                              "result = mindspore.runtime.max_memory_reserved()", inputs={}),)),
    # which attention kernels torch may use: MindSpore chooses its own
    ApiRule("torch.backends.cuda.enable_flash_sdp", None, signature="enabled", no_op=True,
            aliases=("torch.backends.cuda.enable_mem_efficient_sdp", "torch.backends.cuda.enable_math_sdp",
                     "torch.backends.cuda.enable_cudnn_sdp"),
            notes="no effect in MindSpore, which chooses its attention kernels itself",
            examples=(Example("torch.backends.cuda.enable_flash_sdp(True)\nresult = x * 2", "result = x * 2",
                              inputs={"x": "randn(3)"}),
                      Example("torch.backends.cuda.enable_mem_efficient_sdp(False)\ny = x", "y = x"))),
    ApiRule("torch.set_default_dtype", None, signature="d", hook=_default_float32,
            notes="float32 is MindSpore's default already; MindSpore has no settable default dtype",
            examples=(Example("torch.set_default_dtype(torch.float32)\nresult = torch.ones(2)", "result = ops.ones(2)",
                              inputs={}),
                      Example("torch.set_default_dtype(torch.float64)", marked="no settable default dtype"))),
    ApiRule("torch.set_default_tensor_type", None, signature="t", hook=_default_float32,
            notes="a float32 tensor type is MindSpore's default already (the device is set globally)",
            examples=(Example("torch.set_default_tensor_type('torch.cuda.FloatTensor')\ny = x", "y = x"),
                      Example("torch.set_default_tensor_type(torch.FloatTensor)\nresult = torch.ones(2)",
                              "result = ops.ones(2)", inputs={}),
                      Example("torch.set_default_tensor_type(torch.DoubleTensor)", marked="no settable default dtype"))),
    ApiRule("torch.set_printoptions", None,
            signature="precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None",
            hook=_print_options, notes="MindSpore prints tensors through NumPy: NumPy's print options",
            examples=(Example("torch.set_printoptions(linewidth=320, precision=5, profile='long')",
                              "np.set_printoptions(precision=5, linewidth=320)"),
                      Example("torch.set_printoptions(sci_mode=False)", "np.set_printoptions(suppress=True)"),
                      Example("torch.set_printoptions(profile='full')",
                              'np.set_printoptions(precision=4, threshold=float("inf"), edgeitems=3, linewidth=80)'),
                      Example("torch.set_printoptions(sci_mode=True)", marked="sci_mode=True"),
                      # NumPy's own defaults: the case leaves the worker's NumPy as it found it
                      Example("result = torch.set_printoptions(precision=8, threshold=1000, linewidth=75) is None",
                              inputs={}))),
    ApiRule("torch.cuda.empty_cache", "mindspore.runtime.empty_cache", signature="", aliases=("torch.mps.empty_cache",),
            examples=(_runs("torch.cuda.empty_cache()", "mindspore.runtime.empty_cache()"),)),
    # torch without CUDA cannot run these two: compared with what torch documents (None, values untouched)
    ApiRule("torch.cuda.synchronize", "mindspore.runtime.synchronize", signature="device=None",
            aliases=("torch.mps.synchronize",), notes="waits for the current device's streams",
            examples=(Example("torch.cuda.synchronize()", "mindspore.runtime.synchronize()"),
                      Example("torch.mps.synchronize()", "mindspore.runtime.synchronize()"),
                      _returns_none("torch.cuda.synchronize()",
                                    "torch cannot run it here: AssertionError: Torch not compiled with CUDA enabled"))),
    ApiRule("torch.cuda.reset_peak_memory_stats", "mindspore.runtime.reset_peak_memory_stats",
            signature="device=None",
            examples=(Example("torch.cuda.reset_peak_memory_stats()", "mindspore.runtime.reset_peak_memory_stats()"),
                      _returns_none("torch.cuda.reset_peak_memory_stats()",
                                    "torch cannot run it here: AttributeError: module 'torch._C' has no attribute "
                                    "'_cuda_resetPeakMemoryStats'"))),
    ApiRule("torch.cuda.memory_allocated", "mindspore.runtime.memory_allocated", signature="device=None",
            examples=(Example("result = torch.cuda.memory_allocated()",
                              "result = mindspore.runtime.memory_allocated()", inputs={}),)),
    ApiRule("torch.cuda.max_memory_allocated", "mindspore.runtime.max_memory_allocated", signature="device=None",
            examples=(Example("result = torch.cuda.max_memory_allocated()",
                              "result = mindspore.runtime.max_memory_allocated()", inputs={}),)),
    ApiRule("torch.cuda.manual_seed_all", "mindspore.set_seed", signature="seed",
            notes="mindspore.set_seed seeds every device",
            examples=(_runs("torch.cuda.manual_seed_all(3)", "mindspore.set_seed(3)"),)),
    ApiRule("torch.cuda.manual_seed", "mindspore.set_seed", signature="seed",
            notes="mindspore.set_seed seeds every device",
            examples=(_runs("torch.cuda.manual_seed(3)", "mindspore.set_seed(3)"),)),
    ApiRule("torch.use_deterministic_algorithms", "mindspore.set_deterministic", signature="mode, *, warn_only=False",
            hook=_deterministic, positional=1,
            examples=(_runs("torch.use_deterministic_algorithms(True)", "mindspore.set_deterministic(True)"),
                      Example("torch.use_deterministic_algorithms(True, warn_only=True)", marked="warn_only"))),
    ApiRule("torch.nn.DataParallel", None, signature="model, device_ids=None, output_device=None, dim=0",
            hook=_first_argument, aliases=("torch.nn.parallel.DataParallel",
                                           "torch.nn.parallel.data_parallel.DataParallel"),
            notes=_DATA_PARALLEL_NOTES,
            examples=(Example("net = nn.DataParallel(model, device_ids=[0, 1])", "net = model"),
                      # without GPUs torch's DataParallel runs the module itself
                      Example("layer = nn.Linear(3, 2)\nresult = nn.DataParallel(layer)(x)",
                              inputs={"x": "randn(4, 3)"}))),
    AttributeRule("torch.cuda.OutOfMemoryError", "MemoryError",
                  reason="MindSpore reports device out-of-memory as RuntimeError: the handler catches only "
                         "Python's MemoryError",
                  aliases=("torch.OutOfMemoryError",),
                  examples=(Example("try:\n    y = model(x)\nexcept torch.cuda.OutOfMemoryError:\n    y = None",
                                    "try:\n    y = model(x)\nexcept MemoryError:\n    y = None"),
                            Example("try:\n    result = x * 2\nexcept torch.cuda.OutOfMemoryError:\n    result = None",
                                    inputs={"x": "randn(3)"}))),
]
