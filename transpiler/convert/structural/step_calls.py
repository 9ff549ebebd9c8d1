"""The statements a torch training step is made of, recognised one by one:

    loss.backward()                      backward
    scaler.scale(loss).backward()        backward through a GradScaler
    optimizer.step()                     step
    scaler.step(optimizer)               step through a GradScaler
    scaler.unscale_(optimizer)           unscale (AMP, before clipping)
    scaler.update()                      update of the loss scale
    optimizer.zero_grad(...)             zero_grad
    nn.utils.clip_grad_norm_(ps, c)      clip (also clip_grad_value_)

What an object is comes from where the file made it (``provenance``): a
``.step()`` is an optimizer step only when the receiver is known to be an
optimizer, a ``.scale()`` only when it is known to be a GradScaler.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transpiler.convert.engine import literal_value
from transpiler.convert.structural.provenance import OPTIMIZER, SCALER

CLIP_NORM = frozenset({"torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_norm_"})
CLIP_VALUE = frozenset({"torch.nn.utils.clip_grad_value_", "torch.nn.utils.clip_grad.clip_grad_value_"})
BACKWARD_API = "torch.Tensor.backward"


def single_call(statement: cst.CSTNode) -> tuple[cst.Call | None, cst.CSTNode | None]:
    """The call of a one-statement line ``f(...)`` or ``x = f(...)``."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None, None
    small = statement.body[0]
    if isinstance(small, (cst.Expr, cst.Assign)) and isinstance(small.value, cst.Call):
        return small.value, small
    return None, None


def method_statement(statement: cst.CSTNode, name: str) -> cst.Call | None:
    """The call of a statement ``receiver.name(...)``."""
    call, small = single_call(statement)
    if call is None or not isinstance(small, cst.Expr):
        return None
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == name:
        return call
    return None


@dataclass
class Backward:
    call: cst.Call  # the .backward() call
    loss: cst.BaseExpression  # what backward() differentiates (unscaled)
    scaler: cst.BaseExpression | None = None  # scaler in scaler.scale(loss).backward()


@dataclass
class Step:
    call: cst.Call
    optimizer: cst.BaseExpression
    scaler: cst.BaseExpression | None = None  # scaler in scaler.step(optimizer)


@dataclass
class Clip:
    kind: str  # "norm" or "value"
    limit: cst.BaseExpression  # max_norm / clip_value (original expression)


class StepCalls:
    """Recognises the calls of a training step, with the file's provenance."""

    def __init__(self, analysis, provenance):
        self.analysis = analysis
        self.provenance = provenance

    def is_optimizer(self, expr: cst.BaseExpression) -> bool:
        return self.provenance.kind(expr) == OPTIMIZER

    def is_scaler(self, expr: cst.BaseExpression) -> bool:
        return self.provenance.kind(expr) == SCALER

    def backward(self, statement) -> Backward | None:
        call = method_statement(statement, "backward")
        if call is None or (self.analysis.qualified(call.func) or "").startswith("torch."):
            return None  # torch.autograd.backward(...): a torch function, not a tensor's backward
        receiver = call.func.value
        if (
            isinstance(receiver, cst.Call)
            and isinstance(receiver.func, cst.Attribute)
            and receiver.func.attr.value == "scale"
            and len(receiver.args) == 1
            and self.is_scaler(receiver.func.value)
        ):
            return Backward(call, receiver.args[0].value, receiver.func.value)
        return Backward(call, receiver)

    def step(self, statement) -> Step | None:
        call = method_statement(statement, "step")
        if call is None:
            return None
        receiver = call.func.value
        if self.is_optimizer(receiver):
            return Step(call, receiver)
        if self.is_scaler(receiver) and len(call.args) == 1 and call.args[0].keyword is None:
            optimizer = call.args[0].value
            return Step(call, optimizer, receiver) if self.is_optimizer(optimizer) else None
        return None

    def zero_grad(self, statement) -> cst.Call | None:
        """``optimizer.zero_grad()`` / ``zero_grad(set_to_none=...)`` on a known optimizer or a Cell."""
        call = method_statement(statement, "zero_grad")
        if call is None or len([a for a in call.args if a.keyword is None]) > 1:
            return None
        return call

    def unscale(self, statement) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
        """(scaler, optimizer) of ``scaler.unscale_(optimizer)``."""
        call = method_statement(statement, "unscale_")
        if call is None or len(call.args) != 1 or not self.is_scaler(call.func.value):
            return None
        return call.func.value, call.args[0].value

    def update(self, statement) -> cst.Call | None:
        call = method_statement(statement, "update")
        if call is None or not self.is_scaler(call.func.value):
            return None
        return call

    def clip_api(self, statement) -> str | None:
        call, _ = single_call(statement)
        if call is None:
            return None
        qualified = self.analysis.qualified(call.func)
        return qualified if qualified in CLIP_NORM | CLIP_VALUE else None

    def clip(self, statement) -> Clip | str | None:
        """The clip of a statement, a reason it cannot be converted, or None."""
        call, small = single_call(statement)
        qualified = self.clip_api(statement)
        if qualified is None:
            return None
        if isinstance(small, cst.Assign):
            return "the total norm returned by gradient clipping is used; compute it from the gradients by hand"
        positional = [a.value for a in call.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        if qualified in CLIP_NORM:
            limit = positional[1] if len(positional) > 1 else keywords.get("max_norm")
            norm_type = positional[2] if len(positional) > 2 else keywords.get("norm_type")
            if norm_type is not None and _literal(norm_type) not in (2, 2.0):
                return "only the L2 norm (norm_type=2) maps to ops.clip_by_global_norm"
            kind = "norm"
        else:
            limit = positional[1] if len(positional) > 1 else keywords.get("clip_value")
            kind = "value"
        if limit is None:
            return "clipping limit not found"
        return Clip(kind, limit)


def _literal(expr):
    try:
        return literal_value(expr)
    except (ValueError, SyntaxError):
        return None
