"""Device handling: remember which variables hold a device, and drop the
statements that did nothing but move a model to one (``model.to(device)``)."""

from __future__ import annotations

import libcst as cst

from transpiler.convert.engine import code_of

_DEVICE_STRINGS = ("cuda", "cpu", "mps", "xpu")


def is_device_string(expr: cst.BaseExpression) -> bool:
    """A string literal naming a torch device: "cuda", "cpu", "cuda:1" ..."""
    if not isinstance(expr, cst.SimpleString):
        return False
    text = expr.evaluated_value
    return isinstance(text, str) and text.split(":", 1)[0] in _DEVICE_STRINGS


def device_reads_used_as_strings(node: cst.Comparison | cst.Call) -> list[int]:
    """The ``.device`` reads whose value the code uses as a string, which a
    torch.device is not: ``"cuda" in args.device``, ``args.device.split(":")``.
    They hold a device's name already (an argparse option): left as written."""
    if isinstance(node, cst.Comparison):
        reads = [t.comparator for t in node.comparisons if isinstance(t.operator, (cst.In, cst.NotIn))]
    else:
        reads = [node.func.value] if isinstance(node.func, cst.Attribute) else []
    return [id(read) for read in reads if isinstance(read, cst.Attribute) and read.attr.value == "device"]


def record_known_kinds(node: cst.Assign, ctx) -> None:
    kind = _kind_of(node.value, ctx)
    if kind is None:
        return
    for target in node.targets:
        if isinstance(target.target, (cst.Name, cst.Attribute)):
            ctx.known_kinds[code_of(target.target)] = kind


def _kind_of(value: cst.BaseExpression, ctx) -> str | None:
    if isinstance(value, cst.Call):
        qualified = ctx.analysis.qualified(value.func) or ""
        if qualified == "torch.device":
            return "device"
        if qualified.startswith("torch.optim.") and not qualified.startswith("torch.optim.lr_scheduler"):
            return "optimizer"
        if qualified.startswith("torch.optim.lr_scheduler."):
            return "scheduler"
        if qualified.startswith("torch.nn.ReflectionPad"):
            return "reflection pad"
        if qualified in ("torch.nn.Parameter", "torch.nn.parameter.Parameter"):
            return "parameter"
    if is_device_string(value):
        return "device"
    return None


def _converted_call(value: cst.BaseExpression) -> bool:
    """A call, or a tuple of values some of which are calls (``x, y = x.to(device), y.to(device)``)."""
    if isinstance(value, cst.Tuple):
        return any(isinstance(e.value, cst.Call) for e in value.elements)
    return isinstance(value, cst.Call)


def is_noop_statement(original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine) -> bool:
    if len(original.body) != len(updated.body):
        return False
    for before, after in zip(original.body, updated.body):
        if isinstance(before, cst.Expr) and isinstance(after, cst.Expr):
            bare = (cst.Name, cst.Attribute, cst.SimpleString, cst.ConcatenatedString)
            if not (isinstance(before.value, cst.Call) and isinstance(after.value, bare)):
                return False
        elif isinstance(before, cst.Assign) and isinstance(after, cst.Assign):
            if not (
                _converted_call(before.value)
                and len(after.targets) == 1
                and type(after.targets[0].target) is type(after.value)  # nodes of two types never read the same
                and code_of(after.targets[0].target) == code_of(after.value)
            ):
                return False
        else:
            return False
    return True
