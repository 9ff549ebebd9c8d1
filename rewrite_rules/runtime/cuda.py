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

Backend flags (``torch.backends.cudnn.benchmark = True`` ...) are statements,
handled in transpiler/convert/structural/runtime_flags.py.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.api import ApiRule, AttributeRule, Example, Unconvertible


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

RULES = [
    ApiRule("torch.cuda.empty_cache", "mindspore.runtime.empty_cache", signature="",
            examples=(_runs("torch.cuda.empty_cache()", "mindspore.runtime.empty_cache()"),)),
    # torch without CUDA cannot run these two: compared with what torch documents (None, values untouched)
    ApiRule("torch.cuda.synchronize", "mindspore.runtime.synchronize", signature="device=None",
            notes="waits for the current device's streams",
            examples=(Example("torch.cuda.synchronize()", "mindspore.runtime.synchronize()"),
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
