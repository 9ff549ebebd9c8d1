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


def without_kwargs_update(module: cst.Module, to_format) -> cst.Module:
    return module.visit(_KwargsUpdate(to_format))


class _KwargsUpdate(KeepsFormatting):
    def __init__(self, to_format):
        super().__init__(to_format)
        self.kwargs: list[set[str]] = []  # each enclosing function's dicts: its ** parameter, the dicts it makes

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        star = node.params.star_kwarg
        self.kwargs.append(({star.name.value} if star is not None else set()) | _dicts_made(node))

    def leave_FunctionDef(self, original_node, updated_node):
        self.kwargs.pop()
        return updated_node

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if not self.kwargs or len(updated_node.body) != 1:
            return updated_node
        update = m.Expr(value=m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("update"))))
        if not m.matches(updated_node.body[0], update):
            return updated_node
        name = updated_node.body[0].value.func.value.value
        if name not in self.kwargs[-1]:
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

    class _Assignments(cst.CSTVisitor):
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

    function.visit(_Assignments())
    for param in m.findall(function.params, m.Param()):
        values.setdefault(param.name.value, []).append(None)  # bound by the caller
    made = m.Dict() | m.DictComp() | m.Call(func=m.Name("dict"))
    return {name for name, assigned in values.items()
            if all(value is not None and m.matches(value, made) for value in assigned)}
