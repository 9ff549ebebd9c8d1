"""Python complex constants in arithmetic with a tensor: ``torch.exp(1j * theta)``,
``x * 2j``, ``(1 + 2j) - t`` (rotations, Fourier features, phase shifts).

Measured on MindSpore 2.10 (tests/rules/test_silent_differences.py): its Tensor takes no
Python complex operand ("Failed calling Mul with Mul()(input=Tensor, other=<class
'complex'>)", for ``+ - * /`` alike, whatever the tensor's dtype), and the CPU has no
kernel for a real tensor times a complex one ("Select CPU operator[Mul] fail!
Unsupported data type!"). torch gives a complex64 result for a float32 or integer tensor.
So where one operand is a complex constant (numeric literals with an imaginary one:
``1j``, ``-1j``, ``(1 + 2j)``, ``2 * math.pi * 1j``) and the file shows the other is a
tensor (a torch call, a tensor method or part of one, a name last assigned one, or the
operation is an argument of a torch function), the constant becomes
``mindspore.Tensor(c, dtype=mindspore.complex64)`` and the tensor, unless the file shows
it complex already, ``.to(mindspore.complex64)``: torch's values and dtype. Left alone:
numbers and numpy on the other side (Python and numpy take complex numbers), and what the
file does not show. A float64 tensor comes out complex64, where torch makes complex128.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.torch_functions.integer_inputs import holds_python_complex, is_complex_tensor
from transpiler.analyze.tensor_values import is_torch_value_call
from transpiler.convert.change_text import short
from transpiler.convert.engine import keyword_arg
from transpiler.convert.tensor_properties import assigned_value
from transpiler.convert.walk import LAYOUT_TYPES, StatementVisitor, walk

_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide)
_CONSTANT_MODULES = frozenset({"math", "numpy", "cmath"})
_TENSOR_VIEWS = frozenset({"T", "mT", "H", "mH", "real", "imag", "data"})
_FOUND = "complex_constants"
# torch functions whose first argument may be a Python number
_TAKE_NUMBERS = frozenset({"torch.tensor", "torch.as_tensor", "torch.asarray", "torch.scalar_tensor", "torch.Tensor",
                           "torch.full", "torch.arange", "torch.linspace", "torch.logspace", "torch.zeros",
                           "torch.ones", "torch.empty", "torch.randn", "torch.rand", "torch.complex", "torch.polar"})


def _is_complex_constant(ctx, expr: cst.BaseExpression) -> bool:
    return _is_constant(ctx, expr) and holds_python_complex(expr)


def _is_constant(ctx, expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary)):
        return True
    if isinstance(expr, cst.UnaryOperation):
        return isinstance(expr.operator, (cst.Minus, cst.Plus)) and _is_constant(ctx, expr.expression)
    if isinstance(expr, cst.BinaryOperation):
        return _is_constant(ctx, expr.left) and _is_constant(ctx, expr.right)
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):  # math.pi, np.pi
        binding = ctx.analysis.imports.get(expr.value.value)
        return binding is not None and binding.qualified.split(".")[0] in _CONSTANT_MODULES
    return False


def _shows_tensor(ctx, expr: cst.BaseExpression | None, depth: int = 0) -> bool:
    """The file shows ``expr`` (torch source) is a tensor."""
    if expr is None or depth > 8:
        return False
    deeper = depth + 1
    if isinstance(expr, cst.Call):
        qualified = ctx.analysis.qualified(expr.func)
        if qualified is not None:
            return is_torch_value_call(qualified)
        return isinstance(expr.func, cst.Attribute) and _shows_tensor(ctx, expr.func.value, deeper)
    if isinstance(expr, cst.Name):
        return _shows_tensor(ctx, assigned_value(ctx, expr), deeper)
    if isinstance(expr, cst.Subscript):
        return _shows_tensor(ctx, expr.value, deeper)
    if isinstance(expr, cst.Attribute):
        return expr.attr.value in _TENSOR_VIEWS and _shows_tensor(ctx, expr.value, deeper)
    if isinstance(expr, cst.UnaryOperation):
        return _shows_tensor(ctx, expr.expression, deeper)
    if isinstance(expr, cst.BinaryOperation):
        return _shows_tensor(ctx, expr.left, deeper) or _shows_tensor(ctx, expr.right, deeper)
    return False


def _sides(ctx, node: cst.BinaryOperation) -> tuple[str, str] | None:
    """(the constant's field, the other operand's field) of an operation with a complex constant."""
    if not isinstance(node.operator, _ARITHMETIC):
        return None
    if _is_complex_constant(ctx, node.left) and not _is_constant(ctx, node.right):
        return "left", "right"
    if _is_complex_constant(ctx, node.right) and not _is_constant(ctx, node.left):
        return "right", "left"
    return None


class _Candidates(StatementVisitor):
    """Operations of a complex constant and an operand the file shows is a tensor."""

    def __init__(self, ctx):
        super().__init__()
        self.ctx = ctx
        self.found: dict[int, tuple[str, str]] = {}  # operation -> (its constant's field, its tensor's field)
        self.statements_found: set[int] = set()

    def visit_Call(self, node: cst.Call) -> None:
        # ``torch.exp(1j * theta)``: the input of a torch function (not a factory's data) is a tensor
        qualified = self.ctx.analysis.qualified(node.func)
        if qualified is None or not is_torch_value_call(qualified) or qualified in _TAKE_NUMBERS:
            return
        first = node.args[0] if node.args else None
        if first is not None and first.keyword is None and not first.star \
                and isinstance(first.value, cst.BinaryOperation) and _sides(self.ctx, first.value) is not None:
            self._take(first.value, _sides(self.ctx, first.value))

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        sides = _sides(self.ctx, node)
        if sides is not None and _shows_tensor(self.ctx, getattr(node, sides[1])):
            self._take(node, sides)

    def _take(self, node: cst.BinaryOperation, sides: tuple[str, str]) -> None:
        self.found[id(node)] = sides
        self.statements_found.update(id(s) for s in self.statements)


def plan(ctx, module: cst.Module) -> None:
    """Find the operations to rewrite; let the traversal visit their statements."""
    finder = _Candidates(ctx)
    walk(module, finder, prune=LAYOUT_TYPES)
    ctx.facts[_FOUND] = finder.found
    ctx.analysis.interesting.update(finder.statements_found)


def tensor_operands(ctx, original: cst.BinaryOperation, updated: cst.BaseExpression) -> cst.BaseExpression:
    """``1j * theta`` -> ``mindspore.Tensor(1j, dtype=mindspore.complex64) * theta.to(mindspore.complex64)``."""
    sides = ctx.facts.get(_FOUND, {}).get(id(original))
    if sides is None or not isinstance(updated, cst.BinaryOperation):
        return updated
    constant, operand = sides
    complex64 = ctx.ref("mindspore.complex64")
    value = getattr(updated, constant)
    tensor_constant = cst.Call(ctx.ref("mindspore.Tensor"), [
        cst.Arg(value.with_changes(lpar=[], rpar=[]) if isinstance(value, cst.BinaryOperation) else value),
        keyword_arg("dtype", complex64),
    ])
    changes = {constant: tensor_constant}
    why = "MindSpore's Tensor takes no Python complex operand"
    if not is_complex_tensor(getattr(original, operand), ctx):
        tensor = getattr(updated, operand)
        if not isinstance(tensor, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not tensor.lpar:
            tensor = tensor.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        changes[operand] = cst.Call(cst.Attribute(tensor, cst.Name("to")), [cst.Arg(complex64)])
        why += " and its CPU kernels no real-times-complex operation: the tensor is made complex64, as torch's result is"
    ctx.converted(original, "complex constant", f"{short(original)}: {why}")
    return updated.with_changes(**changes)
