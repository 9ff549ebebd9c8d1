"""An attribute cast to the input's dtype in a compiled function is a local value.

Super-resolution networks (SwinIR, and the EDSR/RCAN family of BasicSR) keep the
dataset mean as a plain tensor attribute and cast it to the input's type in forward::

    self.mean = self.mean.type_as(x)
    x = (x - self.mean) * self.img_range
    ...
    x = x / self.img_range + self.mean

Graph mode cannot compile the rebinding of a tensor attribute that is not a Parameter
inside ``construct``: SwinIR's whole network fails to compile with "negative
dimensions are not allowed", raised from an unrelated LayerNorm (measured on MindSpore
2.10 CPU; the network compiles and matches torch once the cast is a local value). The
cast of the attribute's own value is only a dtype (or device) change, so a local
holds it for the rest of the function::

    mean = self.mean.type_as(x)
    x = (x - mean) * self.img_range
    ...
    x = x / self.img_range + mean

Only for ``self.a = self.a.<cast>(...)`` (``type_as``, ``to``, ``astype``, ``float``,
``half``, ``double``) as a statement of the function's own body (not under a
condition or loop), in functions graph mode compiles; the reads of ``self.a`` after
it in that function become the local. Between calls the attribute keeps its first
dtype, which the next call casts again.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from transpiler.convert.formatting import KeepsFormatting
from transpiler.convert.structural.fresh_names import fresh_name
from transpiler.convert.structural.name_reads import mentions
from transpiler.convert.walk import LAYOUT_TYPES, rewrite

_CASTS = frozenset({"type_as", "to", "astype", "float", "half", "double"})


def without_attribute_casts(module: cst.Module, compiled: set[str], to_format) -> cst.Module:
    return rewrite(module, _Casts(compiled, to_format))


def _cast_attribute(statement) -> str | None:
    """``a`` of the statement ``self.a = self.a.<cast>(...)``."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1):
        return None
    target, value = statement.body[0].targets[0].target, statement.body[0].value
    if not m.matches(target, m.Attribute(value=m.Name("self"), attr=m.Name())):
        return None
    name = target.attr.value
    if m.matches(value, m.Call(func=m.Attribute(value=m.Attribute(value=m.Name("self"), attr=m.Name(name)),
                                                attr=m.Name()))) and value.func.attr.value in _CASTS:
        return name
    return None


class SelfAttributeToLocal(cst.CSTTransformer):
    """``self.<attribute>`` -> ``<local>``, outside nested functions and lambdas."""

    def __init__(self, attribute: str, local: str):
        super().__init__()
        self.attribute, self.local = attribute, local

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def leave_Attribute(self, original_node, updated_node):
        if m.matches(updated_node, m.Attribute(value=m.Name("self"), attr=m.Name(self.attribute))):
            return cst.Name(self.local)
        return updated_node


class _Casts(KeepsFormatting):
    prune = LAYOUT_TYPES

    def __init__(self, compiled: set[str], to_format):
        super().__init__(to_format)
        self.compiled = compiled

    def leave_FunctionDef(self, original_node, updated_node):
        if original_node.name.value not in self.compiled or not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        params = updated_node.params.params
        if not params or params[0].name.value != "self":
            return updated_node
        body = list(updated_node.body.body)
        taken = set(mentions(updated_node)) | {p.name.value for p in params}
        changed = False
        for index, statement in enumerate(body):
            attribute = _cast_attribute(statement)
            if attribute is None or _assigned_again(body[index + 1:], attribute):
                continue
            local = fresh_name(attribute, taken)
            assign = statement.body[0]
            body[index] = self._keep(statement, statement.with_changes(
                body=[assign.with_changes(targets=[cst.AssignTarget(cst.Name(local))])]))
            for later in range(index + 1, len(body)):
                body[later] = self._keep(body[later], body[later].visit(SelfAttributeToLocal(attribute, local)))
            changed = True
        if not changed:
            return updated_node
        return updated_node.with_changes(body=updated_node.body.with_changes(body=body))


    def _keep(self, old, new):
        """``new`` stays queued for black where ``old`` was."""
        if old in self.to_format:
            self.to_format.add(new)
        return new


def _assigned_again(statements, attribute: str) -> bool:
    """``self.<attribute>`` is set again (or deleted) in ``statements``."""
    target = m.Attribute(value=m.Name("self"), attr=m.Name(attribute))
    for statement in statements:
        if m.findall(statement, m.AssignTarget(target=target) | m.AugAssign(target=target)
                     | m.AnnAssign(target=target) | m.Del(target=target)):
            return True
    return False
