"""``kwargs.update(context=normed)`` on a function's ``**kwargs``: one item
assignment per keyword, ``kwargs["context"] = normed``.

perceiver-pytorch's PreNorm normalises the context it passes on this way. Graph
mode compiles the item assignment but not the ``update`` call: the call the
dict is passed to then fails with "Got an unexpected keyword argument
'context'" (measured on MindSpore 2.10 CPU). Both mean the same in PyNative.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from transpiler.convert.formatting import KeepsFormatting


def without_kwargs_update(module: cst.Module, to_format) -> cst.Module:
    return module.visit(_KwargsUpdate(to_format))


class _KwargsUpdate(KeepsFormatting):
    def __init__(self, to_format):
        super().__init__(to_format)
        self.kwargs: list[str | None] = []  # each enclosing function's ** parameter

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        star = node.params.star_kwarg
        self.kwargs.append(star.name.value if star is not None else None)

    def leave_FunctionDef(self, original_node, updated_node):
        self.kwargs.pop()
        return updated_node

    def leave_SimpleStatementLine(self, original_node, updated_node):
        name = self.kwargs[-1] if self.kwargs else None
        if name is None or len(updated_node.body) != 1:
            return updated_node
        update = m.Expr(value=m.Call(func=m.Attribute(value=m.Name(name), attr=m.Name("update"))))
        if not m.matches(updated_node.body[0], update):
            return updated_node
        args = updated_node.body[0].value.args
        if not args or any(a.keyword is None or a.star for a in args):
            return updated_node
        lines = [cst.SimpleStatementLine([cst.Assign(
            [cst.AssignTarget(cst.Subscript(cst.Name(name), [cst.SubscriptElement(cst.Index(
                cst.SimpleString(f'"{a.keyword.value}"')))]))], a.value)]) for a in args]
        lines[0] = lines[0].with_changes(leading_lines=updated_node.leading_lines)
        return cst.FlattenSentinel(lines)
