"""``^`` between truth values in a test: ``!=``.

x-transformers checks its arguments with ``assert not (self.cross_attend ^
exists(context)), ...``. Graph mode compiles ``^`` only between integers
("Unsupported input type. For BitXor, only integer types are supported, but got
type of x:BoolImm", measured on MindSpore 2.10 CPU), and refuses the whole
``construct``; ``!=`` compiles. Where the result is only tested for truth (the
test of an ``assert``, ``if``, ``while`` or conditional expression, under
``not``, ``and``, ``or``) and one side is a truth value as the file shows (a
comparison, ``not``, ``isinstance``/``bool``/``hasattr``/..., ``True``/``False``,
or a call of the file's own function whose every return is one, such as
``exists(v): return v is not None``), ``a ^ b`` and ``a != b`` are true alike
for any integer or bool ``b``, so the test means the same in PyNative.
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.formatting import KeepsFormatting
from transpiler.convert.walk import LAYOUT_TYPES, rewrite

_BOOL_CALLS = frozenset({"bool", "isinstance", "issubclass", "hasattr", "callable", "any", "all"})


def without_bool_xor(module: cst.Module, to_format) -> cst.Module:
    return rewrite(module, _TestedXor(_bool_functions(module), to_format))


def _bool_functions(module: cst.Module) -> set[str]:
    """The file's top-level functions whose every return is a truth value."""
    found = set()
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef):
            returns = _returns(statement.body)
            if returns and all(r is not None and _is_bool(r, found) for r in returns):
                found.add(statement.name.value)
    return found


def _returns(node: cst.CSTNode) -> list:
    values = []

    class _Returns(cst.CSTVisitor):
        def visit_FunctionDef(self, inner):
            return False  # a nested function's returns are its own

        def visit_Lambda(self, inner):
            return False

        def visit_Return(self, ret):
            values.append(ret.value)

    node.visit(_Returns())
    return values


def _is_bool(expr: cst.BaseExpression, functions: set[str]) -> bool:
    if isinstance(expr, cst.Comparison):
        return True
    if isinstance(expr, cst.UnaryOperation):
        return isinstance(expr.operator, cst.Not)
    if isinstance(expr, cst.Name):
        return expr.value in ("True", "False")
    if isinstance(expr, cst.BooleanOperation):
        return _is_bool(expr.left, functions) and _is_bool(expr.right, functions)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
        return expr.func.value in _BOOL_CALLS or expr.func.value in functions
    return False


class _TestedXor(KeepsFormatting):
    prune = LAYOUT_TYPES

    def __init__(self, functions: set[str], to_format):
        super().__init__(to_format)
        self.functions = functions
        self.tested: set[int] = set()  # expressions whose value is only tested for truth

    def _test(self, expr: cst.BaseExpression | None) -> None:
        while isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
            expr = expr.expression
        if expr is None:
            return
        if isinstance(expr, cst.BooleanOperation):
            self._test(expr.left)
            self._test(expr.right)
            return
        self.tested.add(id(expr))

    def visit_Assert(self, node: cst.Assert) -> None:
        self._test(node.test)

    def visit_If(self, node: cst.If) -> None:
        self._test(node.test)

    def visit_While(self, node: cst.While) -> None:
        self._test(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._test(node.test)

    def leave_BinaryOperation(self, original_node, updated_node):
        if not isinstance(original_node.operator, cst.BitXor) or id(original_node) not in self.tested:
            return updated_node
        if not (_is_bool(original_node.left, self.functions) or _is_bool(original_node.right, self.functions)):
            return updated_node
        return cst.Comparison(updated_node.left, [cst.ComparisonTarget(cst.NotEqual(), updated_node.right)],
                              lpar=updated_node.lpar, rpar=updated_node.rpar)
