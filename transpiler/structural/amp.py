"""Automatic mixed precision the way MindSpore documents it.

torch switches precision per operator inside an ``autocast`` context and
scales the loss with a ``GradScaler``; MindSpore sets mixed precision on the
network and scales the loss with a ``mindspore.amp`` loss scaler:

    with torch.autocast("cuda", enabled=amp):     model = mindspore.amp.auto_mixed_precision(
        loss = criterion(model(x), y)                 model, "auto" if amp else "O0", dtype=mindspore.float16)
    scaler.scale(loss).backward()                 def forward_fn(x, y):
    scaler.unscale_(optimizer)                        loss = criterion(model(x), y)
    clip_grad_norm_(model.parameters(), 1.0)          return scaler.scale(loss), loss
    scaler.step(optimizer)                        ...
    scaler.update()                               (_, loss), grads = grad_fn(x, y)
                                                  grads = scaler.unscale(grads)
                                                  grads = ops.clip_by_global_norm(grads, 1.0)
                                                  grads_finite = mindspore.amp.all_finite(grads)
                                                  if grads_finite:
                                                      optimizer(grads)
                                                  scaler.adjust(grads_finite)

``auto_mixed_precision(..., "auto")`` casts by operator lists, as autocast
does (white list: convolutions and matrix products in lower precision; black
list: norms, softmax, losses, exp/log ... in float32). The autocast context
itself becomes ``contextlib.nullcontext()`` (or is unwrapped), so every place
it is entered keeps working. This module reads the autocast settings and
builds the network and step statements; ``training_loop.py`` places them.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transpiler.engine import code_of, keyword_arg, literal_value
from transpiler.structural.provenance import AUTOCAST, AUTOCASTS, NULLCONTEXT

_DTYPES = {"float16", "half", "bfloat16", "float32", "float"}
_AMP_ON, _AMP_OFF = "auto", "O0"


@dataclass
class Autocast:
    """The settings of one autocast context: when it is on, and its dtype."""

    call: cst.Call  # torch.autocast(...) as written
    level: cst.BaseExpression  # "auto", "O0", or a conditional between them
    dtype: cst.BaseExpression | None  # the lower-precision dtype as written (None: torch's default)
    device_type: cst.BaseExpression | None


def autocast_of(expr: cst.BaseExpression, analysis, provenance) -> Autocast | None:
    """The autocast settings of a with-item (``torch.autocast(...)`` or a variable holding one)."""
    if isinstance(expr, cst.Call) and analysis.qualified(expr.func) in AUTOCASTS:
        return _settings(expr, analysis, None)
    if isinstance(expr, (cst.Name, cst.Attribute)):
        origin = provenance.origin(expr)
        if origin is None or origin.kind != AUTOCAST or origin.call is None:
            return None
        condition = _disabled_when(expr, origin.call, provenance)
        return _settings(origin.call, analysis, condition)
    return None


def _disabled_when(expr, call: cst.Call, provenance):
    """``ctx = nullcontext() if C else torch.autocast(...)``: (C, True) means off when C holds."""
    for value in provenance.values_of(expr) or ():
        if isinstance(value, cst.IfExp):
            if value.orelse is call:
                return value.test, True
            if value.body is call:
                return value.test, False
    return None


def _settings(call: cst.Call, analysis, condition) -> Autocast:
    qualified = analysis.qualified(call.func) or ""
    if qualified.startswith(("torch.cuda.amp.", "torch.cpu.amp.")):
        order = ["enabled", "dtype", "cache_enabled"]
        device_type = cst.SimpleString('"cuda"') if ".cuda." in qualified else cst.SimpleString('"cpu"')
    else:
        order = ["device_type", "dtype", "enabled", "cache_enabled"]
        device_type = None
    values: dict[str, cst.BaseExpression] = {}
    positional = [a.value for a in call.args if a.keyword is None]
    for name, value in zip(order, positional):
        values[name] = value
    for arg in call.args:
        if arg.keyword is not None:
            values[arg.keyword.value] = arg.value
    device_type = values.get("device_type", device_type)
    level = _level(values.get("enabled"), condition)
    return Autocast(call, level, values.get("dtype"), device_type)


def _level(enabled, condition) -> cst.BaseExpression:
    on, off = cst.SimpleString(f'"{_AMP_ON}"'), cst.SimpleString(f'"{_AMP_OFF}"')
    level: cst.BaseExpression = on
    if enabled is not None:
        try:
            value = literal_value(enabled)
            level = on if value else off
        except (ValueError, SyntaxError):
            level = cst.IfExp(test=_parenthesized(enabled), body=on, orelse=off)
    if condition is not None:
        test, off_when_true = condition
        if isinstance(level, cst.SimpleString) and level.value == f'"{_AMP_OFF}"':
            return level
        test = _parenthesized(test)
        if off_when_true:
            level = cst.IfExp(test=test, body=off, orelse=_parenthesized(level))
        else:
            level = cst.IfExp(test=test, body=_parenthesized(level), orelse=off)
    return level


def _parenthesized(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.Integer)) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def is_off(autocast: Autocast) -> bool:
    return isinstance(autocast.level, cst.SimpleString) and autocast.level.value == f'"{_AMP_OFF}"'


def dtype_expression(autocast: Autocast, ctx, convert) -> cst.BaseExpression:
    """The MindSpore dtype: autocast's own, else torch's default for its device (float16 on cuda, bfloat16 on cpu)."""
    if autocast.dtype is not None:
        return convert(autocast.dtype)
    device = autocast.device_type
    if isinstance(device, cst.SimpleString) and device.evaluated_value == "cpu":
        return ctx.ref("mindspore.bfloat16")
    return ctx.ref("mindspore.float16")


def mixed_precision(cell: cst.BaseExpression, autocast: Autocast, ctx, convert) -> cst.SimpleStatementLine:
    """``cell = mindspore.amp.auto_mixed_precision(cell, level, dtype=...)``."""
    call = cst.Call(
        ctx.ref("mindspore.amp.auto_mixed_precision"),
        [cst.Arg(cell.deep_clone()), cst.Arg(autocast.level.deep_clone()),
         keyword_arg("dtype", dtype_expression(autocast, ctx, convert))],
    )
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cell.deep_clone())], call)])


def nullcontext_ref(ctx) -> cst.BaseExpression:
    """``nullcontext`` if the file imports it from contextlib, else ``contextlib.nullcontext``."""
    for local, binding in ctx.analysis.imports.items():
        if binding.qualified == "contextlib.nullcontext":
            return cst.Name(local)
    ctx.imports_needed.add(("contextlib", "contextlib"))
    return cst.Attribute(cst.Name("contextlib"), cst.Name("nullcontext"))


def is_nullcontext(expr: cst.BaseExpression, analysis) -> bool:
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    if isinstance(func, cst.Name):
        binding = analysis.imports.get(func.value)
        return binding is not None and binding.qualified == "contextlib.nullcontext"
    return code_of(func) == "contextlib.nullcontext"


def convert_dtype(expr: cst.BaseExpression, ctx) -> cst.BaseExpression:
    """A torch dtype written in the original (``torch.float16``) as MindSpore's; other expressions as they are
    (a variable holding a dtype holds a MindSpore dtype after conversion)."""
    qualified = ctx.analysis.qualified(expr) or ""
    if qualified.startswith("torch."):
        name = qualified.rsplit(".", 1)[-1]
        name = {"half": "float16", "float": "float32"}.get(name, name)
        if name in _DTYPES | {"float32"}:
            return ctx.ref(f"mindspore.{name}")
    return expr.deep_clone()

