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
from transpiler.convert.walk import LAYOUT_TYPES, Visitor, rewrite, walk


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
            self.dicts[id(function)] = ({star.name.value} if star is not None else set()) | _dicts_made(function)
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


def _dicts_made(function: cst.FunctionDef) -> set[str]:
    """Names every assignment in ``function`` binds to a new dict (``{...}``, ``dict(...)``)."""
    values: dict[str, list] = {}

    class _Assignments(Visitor):
        def visit_FunctionDef(self, node):
            return node is function  # a nested function's names are its own

        def visit_Assign(self, node):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    values.setdefault(target.target.value, []).append(node.value)

        def visit_AugAssign(self, node):
            if isinstance(node.target, cst.Name):
                values.setdefault(node.target.value, []).append(None)

        def visit_AnnAssign(self, node):
            if isinstance(node.target, cst.Name):
                values.setdefault(node.target.value, []).append(node.value)

        def visit_For(self, node):
            for name in m.findall(node.target, m.Name()):
                values.setdefault(name.value, []).append(None)

    walk(function, _Assignments(), prune=LAYOUT_TYPES)
    for param in m.findall(function.params, m.Param()):
        values.setdefault(param.name.value, []).append(None)  # bound by the caller
    made = m.Dict() | m.DictComp() | m.Call(func=m.Name("dict"))
    return {name for name, assigned in values.items()
            if all(value is not None and m.matches(value, made) for value in assigned)}
