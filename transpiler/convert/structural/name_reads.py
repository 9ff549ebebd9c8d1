"""The names a piece of code mentions, for the passes that decide whether a name is read."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from transpiler.convert.walk import LAYOUT_TYPES, Visitor, walk


class _Names(Visitor):
    def __init__(self):
        super().__init__()
        self.names: list[str] = []

    def visit_Name(self, node) -> None:
        self.names.append(node.value)

    def visit_Attribute(self, node) -> bool:
        walk(node.value, self, prune=LAYOUT_TYPES)
        return False

    def visit_Arg(self, node) -> bool:
        walk(node.value, self, prune=LAYOUT_TYPES)
        return False


def mentions(statement) -> list[str]:
    """Each mention of a name in ``statement`` (attribute and keyword names are no mentions)."""
    names = _Names()
    walk(statement, names, prune=LAYOUT_TYPES)
    return names.names


def names_made(function: cst.FunctionDef, made, unpacked: bool = False) -> set[str]:
    """Names every assignment in ``function`` binds to a value ``made`` matches (a new dict:
    ``m.Dict() | m.DictComp() | m.Call(func=m.Name("dict"))``); never a parameter, a loop
    variable or a name augmented. ``unpacked``: a name a tuple target binds (``B, N, C =
    x.shape``) counts with the value unpacked, which ``made`` matches as a whole."""
    values: dict[str, list] = {}

    class _Assignments(Visitor):
        def visit_FunctionDef(self, node):
            return node is function  # a nested function's names are its own

        def visit_Assign(self, node):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    values.setdefault(target.target.value, []).append(node.value)
                elif unpacked:
                    for name in m.findall(target.target, m.Name()):
                        values.setdefault(name.value, []).append(node.value)

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
    return {name for name, assigned in values.items()
            if all(value is not None and m.matches(value, made) for value in assigned)}
