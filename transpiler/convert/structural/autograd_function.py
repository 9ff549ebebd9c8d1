"""Custom autograd Functions become Cells with a ``bprop``.

    class SwishFn(torch.autograd.Function):        class SwishFn(nn.Cell):
        @staticmethod                                  def construct(self, x):
        def forward(ctx, x):                               self.saved_tensors = (x,)
            ctx.save_for_backward(x)                       return x * ops.sigmoid(x)
            return x * torch.sigmoid(x)
                                                       def bprop(self, x, out, grad):
        @staticmethod                                      (x,) = self.saved_tensors
        def backward(ctx, grad):                           return (grad * ...,)
            (x,) = ctx.saved_tensors
            return grad * ...                      y = SwishFn()(x)

    y = SwishFn.apply(x)

MindSpore calls a Cell's ``bprop`` with the inputs, the output and the output's
gradient, for the same instance whose ``construct`` ran, so what ``forward``
kept on ``ctx`` is kept on ``self`` (measured on CPU, PyNative: gradients equal
the hand-written ones; a None gradient counts as zero, as in torch). ``apply``
calls an instance. What the pattern cannot carry (``setup_context``,
``ctx.needs_input_grad``, ``mark_non_differentiable``, ``once_differentiable``)
is marked.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.spec import Unconvertible
from transpiler.convert.engine import code_of

FUNCTION_BASES = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
_CTX_UNSUPPORTED = ("needs_input_grad", "mark_non_differentiable", "set_materialize_grads", "mark_dirty")


def function_base(node: cst.ClassDef, analysis) -> cst.Arg | None:
    """The ``torch.autograd.Function`` base of a class, if it has one."""
    for base in node.bases:
        if analysis.qualified(base.value) in FUNCTION_BASES:
            return base
    return None


def convert_function_class(ctx, node: cst.ClassDef, base: cst.Arg) -> cst.ClassDef:
    """The Cell form of an autograd Function class; raises Unconvertible."""
    methods = {s.name.value: s for s in node.body.body if isinstance(s, cst.FunctionDef)}
    if "setup_context" in methods:
        raise Unconvertible("forward/setup_context style autograd Function: merge setup_context into forward by hand")
    forward, backward = methods.get("forward"), methods.get("backward")
    if forward is None or backward is None:
        raise Unconvertible("an autograd Function without both forward and backward")
    inputs = _params(forward)
    grads = _params(backward)
    if len(inputs) < 1 or len(grads) < 2 or _takes_more(forward) or _takes_more(backward):
        raise Unconvertible("forward/backward take *args or no ctx: convert by hand")
    # ctx becomes self: another `self` (a parameter, or the enclosing method's) would be taken over
    pairs = ((inputs[0], forward), (grads[0], backward))
    if any(ctx != "self" and "self" in _names(function) for ctx, function in pairs):
        raise Unconvertible("forward/backward use a name self besides ctx: rename it, then convert")
    body = []
    for statement in node.body.body:
        if statement is forward:
            statement = _construct(statement, inputs[0])
        elif statement is backward:
            statement = _bprop(statement, grads[0], inputs[1:], grads[1:])
        body.append(statement)
    cell = ctx.ref("mindspore.nn.Cell")
    bases = [b.with_changes(value=cell) if b is base else b for b in node.bases]
    return node.with_changes(bases=bases, body=node.body.with_changes(body=body))


def _params(function: cst.FunctionDef) -> list[str]:
    return [p.name.value for p in function.params.params]


def _takes_more(function: cst.FunctionDef) -> bool:
    """``*args``, ``**kwargs`` or keyword-only parameters: bprop's signature cannot follow them."""
    params = function.params
    return isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None or bool(params.kwonly_params) \
        or bool(params.posonly_params)


def _construct(forward: cst.FunctionDef, ctx_name: str) -> cst.FunctionDef:
    body = forward.body.visit(_CtxToSelf(ctx_name))
    params = forward.params.params
    return forward.with_changes(
        name=cst.Name("construct"),
        decorators=_without_staticmethod(forward),
        params=forward.params.with_changes(params=[params[0].with_changes(name=cst.Name("self")), *params[1:]]),
        body=body,
    )


def _bprop(backward: cst.FunctionDef, ctx_name: str, inputs: list[str], grads: list[str]) -> cst.FunctionDef:
    body = backward.body.visit(_CtxToSelf(ctx_name))
    taken = set(inputs) | _names(body)
    out = next(n for n in ("out", "_out", "__out") if n not in taken)
    if len(grads) == 1:
        dout, unpack = grads[0], []
    else:
        dout = next(n for n in ("dout", "_dout", "__dout") if n not in taken | {out})
        targets = cst.Tuple([cst.Element(cst.Name(g)) for g in grads], lpar=[], rpar=[])
        unpack = [cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(targets)], cst.Name(dout))])]
    body = body.visit(_ReturnTuple(len(inputs)))
    if isinstance(body, cst.IndentedBlock):
        body = body.with_changes(body=[*unpack, *body.body])
    elif unpack:
        raise Unconvertible("a one-line backward with several output gradients: convert by hand")
    params = [cst.Param(cst.Name(n)) for n in ("self", *inputs, out, dout)]
    return backward.with_changes(
        name=cst.Name("bprop"),
        decorators=_without_staticmethod(backward),
        params=cst.Parameters(params=params),
        body=body,
    )


def _without_staticmethod(function: cst.FunctionDef) -> list[cst.Decorator]:
    kept = []
    for decorator in function.decorators:
        name = code_of(decorator.decorator)
        if name == "staticmethod":
            continue
        if name.endswith("once_differentiable"):
            raise Unconvertible("@once_differentiable backward: MindSpore bprop has no such restriction marker")
        kept.append(decorator)
    return kept


def _names(node: cst.CSTNode) -> set[str]:
    found: set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.add(name.value)

    node.visit(Names())
    return found


class _CtxToSelf(cst.CSTTransformer):
    """``ctx.x`` -> ``self.x``; ``ctx.save_for_backward(a, b)`` -> ``self.saved_tensors = (a, b)``."""

    def __init__(self, ctx_name: str):
        super().__init__()
        self.ctx_name = ctx_name

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return not (isinstance(node.value, cst.Name) and node.value.value == self.ctx_name)

    def leave_Attribute(self, original_node, updated_node):
        if isinstance(updated_node.value, cst.Name) and updated_node.value.value == self.ctx_name:
            attribute = updated_node.attr.value
            if attribute in _CTX_UNSUPPORTED:
                raise Unconvertible(f"ctx.{attribute} has no MindSpore bprop counterpart")
            if attribute == "saved_variables":
                return updated_node.with_changes(value=cst.Name("self"), attr=cst.Name("saved_tensors"))
            return updated_node.with_changes(value=cst.Name("self"))
        return updated_node

    def leave_Name(self, original_node, updated_node):
        if updated_node.value == self.ctx_name:
            raise Unconvertible("ctx is passed on or stored: convert by hand")
        return updated_node

    def leave_Expr(self, original_node, updated_node):
        call = updated_node.value
        if (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute)
                and isinstance(call.func.value, cst.Name) and call.func.value.value == "self"
                and call.func.attr.value == "save_for_backward"):
            saved = cst.Tuple([cst.Element(a.value) for a in call.args])
            target = cst.AssignTarget(cst.Attribute(cst.Name("self"), cst.Name("saved_tensors")))
            return cst.Assign([target], saved)
        return updated_node

    def visit_FunctionDef(self, node) -> bool:
        return False  # a nested function has its own names

    def visit_Lambda(self, node) -> bool:
        return False


class _ReturnTuple(cst.CSTTransformer):
    """bprop returns one gradient per input, always as a tuple."""

    def __init__(self, inputs: int):
        super().__init__()
        self.inputs = inputs

    def leave_Return(self, original_node, updated_node):
        value = updated_node.value
        if value is None or isinstance(value, cst.Tuple):
            return updated_node
        if self.inputs == 1:
            return updated_node.with_changes(value=cst.Tuple([cst.Element(value)]))
        return updated_node.with_changes(value=cst.Call(cst.Name("tuple"), [cst.Arg(value)]))

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False
