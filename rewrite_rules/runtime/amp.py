"""Automatic mixed precision: torch.autocast and GradScaler.

MindSpore sets mixed precision on the network (``mindspore.amp.auto_mixed_precision``,
placed by the training-step rewrite where the network trains) and scales the
loss with ``mindspore.amp.DynamicLossScaler`` inside the step
(transpiler/convert/structural/amp.py). What is left for the rules:

- ``with torch.autocast(...):`` is unwrapped (transpiler/convert/structural/grad_mode.py),
  also where it is entered through a module-level alias (RAFT's ``autocast =
  torch.cuda.amp.autocast``, transpiler/convert/names.py: graph mode compiles no
  ``nullcontext()`` in a construct); an autocast context used as a value
  (``ctx = nullcontext() if cpu else torch.autocast(...)``) becomes
  ``contextlib.nullcontext()``, so every ``with ctx:`` keeps working;
- ``GradScaler(...)`` becomes the loss scaler with torch's schedule: start at
  ``init_scale``, multiply by ``growth_factor`` after ``growth_interval``
  finite steps, divide by it on overflow (torch's ``backoff_factor`` must be
  its inverse, which it is by default). A disabled scaler scales by 1.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.api import (SCALER, ApiRule, Example, MethodRule, Unconvertible, bind, code_of, keyword_arg,
                               nullcontext, receiver_origin)

_SCALER = "torch.amp.GradScaler"
_AUTOCAST_NOTES = (
    "MindSpore sets mixed precision on the network: mindspore.amp.auto_mixed_precision(net, 'auto', dtype) where "
    "the network trains (the operator lists of 'auto' are autocast's); the context becomes contextlib.nullcontext()"
)


def _autocast(call, ctx):
    call.result = cst.Call(nullcontext(ctx), [])
    ctx.warn(call.source, "torch.autocast", "autocast context -> contextlib.nullcontext(): mixed precision is set on "
                                            "the network where it trains (mindspore.amp.auto_mixed_precision)")


def _literal(call, name):
    try:
        return True, call.literal(name)
    except (ValueError, SyntaxError):
        return False, None


def _scaler(call, ctx):
    known_growth, growth = _literal(call, "growth_factor")
    known_backoff, backoff = _literal(call, "backoff_factor")
    if not (known_growth and known_backoff) or abs(growth * backoff - 1.0) > 1e-12:
        raise Unconvertible("mindspore.amp.DynamicLossScaler divides the scale by the growth factor on overflow: "
                            "growth_factor and backoff_factor must be literals with growth_factor * backoff_factor == 1")
    factor = cst.Integer(str(int(growth))) if float(growth).is_integer() else cst.Float(repr(float(growth)))
    dynamic = cst.Call(
        ctx.ref("mindspore.amp.DynamicLossScaler"),
        [
            keyword_arg("scale_value", call.get("init_scale", "65536.0")),
            keyword_arg("scale_factor", factor),
            keyword_arg("scale_window", call.get("growth_interval", "2000")),
        ],
    )
    static = cst.Call(ctx.ref("mindspore.amp.StaticLossScaler"), [keyword_arg("scale_value", cst.Float("1.0"))])
    known, enabled = _literal(call, "enabled")
    if known and not enabled:
        call.result = static
        return
    tests = [] if known else [_parenthesized(call.get("enabled"))]
    on_device = _device_condition(call, ctx)
    if on_device is not None:
        tests.append(on_device)
    if not tests:
        call.result = dynamic
        return
    test = tests[0] if len(tests) == 1 else cst.BooleanOperation(tests[0], cst.And(), _parenthesized(tests[1], or_only=True))
    call.result = cst.IfExp(test=test, body=dynamic, orelse=static)


def _parenthesized(test, or_only: bool = False):
    if isinstance(test, (cst.Name, cst.Attribute, cst.Call)) or test.lpar:
        return test
    if or_only and not (isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or)):
        return test
    return test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _device_condition(call, ctx):
    """When torch's scaler is on: a CUDA scaler (``torch.cuda.amp``, ``torch.amp`` for "cuda", its
    default device) disables itself where CUDA is not available, scaling by 1 (measured on torch
    2.13); a "cpu" scaler always scales. MindSpore's counterpart: scale off the CPU."""
    if _on_cpu(call):
        return None
    accelerator = f'{code_of(ctx.ref("mindspore.get_context"))}("device_target") != "CPU"'
    if call.rule.torch == "torch.cuda.amp.GradScaler" or not call.has("device") or _literal(call, "device")[0]:
        return cst.parse_expression(accelerator)  # a literal device other than the CPU
    return cst.parse_expression(f'{code_of(call.get("device"))} == "cpu" or {accelerator}')


def _on_cpu(call) -> bool:
    """The scaler is made for the CPU (so it always scales)."""
    if call.rule.torch == "torch.cpu.amp.GradScaler":
        return True
    if call.rule.torch == "torch.cuda.amp.GradScaler" or not call.has("device"):
        return False
    known, device = _literal(call, "device")
    return known and str(device).split(":")[0] == "cpu"


def _get_scale(call, ctx):
    origin = receiver_origin(call)
    if origin is None or origin.kind != SCALER:
        return call.call
    return cst.Call(cst.Attribute(cst.Attribute(call.receiver, cst.Name("scale_value")), cst.Name("item")), [])


def _constructor(call, ctx):
    """The GradScaler call of this file that made the receiver, bound to torch's signature."""
    origin = receiver_origin(call)
    if origin is None or origin.kind != SCALER or origin.call is None:
        return None
    rule = next((r for r in RULES if isinstance(r, ApiRule) and origin.qualified in (r.torch, *r.aliases)), None)
    if rule is None:
        return None  # converted output read again: a MindSpore scaler
    try:
        return bind(rule, origin.call, ctx)
    except Unconvertible:
        return None


def _always_dynamic(made) -> bool:
    """The conversion of ``made`` is a DynamicLossScaler on every device (not a StaticLossScaler(1.0))."""
    known, enabled = _literal(made, "enabled")
    return known and bool(enabled) and _on_cpu(made)


def _schedule_getter(attribute: str, torch_name: str, form):
    """``scaler.get_growth_factor()``-style reads of the schedule: from the DynamicLossScaler
    where the scaler always is one, else the value the constructor gave (which the scaler keeps:
    torch's setters are not converted)."""

    def hook(call, ctx):
        made = _constructor(call, ctx)
        if made is None:
            return call.call
        if _always_dynamic(made):
            return form(cst.Attribute(call.receiver, cst.Name(attribute)))
        known, value = _literal(made, torch_name)
        if not known:
            return call.call
        return cst.Integer(str(value)) if isinstance(value, int) else cst.Float(repr(float(value)))

    return hook


def _float(value):
    return cst.Call(cst.Name("float"), [cst.Arg(value)])


def _inverse(value):
    return cst.BinaryOperation(cst.Float("1.0"), cst.Divide(), value)


def _is_enabled(call, ctx):
    origin = receiver_origin(call)
    if origin is None or origin.kind != SCALER:
        return call.call
    dynamic = ctx.ref("mindspore.amp.DynamicLossScaler")
    return cst.Call(cst.Name("isinstance"), [cst.Arg(call.receiver), cst.Arg(dynamic)])


RULES = [
    ApiRule(
        "torch.autocast",
        None,
        signature="device_type=None, dtype=None, enabled=True, cache_enabled=None",
        hook=_autocast,
        aliases=("torch.amp.autocast", "torch.amp.autocast_mode.autocast"),
        # train_unet --amp, compared with torch at every logged step
        proven_by=("tests/training/test_training_scripts.py::test_training_script_trains_like_torch_at_every_step",),
        notes=_AUTOCAST_NOTES,
        examples=(
            Example('ctx = torch.autocast(device_type="cuda", dtype=torch.bfloat16)', "ctx = contextlib.nullcontext()"),
            Example('with torch.autocast("cuda"):\n    y = model(x)', "y = model(x)"),
        ),
    ),
    ApiRule(
        "torch.cuda.amp.autocast",
        None,
        signature="enabled=True, dtype=torch.float16, cache_enabled=True",
        hook=_autocast,
        aliases=("torch.cpu.amp.autocast",),
        proven_by=("tests/training/test_training_scripts.py::test_training_script_trains_like_torch_at_every_step",),  # train_classifier
        notes=_AUTOCAST_NOTES,
        examples=(Example("with torch.cuda.amp.autocast(enabled=use_amp):\n    y = model(x)", "y = model(x)"),),
    ),
    ApiRule(
        "torch.amp.GradScaler",
        "mindspore.amp.DynamicLossScaler",
        signature="device='cuda', init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, "
                  "enabled=True",
        hook=_scaler,
        aliases=("torch.amp.grad_scaler.GradScaler",),
        notes="mindspore.amp.DynamicLossScaler (for a CUDA scaler: off the CPU, as torch disables it where CUDA is "
              "not available; a disabled scaler: StaticLossScaler(1.0)); the step unscales the "
              "gradients and calls the optimizer only when mindspore.amp.all_finite(grads)",
        examples=(
            Example('scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)',
                    "scaler = mindspore.amp.DynamicLossScaler(\n    scale_value=1024.0, scale_factor=2, "
                    "scale_window=2000\n)"),
            Example('scaler = torch.amp.GradScaler("cuda", init_scale=1024.0)',
                    "scaler = (\n    mindspore.amp.DynamicLossScaler(\n        scale_value=1024.0, scale_factor=2, "
                    "scale_window=2000\n    )\n    if mindspore.get_context(\"device_target\") != \"CPU\"\n"
                    "    else mindspore.amp.StaticLossScaler(scale_value=1.0)\n)"),
            Example("scaler = torch.amp.GradScaler(growth_factor=4.0)", marked="growth_factor * backoff_factor"),
            # torch's scaler runs on CPU when asked for that device
            Example('scaler = torch.amp.GradScaler("cpu", init_scale=1024.0)\nresult = scaler.get_scale()', inputs={}),
            *(Example(f"scaler = torch.amp.GradScaler({args})\nresult = (scaler.scale(loss), scaler.get_scale())",
                      inputs={"loss": "tensor(2.5)"}, notes=notes)
              for args, notes in (('"cpu"', "cpu"), ('device="cpu", init_scale=2.0 ** 10', "cpu_init_scale"),
                                  ("", "cuda_unavailable"), ('"cuda", init_scale=8.0', "cuda_unavailable"),
                                  ('"cpu", enabled=False', "disabled"))),
            Example('device = "cpu"\nscaler = torch.amp.GradScaler(device)\nresult = scaler.scale(loss)',
                    inputs={"loss": "tensor(2.5)"}, notes="device_variable"),
            Example('device = "cuda"\nscaler = torch.amp.GradScaler(device)\nresult = scaler.scale(loss)',
                    inputs={"loss": "tensor(2.5)"}, notes="device_variable"),
        ),
    ),
    ApiRule(
        "torch.cuda.amp.GradScaler",
        "mindspore.amp.DynamicLossScaler",
        signature="init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True",
        hook=_scaler,
        proven_by=("tests/training/test_training_scripts.py::test_training_script_trains_like_torch_at_every_step",),  # train_unet --amp
        notes="mindspore.amp.DynamicLossScaler off the CPU (torch disables a CUDA scaler where CUDA is not "
              "available); a disabled scaler: StaticLossScaler(1.0)",
        examples=(
            Example("scaler = torch.cuda.amp.GradScaler(enabled=use_amp)",
                    "scaler = (\n    mindspore.amp.DynamicLossScaler(\n        scale_value=65536.0, scale_factor=2, "
                    "scale_window=2000\n    )\n    if use_amp and mindspore.get_context(\"device_target\") != \"CPU\"\n"
                    "    else mindspore.amp.StaticLossScaler(scale_value=1.0)\n)"),
            Example("scaler = torch.cuda.amp.GradScaler(enabled=False)",
                    "scaler = mindspore.amp.StaticLossScaler(scale_value=1.0)"),
            # torch disables a CUDA scaler where CUDA is not available: it scales by 1
            Example("scaler = torch.cuda.amp.GradScaler()\nresult = (scaler.scale(loss), scaler.get_scale())",
                    inputs={"loss": "tensor(2.5)"}, notes="cuda_unavailable"),
            Example("use_amp = True\nscaler = torch.cuda.amp.GradScaler(init_scale=1024.0, enabled=use_amp)\n"
                    "result = (scaler.scale(loss), scaler.get_scale())", inputs={"loss": "tensor(2.5)"},
                    notes="cuda_unavailable"),
        ),
    ),
    ApiRule(
        "torch.cpu.amp.GradScaler",
        "mindspore.amp.DynamicLossScaler",
        signature="init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True",
        hook=_scaler,
        notes="torch.amp.GradScaler(\"cpu\", ...) (torch's deprecated spelling): mindspore.amp.DynamicLossScaler; "
              "a disabled scaler: StaticLossScaler(1.0)",
        examples=(
            Example("scaler = torch.cpu.amp.GradScaler(init_scale=1024.0)",
                    "scaler = mindspore.amp.DynamicLossScaler(\n    scale_value=1024.0, scale_factor=2, "
                    "scale_window=2000\n)"),
            Example("scaler = torch.cpu.amp.GradScaler(init_scale=4.0)\nresult = (scaler.scale(loss), scaler.get_scale())",
                    inputs={"loss": "tensor(2.5)"}),
            Example("scaler = torch.cpu.amp.GradScaler(enabled=False)\nresult = (scaler.scale(loss), scaler.get_scale())",
                    inputs={"loss": "tensor(2.5)"}, notes="disabled"),
        ),
    ),
    MethodRule("is_enabled", hook=_is_enabled, arity=(0, 0), receiver="any", owner=_SCALER,
               notes="GradScaler.is_enabled() -> isinstance(scaler, mindspore.amp.DynamicLossScaler) (a disabled "
                     "scaler is a StaticLossScaler(1.0)) when the scaler is made in this file",
               examples=tuple(Example(f"scaler = {make}\nresult = scaler.is_enabled()", inputs={})
                              for make in ('torch.amp.GradScaler("cpu")', "torch.cuda.amp.GradScaler()",
                                           'torch.amp.GradScaler("cpu", enabled=False)'))),
    *(MethodRule(method, hook=_schedule_getter(attribute, name, form), arity=(0, 0), receiver="any", owner=_SCALER,
                 notes=f"GradScaler.{method}() -> {text} when the scaler is made in this file (a scaler that may be "
                       f"disabled: the constructor's {name})",
                 examples=(*(Example(f"scaler = {make}\nresult = scaler.{method}()", inputs={})
                             for make in ('torch.amp.GradScaler("cpu")', 'torch.cpu.amp.GradScaler(growth_interval=5)',
                                          'torch.amp.GradScaler("cpu", growth_factor=4.0, backoff_factor=0.25)')),
                           # a CUDA scaler is a StaticLossScaler on the CPU; torch's, disabled there, has no
                           # schedule: compared with what it gives where CUDA is available
                           Example(f"scaler = torch.cuda.amp.GradScaler(growth_interval=7)\nresult = scaler.{method}()",
                                   inputs={}, torch_reference=reference,
                                   notes=f"torch without CUDA: 'GradScaler' object has no attribute '_{name}'")))
      for method, attribute, name, form, text, reference in (
          ("get_growth_factor", "scale_factor", "growth_factor", _float, "float(scaler.scale_factor)", "result = 2.0"),
          ("get_backoff_factor", "scale_factor", "backoff_factor", _inverse, "1.0 / scaler.scale_factor",
           "result = 0.5"),
          ("get_growth_interval", "scale_window", "growth_interval", lambda v: v, "scaler.scale_window",
           "result = 7"))),
    MethodRule("get_scale", hook=_get_scale, arity=(0, 0), receiver="any", owner=_SCALER,
               notes="GradScaler.get_scale() -> scaler.scale_value.item() when the scaler is made in this file",
               examples=(Example('scaler = torch.amp.GradScaler("cpu", init_scale=256.0, growth_interval=10)\n'
                                 'result = scaler.get_scale()', inputs={}),)),
]

