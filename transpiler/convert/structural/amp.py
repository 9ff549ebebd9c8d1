"""Automatic mixed precision the way MindSpore documents it.

torch switches precision per operator inside an ``autocast`` context and
scales the loss with a ``GradScaler``; MindSpore sets mixed precision on the
network and scales the loss with a ``mindspore.amp`` loss scaler:

    with torch.autocast("cuda", enabled=amp):     if amp:
        loss = criterion(model(x), y)                 model = mindspore.amp.auto_mixed_precision(model, "auto", dtype=mindspore.float16)
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

from transpiler.convert.engine import code_of, keyword_arg, literal_value
from transpiler.convert.structural.provenance import AUTOCAST, AUTOCASTS, NULLCONTEXT

_DTYPES = {"float16", "half", "bfloat16", "float32", "float"}
_AMP_ON = "auto"


@dataclass
class Autocast:
    """The settings of one autocast context: when it is on, and its dtype."""

    call: cst.Call  # torch.autocast(...) as written
    condition: cst.BaseExpression | None  # when it is on (None: always; a literal False: never)
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
    return Autocast(call, _when_on(values.get("enabled"), condition), values.get("dtype"), device_type)


def _when_on(enabled, condition) -> cst.BaseExpression | None:
    """The condition under which the context casts: its ``enabled`` and the branch of
    ``nullcontext() if C else autocast(...)`` it sits in."""
    parts: list[cst.BaseExpression] = []
    if enabled is not None:
        try:
            if not literal_value(enabled):
                return cst.Name("False")
        except (ValueError, SyntaxError):
            parts.append(enabled)
    if condition is not None:
        test, off_when_true = condition
        parts.append(_negated(test) if off_when_true else test)
    if not parts:
        return None
    return _conjunction(parts)


def _negated(test: cst.BaseExpression) -> cst.BaseExpression:
    """``a != b`` for ``a == b`` (and back), else ``not (test)``."""
    flips = {cst.Equal: cst.NotEqual, cst.NotEqual: cst.Equal, cst.In: cst.NotIn, cst.NotIn: cst.In}
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        operator = test.comparisons[0].operator
        flipped = flips.get(type(operator))
        if flipped is not None:
            target = test.comparisons[0].with_changes(operator=flipped())
            return test.with_changes(comparisons=[target], lpar=[], rpar=[])
    return cst.UnaryOperation(cst.Not(), _parenthesized(test))


def _conjunction(parts: list[cst.BaseExpression]) -> cst.BaseExpression:
    result = _parenthesized(parts[0]) if len(parts) > 1 else parts[0]
    for part in parts[1:]:
        result = cst.BooleanOperation(result, cst.And(), _parenthesized(part))
    return result


def _parenthesized(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript, cst.SimpleString, cst.Integer)) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def is_off(autocast: Autocast) -> bool:
    return isinstance(autocast.condition, cst.Name) and autocast.condition.value == "False"


def dtype_expression(autocast: Autocast, ctx, convert) -> cst.BaseExpression:
    """The MindSpore dtype: autocast's own, else torch's default for its device (float16 on cuda, bfloat16 on cpu)."""
    if autocast.dtype is not None:
        return convert(autocast.dtype)
    device = autocast.device_type
    if isinstance(device, cst.SimpleString) and device.evaluated_value == "cpu":
        return ctx.ref("mindspore.bfloat16")
    return ctx.ref("mindspore.float16")


def mixed_precision(cell: cst.BaseExpression, autocast: Autocast, ctx, convert) -> cst.BaseStatement:
    """``cell = mindspore.amp.auto_mixed_precision(cell, "auto", dtype=...)``, under the context's
    condition; a dtype chosen at run time must be a lower precision, as torch's autocast requires
    (it disables itself for others)."""
    dtype = dtype_expression(autocast, ctx, convert)
    call = cst.Call(
        ctx.ref("mindspore.amp.auto_mixed_precision"),
        [cst.Arg(cell.deep_clone()), cst.Arg(cst.SimpleString(f'"{_AMP_ON}"')), keyword_arg("dtype", dtype)],
    )
    assign = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cell.deep_clone())], call)])
    parts = [autocast.condition] if autocast.condition is not None else []
    if not _is_dtype_literal(dtype, ctx):
        lower = cst.Tuple([cst.Element(ctx.ref("mindspore.float16")), cst.Element(ctx.ref("mindspore.bfloat16"))])
        parts.append(cst.Comparison(dtype.deep_clone(), [cst.ComparisonTarget(cst.In(), lower)]))
    if not parts:
        return assign
    return cst.If(test=_conjunction(parts), body=cst.IndentedBlock([assign]))


def _is_dtype_literal(expr: cst.BaseExpression, ctx) -> bool:
    return code_of(expr).rsplit(".", 1)[-1] in ("float16", "bfloat16") and isinstance(expr, cst.Attribute)


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

