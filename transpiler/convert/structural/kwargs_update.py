"""``kwargs.update(context=normed)`` on a function's ``**kwargs`` or on a dict
the function makes (``norm_kwargs = dict()``): one item assignment per keyword,
``kwargs["context"] = normed``.

perceiver-pytorch's PreNorm normalises the context it passes on this way, and
x-transformers gathers its layers' keyword arguments so. Graph mode compiles the
item assignment but not the ``update`` call: the call the dict is passed to
then fails with "Got an unexpected keyword argument 'context'", or the update
itself with "The 'generators' supports 1 'comprehension'" (measured on
MindSpore 2.10 CPU). Both mean the same in PyNative.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from transpiler.convert.formatting import KeepsFormatting
from transpiler.convert.structural.name_reads import names_made
from transpiler.convert.walk import LAYOUT_TYPES, rewrite


def without_kwargs_update(module: cst.Module, to_format) -> cst.Module:
    return rewrite(module, _KwargsUpdate(to_format))


class _KwargsUpdate(KeepsFormatting):
    prune = LAYOUT_TYPES

    def __init__(self, to_format):
        super().__init__(to_format)
        self.functions: list[cst.FunctionDef] = []  # the enclosing functions, innermost last
        self.dicts: dict[int, set[str]] = {}  # a function -> its dicts (its ** parameter, the dicts it makes)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node)

    def leave_FunctionDef(self, original_node, updated_node):
        self.functions.pop()
        return updated_node

    def _is_dict(self, name: str) -> bool:
        function = self.functions[-1]
        if id(function) not in self.dicts:  # looked for only in a function that calls update()
            star = function.params.star_kwarg
            self.dicts[id(function)] = ({star.name.value} if star is not None else set()) | names_made(function, m.Dict() | m.DictComp() | m.Call(func=m.Name("dict")))
        return name in self.dicts[id(function)]

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if not self.functions or len(updated_node.body) != 1:
            return updated_node
        line = updated_node.body[0]
        call = line.value if isinstance(line, cst.Expr) else None
        func = call.func if isinstance(call, cst.Call) else None
        if not (isinstance(func, cst.Attribute) and func.attr.value == "update" and isinstance(func.value, cst.Name)):
            return updated_node
        name = func.value.value
        if not self._is_dict(name):
            return updated_node
        args = updated_node.body[0].value.args
        if not args or any(a.keyword is None or a.star for a in args):
            return updated_node
        lines = [cst.SimpleStatementLine([cst.Assign(
            [cst.AssignTarget(cst.Subscript(cst.Name(name), [cst.SubscriptElement(cst.Index(
                cst.SimpleString(f'"{a.keyword.value}"')))]))], a.value)]) for a in args]
        lines[0] = lines[0].with_changes(leading_lines=updated_node.leading_lines)
        return cst.FlattenSentinel(lines)
