"""``ops.assign(self.loc.data, value)`` in a compiled function assigns ``self.loc``.

torch code initializes parameters through ``.data`` (Glow's ActNorm, on its first
batch: ``self.loc.data.copy_(-mean)``), which the in-place rule writes as
``ops.assign(self.loc.data, ops.broadcast_to(-mean, self.loc.data.shape)...)``. In
PyNative ``.data`` of a MindSpore tensor or Parameter is the object itself; in graph
mode, two parameters assigned through ``.data`` under a tensor condition are mixed
up: after ``ops.assign(self.loc.data, ...)`` and ``ops.assign(self.scale.data, ...)``
in a branch that does not run, ``self.loc`` reads ``self.scale``'s value (measured on
MindSpore 2.10 CPU: ``self.scale * (x + self.loc)`` gave 4 for 1 with loc 0.5 and
scale 2). Assigned without ``.data`` the values are right. So in the functions graph
mode compiles, the receiver of ``ops.assign`` loses its ``.data``, and so do the
reads of the same ``.data`` in the assigned value (``self.loc.data.shape``). Graph
mode assigns only to a Parameter, so a receiver whose ``.data`` is one is that
Parameter. Elsewhere the statement stays as the rule wrote it.
"""

from __future__ import annotations

import libcst as cst
from libcst.helpers import get_full_name_for_node

from transpiler.convert.structural.compiled_functions import InCompiledFunctions
from transpiler.convert.walk import LAYOUT_TYPES, rewrite

_ASSIGN = frozenset({"ops.assign", "mindspore.ops.assign"})


def without_assigned_data(module: cst.Module, compiled: set[str], to_format) -> cst.Module:
    return rewrite(module, _AssignedData(compiled, to_format))


def _data_of(expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """``x`` for ``x.data``; None otherwise."""
    if isinstance(expr, cst.Attribute) and expr.attr.value == "data":
        return expr.value
    return None


class _WithoutData(cst.CSTTransformer):
    """``owner.data`` -> ``owner`` wherever ``owner`` is the assigned parameter."""

    def __init__(self, owner: cst.BaseExpression):
        super().__init__()
        self.owner = owner

    def leave_Attribute(self, original_node, updated_node):
        owner = _data_of(original_node)
        if owner is not None and owner.deep_equals(self.owner):
            return owner.with_changes(lpar=updated_node.lpar, rpar=updated_node.rpar)
        return updated_node


class _AssignedData(InCompiledFunctions):
    prune = LAYOUT_TYPES

    def __init__(self, compiled: set[str], to_format):
        super().__init__(compiled, to_format)

    def leave_Call(self, original_node, updated_node):
        if not self.depth or get_full_name_for_node(original_node.func) not in _ASSIGN or len(updated_node.args) != 2:
            return updated_node
        owner = _data_of(original_node.args[0].value)
        if owner is None:
            return updated_node
        return updated_node.visit(_WithoutData(owner))
