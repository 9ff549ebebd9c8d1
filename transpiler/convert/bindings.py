"""The names a piece of code binds in its own scope.

One walk serves the places that ask "what does this body define?": the stand-ins of
marked statements (:mod:`transpiler.convert.marked`) and the autograd Function rewrite
(:mod:`transpiler.convert.structural.autograd_function`). Subclasses say what a binding
means to them (:meth:`LocalBindings.bind`) and which imports count.
"""

from __future__ import annotations

import libcst as cst


class LocalBindings(cst.CSTVisitor):
    """Assignment, loop, ``with ... as``, ``:=`` and ``except ... as`` targets, and the names
    of classes and functions; not what a nested scope (function, class, lambda,
    comprehension) binds, and no import unless a subclass counts them."""

    def bind(self, name: str, definition: cst.CSTNode | None) -> None:
        """``name`` is bound, by ``definition`` when it is a class or function."""
        raise NotImplementedError

    def bind_target(self, target: cst.CSTNode, definition: cst.CSTNode | None = None) -> None:
        if isinstance(target, cst.Name):
            self.bind(target.value, definition)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.bind_target(element.value)
        elif isinstance(target, cst.StarredElement):
            self.bind_target(target.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.bind_target(node.name, node)
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.bind_target(node.name, node)
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_ListComp(self, node) -> bool:
        return False

    def visit_SetComp(self, node) -> bool:
        return False

    def visit_DictComp(self, node) -> bool:
        return False

    def visit_GeneratorExp(self, node) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self.bind_target(target.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self.bind_target(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.bind_target(node.target)

    def visit_For(self, node: cst.For) -> None:
        self.bind_target(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self.bind_target(node.asname.name)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.bind_target(node.target)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self.bind_target(node.name.name)

    def visit_Import(self, node) -> bool:
        return False

    def visit_ImportFrom(self, node) -> bool:
        return False
