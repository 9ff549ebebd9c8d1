"""A list's ``pop()`` in a compiled function takes the last item and rebinds the list
without it.

The UNets of openai's diffusion code (GLIDE, improved-diffusion) and ermongroup's
DDIM concatenate the skip connections as they pop them::

    h = ops.cat([h, hs.pop()], axis=1)

Graph mode gives ``hs.pop()`` there as the pair (list, item) ("Failed calling
Concat with tensors=List[Tensor, Tuple[List[Tensor], Tensor]]"), and popped by a
statement of its own (``last = hs.pop()``) the item is right but the gradients
through it are silently wrong (measured on MindSpore 2.10 CPU: off by 0.3 against
PyNative on a two-level skip network). Read and rebound, both are right::

    popped = hs[-1]
    hs = hs[:-1]
    h = ops.cat([h, popped], axis=1)

``pop(0)`` alike (``hs[0]``, ``hs[1:]``). Only for a list the function makes itself
(``hs = []``: no one else holds it, so a new list is the same as the list
shortened), where nothing else in the statement names it and the call is not under
a condition, a short circuit, a lambda or a comprehension, so the order of what
runs is the same. The same in PyNative.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from transpiler.convert.formatting import KeepsFormatting
from transpiler.convert.structural.fresh_names import fresh_name
from transpiler.convert.structural.name_reads import mentions, names_made
from transpiler.convert.walk import LAYOUT_TYPES, Visitor, rewrite, walk

# a list the function makes (``hs = []``, ``[...]``, ``list(...)``) and binds nothing else to
_NEW_LIST = m.List() | m.ListComp() | m.Call(func=m.Name("list"))
_GUARDED = (cst.IfExp, cst.BooleanOperation, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def without_list_pops(module: cst.Module, compiled: set[str], to_format) -> cst.Module:
    return rewrite(module, _Rewrite(compiled, to_format))


def _end(call: cst.Call) -> int | None:
    """-1 for ``name.pop()``, 0 for ``name.pop(0)`` (None: another call)."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "pop" and isinstance(func.value, cst.Name)):
        return None
    if not call.args:
        return -1
    if len(call.args) == 1 and not call.args[0].keyword and not call.args[0].star \
            and isinstance(call.args[0].value, cst.Integer) and call.args[0].value.value == "0":
        return 0
    return None


class _Pops(Visitor):
    """The ``name.pop()`` / ``name.pop(0)`` calls of an expression, outside anything
    that may not run them."""

    def __init__(self):
        super().__init__()
        self.found: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> None:
        if _end(node) is not None:
            self.found.append(node)

    def on_visit(self, node) -> bool:
        if isinstance(node, _GUARDED):
            return False
        return super().on_visit(node)


class _Replace(cst.CSTTransformer):
    def __init__(self, call: cst.Call, name: str):
        super().__init__()
        self.call = call
        self.name = name

    def leave_Call(self, original_node, updated_node):
        return cst.Name(self.name) if original_node is self.call else updated_node


def _read_and_rebind(listed: str, end: int, target: str | None, leading) -> list[cst.SimpleStatementLine]:
    item = cst.Subscript(cst.Name(listed), [cst.SubscriptElement(cst.Index(cst.Integer("0") if end == 0 else
                                                                           cst.UnaryOperation(cst.Minus(), cst.Integer("1"))))])
    rest = cst.Slice(lower=cst.Integer("1"), upper=None) if end == 0 else \
        cst.Slice(lower=None, upper=cst.UnaryOperation(cst.Minus(), cst.Integer("1")))
    rebind = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(listed))], cst.Subscript(
        cst.Name(listed), [cst.SubscriptElement(rest)]))])
    if target is None:
        return [rebind.with_changes(leading_lines=leading)]
    read = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(target))], item)], leading_lines=leading)
    return [read, rebind]


def _value(small) -> cst.BaseExpression | None:
    if isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Expr, cst.Return)):
        return small.value
    return None


class _Rewrite(KeepsFormatting):
    prune = LAYOUT_TYPES

    def __init__(self, compiled: set[str], to_format):
        super().__init__(to_format)
        self.compiled = compiled
        self.functions: list[cst.FunctionDef] = []
        self.lists: list[set[str]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node)
        self.lists.append(names_made(node, _NEW_LIST) if node.name.value in self.compiled else set())

    def leave_FunctionDef(self, original_node, updated_node):
        self.functions.pop()
        self.lists.pop()
        return updated_node

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if not self.functions or not self.lists[-1] or len(updated_node.body) != 1:
            return updated_node
        small = updated_node.body[0]
        value = _value(small)
        if value is None:
            return updated_node
        pops = _Pops()
        walk(value, pops, prune=LAYOUT_TYPES)
        if len(pops.found) != 1:
            return updated_node
        call = pops.found[0]
        listed = call.func.value.value
        if listed not in self.lists[-1] or mentions(updated_node).count(listed) != 1:
            return updated_node  # a list others may hold, or named elsewhere in the statement too
        end = _end(call)
        leading = updated_node.leading_lines
        if isinstance(small, cst.Expr) and small.value is call:  # hs.pop() alone
            lines = _read_and_rebind(listed, end, None, leading)
        elif isinstance(small, cst.Assign) and small.value is call and len(small.targets) == 1 \
                and isinstance(small.targets[0].target, cst.Name) and small.targets[0].target.value != listed:
            lines = _read_and_rebind(listed, end, small.targets[0].target.value, leading)
        else:
            taken = set(mentions(self.functions[-1])) | {p.name.value for p in self.functions[-1].params.params}
            name = fresh_name("popped", taken)
            statement = updated_node.visit(_Replace(call, name)).with_changes(leading_lines=())
            lines = [*_read_and_rebind(listed, end, name, leading), statement]
        for line in lines:
            self.to_format.add(line)
        return cst.FlattenSentinel(lines)
