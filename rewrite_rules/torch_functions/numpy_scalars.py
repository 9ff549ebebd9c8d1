"""Numpy scalars passed where MindSpore wants a Python number.

Measured on MindSpore 2.10: ``ops.arange(np.int64(5))`` (also numpy int32 and
float32 scalars) fails ("For arange, the input type must be int or float or a
TensorScalar"), where torch takes them; ``np.float64`` passes (it is a Python
float). Where the source shows a numpy integer scalar (``np.int64(n)``,
``np.prod(x.shape)``, ``np.sum(...)`` of a shape) the argument is written
``int(...)``; a numpy float32/float16 constructor is written ``float(...)``:
the same value as a Python number. This module declares no rules.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.api import dotted_parts

RULES: list = []

_INT_CONSTRUCTORS = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "intc",
                               "intp", "int_", "longlong"})
_FLOAT_CONSTRUCTORS = frozenset({"float16", "float32", "half", "single"})
_SHAPE_REDUCTIONS = frozenset({"prod", "product", "sum", "max", "min"})


def numpy_function(ctx, func: cst.BaseExpression) -> str | None:
    """``np.log`` -> ``"log"`` where ``np`` is the file's numpy import; None otherwise."""
    parts = dotted_parts(func)
    if parts is None or len(parts) != 2:
        return None
    binding = ctx.analysis.imports.get(parts[0])
    return parts[1] if binding is not None and binding.qualified == "numpy" else None


def _is_shape(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Attribute):
        return expr.attr.value == "shape"
    if isinstance(expr, cst.Subscript):
        return _is_shape(expr.value)
    return False


def python_number(expr: cst.BaseExpression | None, ctx) -> str | None:
    """``"int"`` or ``"float"``: the Python type that holds the value of the numpy scalar the
    source shows ``expr`` is; None when it is not shown to be one."""
    if not isinstance(expr, cst.Call) or not expr.args:
        return None
    name = numpy_function(ctx, expr.func)
    if name in _INT_CONSTRUCTORS:
        return "int"
    if name in _FLOAT_CONSTRUCTORS:
        return "float"
    if name in _SHAPE_REDUCTIONS and len(expr.args) == 1 and _is_shape(expr.args[0].value):
        return "int"
    return None


def python_numbers(*names: str):
    """A hook writing the arguments ``names`` as Python numbers where the source shows numpy scalars."""

    def hook(call, ctx):
        from rewrite_rules.torch_functions.integer_inputs import source_argument

        for position, name in enumerate(names):
            kind = python_number(source_argument(call, name, position), ctx)
            value = call.get(name)
            if kind is not None and value is not None:
                call.set(name, cst.Call(cst.Name(kind), [cst.Arg(value)]))

    return hook
