"""Tuples of torch classes that are tables of layers to build, not types.

A tuple holding torch classes and nothing else is usually a type for
``isinstance`` (minGPT's ``whitelist = (torch.nn.Linear,)``): its classes
stay MindSpore's own, so layers converted directly are instances. A tuple that
is indexed is a table the code picks a class from and calls with torch's
arguments (monai's ``types = (nn.Conv1d, nn.Conv2d, nn.Conv3d); return
types[dim - 1]``): its classes are values, and get torch's signature as any
layer used as a value does.

``indexed_tuples`` finds those tables: a tuple subscripted where it stands,
or assigned to a name that its scope (the function or module holding the
assignment, with the functions nested in it) reads by subscript.
"""

from __future__ import annotations

from typing import Callable

import libcst as cst


class _Finder(cst.CSTVisitor):
    def __init__(self, is_class_tuple: Callable[[cst.Tuple], bool]):
        self.is_class_tuple = is_class_tuple
        self.scopes: list[cst.CSTNode] = []
        self.found: set[int] = set()
        self.assigned: list[tuple[cst.CSTNode, str, cst.Tuple]] = []  # (scope, name, tuple)

    def visit_Module(self, node: cst.Module) -> None:
        self.scopes.append(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.scopes.append(node)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scopes.pop()

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if isinstance(node.value, cst.Tuple) and self.is_class_tuple(node.value):
            self.found.add(id(node.value))

    def visit_Assign(self, node: cst.Assign) -> None:
        if (len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name)
                and isinstance(node.value, cst.Tuple) and self.is_class_tuple(node.value)):
            self.assigned.append((self.scopes[-1], node.targets[0].target.value, node.value))


class _Subscripted(cst.CSTVisitor):
    def __init__(self):
        self.names: set[str] = set()

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if isinstance(node.value, cst.Name):
            self.names.add(node.value.value)


def indexed_tuples(module: cst.Module, is_class_tuple: Callable[[cst.Tuple], bool]) -> set[int]:
    """ids of the tuples of torch classes (``is_class_tuple``) the module indexes."""
    finder = _Finder(is_class_tuple)
    module.visit(finder)
    subscripted: dict[int, set[str]] = {}
    for scope, name, node in finder.assigned:
        if id(scope) not in subscripted:
            reads = _Subscripted()
            scope.visit(reads)
            subscripted[id(scope)] = reads.names
        if name in subscripted[id(scope)]:
            finder.found.add(id(node))
    return finder.found
