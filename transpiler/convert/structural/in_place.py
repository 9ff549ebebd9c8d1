"""In-place tensor methods as explicit updates. MindSpore's in-place methods
return the right value but leave the tensor unchanged on CPU (or have no
kernel), so ``x.add_(y)`` becomes ``ops.assign(x, x.add(y))``: assign updates
the tensor object itself, so every alias (a Parameter met in a
``for p in model.parameters()`` loop, a tensor kept in a list) sees the change,
as in torch. Items, ``x[i].add_(y)``, become ``x[i] = ...`` (assign refuses
views), and shape-changing ones (``x.unsqueeze_(0)``) rebind the name.

In a Cell's forward a local tensor is rebound instead (``y = y.add(1)``):
gradients do not flow through ``ops.assign`` (measured: d/dy of
``assign(y, y * g)`` is 1, not g), and a forward computes, it does not update
aliases. Attributes (buffers such as running statistics) are still assigned.

Inside an expression (``return x.mul_(gamma)``, ``nn.Parameter(torch.zeros(n).uniform_())``)
the call becomes the updated value: ``ops.assign(x, ...)`` (which returns it)
for a name or attribute, the value alone for a temporary nobody else sees or
in a return statement, a ``:=`` rebinding in a forward."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.spec import Unconvertible


def assign_in_place(
    ctx, receiver: cst.BaseExpression, value: cst.BaseExpression, rebinds: bool = False, in_forward: bool = False
) -> cst.BaseSmallStatement:
    if isinstance(receiver, cst.Subscript) or rebinds or (in_forward and isinstance(receiver, cst.Name)):
        return cst.Assign(targets=[cst.AssignTarget(receiver)], value=value)
    return cst.Expr(_assign(ctx, receiver, value))


# Methods (and torch functions) whose result may share storage with their
# input: an in-place update of that result changes the input too in torch.
_VIEWS = frozenset({
    "view", "view_as", "reshape", "reshape_as", "transpose", "permute", "t", "T", "mT", "expand", "expand_as",
    "narrow", "select", "unsqueeze", "squeeze", "flatten", "unflatten", "movedim", "moveaxis", "swapaxes",
    "swapdims", "diagonal", "detach", "as_strided", "split", "chunk", "unbind", "contiguous", "real", "imag",
    "data", "view_as_real", "view_as_complex", "unfold", "to", "type_as", "float", "double", "half", "long",
    "int", "type", "cpu", "cuda",
})


def in_place_value(ctx, source_receiver: cst.BaseExpression, receiver: cst.BaseExpression, value: cst.BaseExpression,
                   rebinds: bool, *, in_forward: bool, returned: bool) -> cst.BaseExpression:
    """The expression an in-place call inside an expression becomes; raises
    Unconvertible where the update cannot be kept. torch returns the updated
    receiver: a named tensor is updated with ``ops.assign`` (which returns the
    new value), a freshly computed temporary is seen by nobody else, so its new
    value is all there is."""
    if isinstance(receiver, cst.Subscript):
        raise Unconvertible("in-place operation on an item inside an expression; make it a statement of its own")
    if isinstance(receiver, cst.Name):
        if returned:
            return value  # nothing in this function reads the name afterwards
        if in_forward or rebinds:
            return cst.NamedExpr(receiver, value, lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return _assign(ctx, receiver, value)
    if isinstance(receiver, cst.Attribute):
        if rebinds:
            raise Unconvertible("in-place operation changing an attribute's shape inside an expression; "
                                "make it a statement of its own")
        return _assign(ctx, receiver, value)
    if _may_be_view(source_receiver, ctx.analysis):
        raise Unconvertible("in-place operation on a view: torch changes the tensor it views too; "
                            "update that tensor in a statement of its own")
    if _occurrences(receiver, value) > 1 and not _is_constant_factory(source_receiver, ctx.analysis):
        raise Unconvertible("in-place operation on a temporary the MindSpore form would compute twice; "
                            "assign the temporary to a variable first")
    return value


# tensors made from constants: computing one twice gives the same tensor
_CONSTANT_FACTORIES = frozenset(f"torch.{name}" for name in (
    "tensor", "as_tensor", "zeros", "ones", "full", "arange", "linspace", "logspace", "eye", "Tensor", "FloatTensor",
    "LongTensor", "zeros_like", "ones_like", "full_like"))


def _is_constant_factory(source: cst.BaseExpression, analysis) -> bool:
    return (isinstance(source, cst.Call) and analysis.qualified(source.func) in _CONSTANT_FACTORIES
            and all(isinstance(arg.value, (cst.Name, cst.Attribute, cst.SimpleString, cst.Integer, cst.Float,
                                           cst.List, cst.Tuple, cst.UnaryOperation)) for arg in source.args))


def _may_be_view(source: cst.BaseExpression, analysis) -> bool:
    if isinstance(source, cst.Subscript):
        return True
    if not isinstance(source, cst.Call):
        return False  # arithmetic makes a new tensor
    qualified = analysis.qualified(source.func)
    if qualified is not None:
        return qualified.rpartition(".")[2] in _VIEWS
    return isinstance(source.func, cst.Attribute) and source.func.attr.value in _VIEWS


def _assign(ctx, receiver, value) -> cst.Call:
    return cst.Call(ctx.ref("mindspore.ops.assign"), [cst.Arg(receiver), cst.Arg(value)])


def _occurrences(needle: cst.CSTNode, haystack: cst.CSTNode) -> int:
    count = 0

    class Counter(cst.CSTVisitor):
        def on_visit(self, node) -> bool:
            nonlocal count
            if node.deep_equals(needle):
                count += 1
                return False
            return True

    haystack.visit(Counter())
    return count
