"""Numpy scalars and ranges next to tensors, where torch accepts what MindSpore does not.

Measured on MindSpore 2.10 (tests/rules/test_promotions.py):

- A numpy scalar on the LEFT of an arithmetic operator with a MindSpore Tensor
  makes numpy's operator run first (MindSpore's Tensor does not make numpy defer
  as torch's does): ``-np.log(10000.0) * ops.arange(0, 8, 2)`` is a numpy
  ndarray, so ``ops.exp`` of it fails ("Failed calling Exp ... ndarray") and
  ``np.sqrt(d) * x`` silently leaves the graph (no gradient). Written as a
  Python float (``float(np.log(10000.0))``) the result stays a Tensor with
  torch's values: only numpy functions whose result from numbers is a float
  (``np.log``, ``np.sqrt``, ``np.float32(...)`` ...) are wrapped, and only on
  the left of an operator whose other side the file does not show to be a
  Python number.
- A ``range`` as an index (``x[range(n)]``, ``x[:, range(n)]``) raises
  IndexError in MindSpore; torch (and numpy) read it as the list of its
  values, so it is written ``list(range(n))`` (a list cannot be indexed by a
  range, so the rewrite changes nothing for non-tensors).
- A numpy array as an index (TimesNet's ``amplitudes[:, top_list]`` with
  ``top_list = top.detach().cpu().numpy()``): MindSpore's Tensor refuses it in
  every position ("For tuple index, the types only support ... 'List' ..."),
  torch reads it as its values; written ``top_list.tolist()``, which indexes a
  numpy array the same way, where the file shows the index holds one and does
  not show the indexed value does.
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.names import chain_parts
from transpiler.convert.structural.numbers import Numbers
from transpiler.convert.structural import provenance
from transpiler.convert.tensor_properties import FOREIGN_ROOTS, known_foreign
from transpiler.convert.walk import LAYOUT_TYPES, StatementVisitor, walk

# numpy functions whose value on Python numbers is a numpy float scalar
_FLOAT_FUNCTIONS = frozenset({
    "log", "log2", "log10", "log1p", "exp", "exp2", "expm1", "sqrt", "cbrt", "sin", "cos", "tan", "arcsin",
    "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh", "power", "float_power", "hypot", "deg2rad", "rad2deg",
    "radians", "degrees", "float16", "float32", "float64", "double", "single", "true_divide", "divide",
})
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power)


def _numpy_function(ctx, func: cst.BaseExpression) -> str | None:
    parts = chain_parts(func)
    if parts is None or len(parts) != 2:
        return None
    binding = ctx.analysis.imports.get(parts[0])
    if binding is None or binding.qualified != "numpy":
        return None
    return parts[1]


def _is_numpy(ctx, expr: cst.BaseExpression) -> bool:
    """``np.arange(4)``, ``np.ones(3) * 2``: numpy's own result (a method chain or arithmetic on it)."""
    while isinstance(expr, (cst.BinaryOperation, cst.Call, cst.Attribute, cst.Subscript)):
        if isinstance(expr, cst.Call) and _numpy_function(ctx, expr.func) is not None:
            return True
        expr = expr.left if isinstance(expr, cst.BinaryOperation) else expr.func if isinstance(expr, cst.Call) \
            else expr.value
    return False


def _is_numpy_float(ctx, expr: cst.BaseExpression, numbers: Numbers) -> bool:
    """``np.log(10000.0)``, ``np.sqrt(d)`` with arguments the file shows are numbers (or a
    ``.shape`` entry, a name or an attribute: a tensor there would be an error in torch too)."""
    if not isinstance(expr, cst.Call) or _numpy_function(ctx, expr.func) not in _FLOAT_FUNCTIONS:
        return False
    return bool(expr.args) and all(
        a.keyword is None and not a.star and (
            numbers.is_number(a.value) or isinstance(a.value, (cst.Name, cst.Attribute, cst.Subscript)))
        for a in expr.args)


def float_numpy_operand(ctx, original: cst.BinaryOperation, updated: cst.BinaryOperation):
    """``np.log(10000.0) * t`` -> ``float(np.log(10000.0)) * t`` (also under a unary minus)."""
    if not isinstance(original.operator, _ARITHMETIC):
        return updated
    numbers = Numbers(provenance.provenance_of(ctx))
    left, updated_left = original.left, updated.left
    negated = isinstance(left, cst.UnaryOperation) and isinstance(left.operator, cst.Minus) and not left.lpar
    if negated:
        left = left.expression
        updated_left = updated_left.expression if isinstance(updated_left, cst.UnaryOperation) else None
    if updated_left is None or left.lpar or not _is_numpy_float(ctx, left, numbers):
        return updated
    if numbers.is_number(original.right) or _is_numpy(ctx, original.right):
        return updated  # numbers or numpy on both sides: no tensor, nothing to change
    wrapped = cst.Call(cst.Name("float"), [cst.Arg(updated_left)])
    if negated:
        wrapped = updated.left.with_changes(expression=wrapped)
    ctx.converted(original.left, "numpy scalar",
                  f"{code_of_short(original.left)} -> a Python float: numpy's operator would make the result an "
                  "ndarray (MindSpore's Tensor does not make numpy defer as torch's does)")
    return updated.with_changes(left=wrapped)


def code_of_short(node: cst.CSTNode) -> str:
    return cst.Module([]).code_for_node(node)


def _is_range(expr: cst.BaseExpression) -> bool:
    return (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "range"
            and not any(a.keyword is not None or a.star for a in expr.args))


def list_range_index(ctx, original: cst.Subscript, updated: cst.Subscript):
    """``x[range(n)]``, ``x[:, range(n)]`` -> ``x[list(range(n))]`` ..."""
    if not any(isinstance(e.slice, cst.Index) and _is_range(e.slice.value) for e in updated.slice):
        return updated
    if "range" in ctx.analysis.bound_names:
        return updated  # the file's own range
    elements = []
    for element in updated.slice:
        if isinstance(element.slice, cst.Index) and _is_range(element.slice.value):
            element = element.with_changes(slice=element.slice.with_changes(
                value=cst.Call(cst.Name("list"), [cst.Arg(element.slice.value)])))
        elements.append(element)
    ctx.converted(original, "range index", "a range used as an index -> list(range(...)): MindSpore's Tensor "
                  "refuses a range index")
    return updated.with_changes(slice=elements)


_MAKES_NUMPY = "makes numpy objects"  # ctx.facts: the file imports numpy (scipy, pandas ...) or calls .numpy()


def _numpy_index(ctx, element: cst.SubscriptElement) -> bool:
    return isinstance(element.slice, cst.Index) and isinstance(element.slice.value, (cst.Name, cst.Call)) \
        and known_foreign(ctx, element.slice.value)


def numpy_array_index(ctx, original: cst.Subscript, updated: cst.Subscript):
    """``x[:, top_list]`` of a numpy ``top_list`` -> ``x[:, top_list.tolist()]``."""
    if not ctx.facts.get(_MAKES_NUMPY) or not any(_numpy_index(ctx, e) for e in original.slice) or known_foreign(ctx, original.value):
        return updated
    elements = []
    for source, element in zip(original.slice, updated.slice):
        if _numpy_index(ctx, source):
            element = element.with_changes(slice=element.slice.with_changes(
                value=cst.Call(cst.Attribute(element.slice.value, cst.Name("tolist")))))
        elements.append(element)
    ctx.converted(original, "numpy index", "a numpy array used as an index -> its .tolist(): MindSpore's Tensor "
                  "refuses a numpy index")
    return updated.with_changes(slice=elements)


class _Candidates(StatementVisitor):
    """Statements holding a numpy float on the left of an operator, a range or numpy index."""

    def __init__(self, ctx):
        super().__init__()
        self.ctx = ctx
        self.found: set[int] = set()
        # (subscript, its statements) indexed by a name or call: numpy indexes only where the
        # file makes numpy objects at all (the question costs a look at the name's values)
        self.indexed: list[tuple[cst.Subscript, list[int]]] = []
        self.makes_numpy = any(b.qualified.split(".", 1)[0] in FOREIGN_ROOTS for b in ctx.analysis.imports.values())

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        left = node.left.expression if isinstance(node.left, cst.UnaryOperation) else node.left
        if isinstance(left, cst.Call) and _numpy_function(self.ctx, left.func) in _FLOAT_FUNCTIONS:
            self.found.update(id(s) for s in self.statements)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "numpy" and not node.args:
            self.makes_numpy = True

    def visit_Subscript(self, node: cst.Subscript) -> None:
        if any(isinstance(e.slice, cst.Index) and _is_range(e.slice.value) for e in node.slice):
            self.found.update(id(s) for s in self.statements)
        elif any(isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.Name, cst.Call)) for e in node.slice):
            self.indexed.append((node, [id(s) for s in self.statements]))


def plan(ctx, module: cst.Module) -> None:
    """Let the traversal visit the statements (and those enclosing them) this module rewrites."""
    finder = _Candidates(ctx)
    walk(module, finder, prune=LAYOUT_TYPES)
    ctx.facts[_MAKES_NUMPY] = finder.makes_numpy
    if finder.makes_numpy:
        for node, statements in finder.indexed:
            if any(_numpy_index(ctx, e) for e in node.slice):
                finder.found.update(statements)
    ctx.analysis.interesting.update(finder.found)
