"""What the source shows of a tensor's dtype: integer and bool tensors, which torch
promotes and MindSpore's CPU kernels refuse, and complex ones.

Measured on MindSpore 2.10 CPU (each op in a fresh process): ``ops.log``,
``exp``, ``log1p``, ``expm1``, ``log2``, ``log10``, ``sin``, ``cos``, ``rsqrt``,
``erf`` ... of an int8/16/32/64, uint8 or bool tensor fail ("Select CPU
operator[Log] fail! Unsupported data type!"); torch computes them in float32
(its default dtype) on the values cast to float32. So where the source shows
that the input is an integer or bool tensor, the converted call casts it to
float32 first, which is exactly what torch computes. A float input (or one the
source does not show) is passed as it is.

What the source shows: integer factories (``torch.arange`` without a float
dtype -- its float form is float32 already, so the cast is exact there too --,
``torch.randint``, ``torch.randperm``, ``torch.tensor`` of int literals, any
factory with an integer ``dtype=``), integer casts (``.long()``, ``.int()``,
``.bool()``, ``.to(torch.long)`` ...), comparisons, and integer arithmetic of
those. ``is_complex_tensor`` reads complex tensors the same way (FFTs,
view_as_complex, polar, complex casts): ``ops.abs`` of one is complex64 where
torch's is float32. This module declares no rules.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from rewrite_rules.api import assigned_value, code_of, literal_value, parse_expr

RULES: list = []

_INTEGER_DTYPES = frozenset(f"torch.{name}" for name in (
    "int8", "int16", "int32", "int64", "uint8", "int", "long", "short", "bool", "uint16", "uint32", "uint64"))
_INTEGER_CASTS = frozenset({"long", "int", "short", "byte", "char", "bool"})
_INTEGER_FACTORIES = frozenset({"torch.arange", "torch.randint", "torch.randperm", "torch.randint_like"})
_DATA_FACTORIES = frozenset({"torch.tensor", "torch.as_tensor"})
_ANY_DTYPE_FACTORIES = frozenset({"torch.zeros", "torch.ones", "torch.full", "torch.empty", "torch.zeros_like",
                                  "torch.ones_like", "torch.full_like", "torch.eye"})
_INTEGER_LEGACY = frozenset(f"torch.{name}" for name in (
    "LongTensor", "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"))
_INTEGER_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)


def _qualified(ctx, node) -> str | None:
    return ctx.analysis.qualified(node)


def _keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def _integer_data(node: cst.BaseExpression) -> bool:
    try:
        value = literal_value(node)
    except (ValueError, SyntaxError, TypeError):
        return False
    items = [value]
    while items:
        item = items.pop()
        if isinstance(item, (list, tuple)):
            items.extend(item)
        elif not isinstance(item, int):  # bool is an int
            return False
    return True


def is_integer_tensor(node: cst.BaseExpression | None, ctx) -> bool:
    """``node`` (torch source) is an integer or bool tensor, as the source shows."""
    if node is None:
        return False
    if isinstance(node, cst.Comparison):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return is_integer_tensor(node.expression, ctx)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _INTEGER_OPERATORS):
        sides = (node.left, node.right)
        return any(is_integer_tensor(s, ctx) for s in sides) and all(
            isinstance(s, cst.Integer) or is_integer_tensor(s, ctx) for s in sides)
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Attribute) and _qualified(ctx, func) is None:  # a tensor method
        method = func.attr.value
        if method in _INTEGER_CASTS and not node.args:
            return True
        if method in ("to", "type") and len(node.args) == 1:
            return _qualified(ctx, node.args[0].value) in _INTEGER_DTYPES
        return False
    qualified = _qualified(ctx, func)
    dtype = _keyword(node, "dtype")
    if qualified in _INTEGER_FACTORIES | _DATA_FACTORIES | _ANY_DTYPE_FACTORIES and dtype is not None:
        return _qualified(ctx, dtype) in _INTEGER_DTYPES
    if qualified in _INTEGER_FACTORIES or qualified in _INTEGER_LEGACY:
        return True
    if qualified in _DATA_FACTORIES and node.args and node.args[0].keyword is None:
        return _integer_data(node.args[0].value)
    return False


_COMPLEX_FACTORIES = frozenset({
    *(f"torch.fft.{name}" for name in ("fft", "ifft", "rfft", "fft2", "ifft2", "rfft2", "fftn", "ifftn", "rfftn", "ihfft")),
    "torch.view_as_complex", "torch.polar", "torch.complex"})
_COMPLEX_DTYPES = frozenset({"torch.complex64", "torch.complex128", "torch.cfloat", "torch.cdouble"})


def holds_python_complex(data) -> bool:
    """Whether ``data`` as written holds a Python complex number (``1 + 2j``, ``complex(a, b)``,
    ``[k * 1j for k in ...]``): torch makes complex64 of it (its default dtype's complex)."""
    if isinstance(data, cst.Imaginary):
        return True
    if isinstance(data, (cst.List, cst.Tuple)):
        return any(isinstance(e, cst.Element) and holds_python_complex(e.value) for e in data.elements)
    if isinstance(data, (cst.ListComp, cst.GeneratorExp)):
        return holds_python_complex(data.elt)
    if isinstance(data, cst.BinaryOperation):
        return holds_python_complex(data.left) or holds_python_complex(data.right)
    if isinstance(data, cst.UnaryOperation):
        return holds_python_complex(data.expression)
    return isinstance(data, cst.Call) and isinstance(data.func, cst.Name) and data.func.value == "complex"


def writes_python_complex(ctx) -> bool:
    """The file writes a Python complex number somewhere (an imaginary literal, ``complex(...)``)."""
    if _WRITES_COMPLEX not in ctx.facts:
        module = ctx.facts.get("module")
        ctx.facts[_WRITES_COMPLEX] = module is not None and bool(
            m.findall(module, m.Imaginary() | m.Call(func=m.Name("complex"))))
    return ctx.facts[_WRITES_COMPLEX]


_WRITES_COMPLEX = "writes python complex numbers"


# what keeps a complex receiver complex, besides _SAME_DTYPE_METHODS
_COMPLEX_KEEPING = frozenset({"conj", "conj_physical", "resolve_conj", "resolve_neg", "adjoint", "neg", "negative"})


def is_complex_tensor(node: cst.BaseExpression | None, ctx, depth: int = 0) -> bool:
    """``node`` (torch source) is a complex tensor, as the source shows (an FFT, view_as_complex,
    polar, a complex cast, a factory with a complex dtype, torch.tensor of Python complex numbers),
    one of those conjugated, negated, indexed or reshaped, or a name last assigned one of those."""
    if node is None or depth > 8:
        return False
    deeper = depth + 1
    if isinstance(node, cst.Name):
        return is_complex_tensor(assigned_value(ctx, node), ctx, deeper)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return is_complex_tensor(node.expression, ctx, deeper)
    if isinstance(node, cst.Subscript):
        return is_complex_tensor(node.value, ctx, deeper)
    if isinstance(node, cst.Attribute) and node.attr.value in ("T", "mT", "H", "mH") and _qualified(ctx, node) is None:
        return is_complex_tensor(node.value, ctx, deeper)
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Attribute) and _qualified(ctx, func) is None:
        method = func.attr.value
        if method in ("cfloat", "cdouble") and not node.args:
            return True
        if method in _SAME_DTYPE_METHODS | _COMPLEX_KEEPING:
            return is_complex_tensor(func.value, ctx, deeper)
        return method in ("to", "type") and len(node.args) == 1 and \
            _qualified(ctx, node.args[0].value) in _COMPLEX_DTYPES
    qualified = _qualified(ctx, func)
    if qualified in _COMPLEX_FACTORIES:
        return True
    if qualified is None or not qualified.startswith("torch."):
        return False
    dtype = _keyword(node, "dtype")
    if dtype is not None and not (isinstance(dtype, cst.Name) and dtype.value == "None"):
        return _qualified(ctx, dtype) in _COMPLEX_DTYPES
    positional = [a.value for a in node.args if a.keyword is None and not a.star]
    if qualified in _DATA_FACTORIES:
        data = positional[0] if positional else _keyword(node, "data")
        if isinstance(data, cst.Name):
            data = assigned_value(ctx, data)
        return data is not None and holds_python_complex(data)
    if qualified == "torch.full":
        fill = _keyword(node, "fill_value") or (positional[1] if len(positional) > 1 else None)
        return fill is not None and holds_python_complex(fill)
    if qualified in ("torch.conj", "torch.conj_physical", "torch.resolve_conj", "torch.resolve_neg", "torch.adjoint",
                     "torch.neg", "torch.clone"):
        return bool(positional) and is_complex_tensor(positional[0], ctx, deeper)
    return False


def source_argument(call, name: str, position: int = 0) -> cst.BaseExpression | None:
    """The argument ``name`` of the torch call as written (before nested rewrites)."""
    source = call.source
    if source is None:
        return None
    keyword = _keyword(source, name)
    if keyword is not None:
        return keyword
    positional = [a.value for a in source.args if a.keyword is None and not a.star]
    return positional[position] if position < len(positional) else None


def float_input(name: str = "input"):
    """A hook casting argument ``name`` to float32 when the source shows an integer or bool tensor."""

    def hook(call, ctx):
        if is_integer_tensor(source_argument(call, name), ctx):
            value = call.get(name)
            text = code_of(value)
            if not isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)):
                text = f"({text})"
            call.set(name, f"{text}.astype({code_of(ctx.ref('mindspore.float32'))})")

    return hook


_FLOAT_DTYPES = {**{f"torch.{n}": "float32" for n in ("float32", "float")},
                 **{f"torch.{n}": "float16" for n in ("float16", "half")},
                 **{f"torch.{n}": "float64" for n in ("float64", "double")}}
_FLOAT_CASTS = {"float": "float32", "half": "float16", "double": "float64"}
# factories whose result is torch's default dtype (float32) unless dtype= says otherwise
_FLOAT_FACTORIES = frozenset({"torch.randn", "torch.rand", "torch.zeros", "torch.ones", "torch.empty",
                              "torch.linspace", "torch.logspace", "torch.randn_like", "torch.rand_like"})
FLOAT_ORDER = ("float16", "float32", "float64")


def float_dtype(node: cst.BaseExpression | None, ctx) -> str | None:
    """The float dtype (``"float16"``, ``"float32"``, ``"float64"``) the source shows ``node``
    (torch source) has: ``.float()``/``.half()``/``.to(torch.float16)``, a float factory
    (``torch.randn``, ``torch.zeros`` ... without an integer ``dtype=``), ``torch.tensor`` of
    float literals; None when it does not show a float dtype."""
    if not isinstance(node, cst.Call):
        return None
    func = node.func
    if isinstance(func, cst.Attribute) and _qualified(ctx, func) is None:
        method = func.attr.value
        if method in _FLOAT_CASTS and not node.args:
            return _FLOAT_CASTS[method]
        if method in ("to", "type") and len(node.args) == 1:
            return _FLOAT_DTYPES.get(_qualified(ctx, node.args[0].value))
        return None
    qualified = _qualified(ctx, func)
    dtype = _keyword(node, "dtype")
    if qualified in _FLOAT_FACTORIES | _DATA_FACTORIES | _ANY_DTYPE_FACTORIES | _INTEGER_FACTORIES and dtype is not None:
        return _FLOAT_DTYPES.get(_qualified(ctx, dtype))
    if qualified in _FLOAT_FACTORIES:
        return "float32"
    if qualified in _DATA_FACTORIES and node.args and node.args[0].keyword is None:
        try:
            value = literal_value(node.args[0].value)
        except (ValueError, SyntaxError, TypeError):
            return None
        items, floats = [value], False
        while items:
            item = items.pop()
            if isinstance(item, (list, tuple)):
                items.extend(item)
            elif isinstance(item, float):
                floats = True
            elif not isinstance(item, int):
                return None
        return "float32" if floats else None
    return None


# unary functions / methods torch computes in float32 for an integer or bool input
FLOAT_RESULT = frozenset({
    "acos", "arccos", "acosh", "arccosh", "asin", "arcsin", "asinh", "arcsinh", "atan", "arctan", "atanh",
    "arctanh", "cos", "cosh", "digamma", "erf", "erfc", "erfinv", "exp", "exp2", "expm1", "i0", "lgamma", "log",
    "log10", "log1p", "log2", "reciprocal", "rsqrt", "sin", "sinc", "sinh", "tan", "deg2rad", "rad2deg", "sqrt",
})


def float_receiver(call, ctx):
    """A MethodRule hook (``x.log()``, ``x.exp()``, ``x.sqrt()`` ...): the receiver is cast to float32
    first where the source shows an integer or bool tensor, as ``float_input`` does for the functions."""
    result = call.call
    source = call.source.func.value if call.source is not None and isinstance(call.source.func, cst.Attribute) else None
    if is_integer_tensor(source, ctx):
        receiver = call.receiver
        text = code_of(receiver)
        if not isinstance(receiver, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) and not receiver.lpar:
            text = f"({text})"
        cast = parse_expr(f"{text}.astype({code_of(ctx.ref('mindspore.float32'))})")
        result = result.with_changes(func=result.func.with_changes(value=cast))
    return result


# What yields a bool tensor: comparisons and predicates (as functions or methods), bool casts;
# and what keeps its receiver's dtype (a bool mask reshaped is still one).
_BOOL_PREDICATES = frozenset({
    "eq", "ne", "gt", "ge", "lt", "le", "greater", "greater_equal", "less", "less_equal", "not_equal",
    "isnan", "isinf", "isfinite", "isneginf", "isposinf", "isreal", "signbit", "isclose", "isin",
    "logical_and", "logical_or", "logical_not", "logical_xor", "bool", "any", "all"})
_SAME_DTYPE_METHODS = frozenset({
    "unsqueeze", "squeeze", "view", "reshape", "expand", "expand_as", "transpose", "permute", "flatten",
    "repeat", "contiguous", "clone", "detach", "t", "flip", "tril", "triu", "view_as", "reshape_as"})
_BOOL_OPERATORS = (cst.BitAnd, cst.BitOr, cst.BitXor)


def is_bool_tensor(node: cst.BaseExpression | None, ctx, depth: int = 0) -> bool:
    """``node`` (torch source) is a bool tensor, as the source shows: a comparison,
    a predicate (``torch.isnan``, ``x.eq(y)``, ``logical_and`` ...), a bool cast or
    factory, ``~``/``&``/``|`` of those, one of those indexed or reshaped, or a name
    last assigned one of those."""
    if node is None or depth > 8:
        return False
    deeper = depth + 1
    if isinstance(node, cst.Comparison):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.BitInvert):
        return is_bool_tensor(node.expression, ctx, deeper)
    if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _BOOL_OPERATORS):
        return is_bool_tensor(node.left, ctx, deeper) and is_bool_tensor(node.right, ctx, deeper)
    if isinstance(node, cst.Subscript):
        return is_bool_tensor(node.value, ctx, deeper)
    if isinstance(node, cst.Name):
        return is_bool_tensor(assigned_value(ctx, node), ctx, deeper)
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    qualified = _qualified(ctx, func)
    if isinstance(func, cst.Attribute) and qualified is None:  # a tensor method
        method = func.attr.value
        if method in ("to", "type") and len(node.args) == 1:
            return _qualified(ctx, node.args[0].value) == "torch.bool"
        if method in _SAME_DTYPE_METHODS:
            return is_bool_tensor(func.value, ctx, deeper)
        return method in _BOOL_PREDICATES
    if qualified is None or not qualified.startswith("torch."):
        return False
    dtype = _keyword(node, "dtype")
    if dtype is not None:
        return _qualified(ctx, dtype) == "torch.bool"
    return qualified.rsplit(".", 1)[-1] in _BOOL_PREDICATES or qualified == "torch.BoolTensor"
