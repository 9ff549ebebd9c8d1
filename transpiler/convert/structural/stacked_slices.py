"""A stack of equal slices at random offsets, as one indexing operation.

Character-level language-model scripts cut their batches as karpathy's do::

    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i:i+block_size] for i in ix])
    y = torch.stack([data[i+1:i+block_size+1] for i in ix])

torch runs the comprehension's 2 x batch_size slices in microseconds; in MindSpore
each is an operator launch (the loop also reads every item of ``ix``), so the two
lines cost about 40 ms a batch on CPU and took 36 of the 54 s that karpathy's
bigram.py ran for after conversion (900 steps with --jit, measured on MindSpore
2.10 CPU; 18 s with the rewrite below, the same losses at every evaluation). The
same rows are one gather::

    x = data[ix[:, None] + ops.arange(block_size)]
    y = data[ix[:, None] + ops.arange(1, block_size + 1)]

Only where the file shows what it needs to be the same: ``data`` is a tensor, ``ix``
a 1-D integer tensor drawn by ``torch.randint(high, (n,))`` or ``torch.randperm``, the
slice is ``data[i + a : i + b]`` with ``a`` and ``b`` not depending on ``i`` (so every
row is ``b - a`` long), and the stack is along dimension 0.
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.change_text import describe
from transpiler.convert.structural.name_reads import mentions
from transpiler.convert.tensor_properties import assigned_value

_DRAWS = ("torch.randint", "torch.randperm")


def convert(rewriter, original: cst.Call, updated: cst.Call) -> cst.BaseExpression | None:
    """The gather for ``torch.stack([data[i + a : i + b] for i in ix])``; None for any other stack."""
    ctx = rewriter.ctx
    found = _stacked_slice(original)
    if found is None:
        return None
    data, ix, lower, upper = found
    if not (_shows_tensor(ctx, data) and _draws_indices(ctx, ix)):
        return None
    updated_found = _stacked_slice(updated)  # the same parts, converted
    if updated_found is None:
        return None
    new_data, new_ix, new_lower, new_upper = updated_found
    column = cst.Subscript(new_ix, [cst.SubscriptElement(cst.Slice(lower=None, upper=None)),
                                    cst.SubscriptElement(cst.Index(cst.Name("None")))])
    bounds = [new_upper] if new_lower is None else [new_lower, new_upper]
    offsets = cst.Call(ctx.ref("mindspore.ops.arange"), [cst.Arg(bound) for bound in bounds])
    result = cst.Subscript(new_data, [cst.SubscriptElement(cst.Index(cst.BinaryOperation(column, cst.Add(), offsets)))])
    rewriter.changed()
    ctx.converted(original, "torch.stack", describe(original, result, why=(
        "one gather instead of a slicing operator per row (each is a launch in MindSpore); "
        "the rows are equal slices of a tensor at the drawn offsets")))
    return result


def _stacked_slice(call: cst.Call):
    """(data, ix, a or None, b) of ``stack([data[i + a : i + b] for i in ix])`` (``dim=0`` allowed)."""
    positional = [arg for arg in call.args if arg.keyword is None]
    keywords = [arg for arg in call.args if arg.keyword is not None]
    if len(positional) != 1 or positional[0].star:
        return None
    for arg in keywords:
        if arg.keyword.value not in ("dim", "axis") or not (isinstance(arg.value, cst.Integer) and arg.value.value == "0"):
            return None
    comprehension = positional[0].value
    if not isinstance(comprehension, (cst.ListComp, cst.GeneratorExp)):
        return None
    loop = comprehension.for_in
    if loop.inner_for_in is not None or loop.ifs or loop.asynchronous is not None \
            or not isinstance(loop.target, cst.Name) or not isinstance(loop.iter, cst.Name):
        return None
    index = loop.target.value
    element = comprehension.elt
    if not (isinstance(element, cst.Subscript) and isinstance(element.value, cst.Name) and len(element.slice) == 1
            and isinstance(element.slice[0].slice, cst.Slice) and element.slice[0].slice.step is None):
        return None
    cut = element.slice[0].slice
    if cut.lower is None or cut.upper is None or element.value.value == index or loop.iter.value == index:
        return None
    lower = _offset(cut.lower, index)
    upper = _offset(cut.upper, index)
    if lower is None or upper is None or upper is _ZERO:
        return None
    return element.value, loop.iter, (None if lower is _ZERO else lower), upper


_ZERO = cst.Integer("0")


def _offset(bound: cst.BaseExpression, index: str):
    """``a`` of ``i + a`` (``i + a + c`` too: a sum with ``i`` as its first term), ``_ZERO`` for
    ``i`` itself; None when ``i`` is not a term or appears in the rest."""
    terms = []
    node = bound
    while isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
        terms.append(node.right)
        node = node.left
    terms.append(node)
    terms.reverse()  # left to right
    if not (isinstance(terms[0], cst.Name) and terms[0].value == index):
        return None
    rest = terms[1:]
    if any(index in mentions(term) for term in rest):
        return None
    if not rest:
        return _ZERO
    total = rest[0]
    for term in rest[1:]:
        total = cst.BinaryOperation(total, cst.Add(), term)
    return total


def _shows_tensor(ctx, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """The file shows ``expr`` (torch source) holds a tensor: made by a torch call, a slice of
    one, or either branch of a conditional that picks between such names."""
    if depth > 8:
        return False
    if isinstance(expr, cst.Name):
        value = assigned_value(ctx, expr)
        return value is not None and _shows_tensor(ctx, value, depth + 1)
    if isinstance(expr, cst.Subscript):
        return _shows_tensor(ctx, expr.value, depth + 1)
    if isinstance(expr, cst.IfExp):
        return _shows_tensor(ctx, expr.body, depth + 1) and _shows_tensor(ctx, expr.orelse, depth + 1)
    if isinstance(expr, cst.Call):
        qualified = ctx.analysis.qualified(expr.func)
        return qualified is not None and qualified.startswith("torch.") and qualified not in (
            "torch.Size", "torch.device", "torch.dtype")
    return False


def _draws_indices(ctx, ix: cst.Name) -> bool:
    """``ix`` was last assigned a 1-D draw of integers: ``torch.randint(..., (n,))`` or
    ``torch.randperm(n)`` (sliced or not)."""
    value = assigned_value(ctx, ix)
    while isinstance(value, cst.Subscript) and len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Slice):
        value = value.value
    if not isinstance(value, cst.Call) or ctx.analysis.qualified(value.func) not in _DRAWS:
        return False
    if ctx.analysis.qualified(value.func) == "torch.randperm":
        return True
    sizes = [arg.value for arg in value.args if arg.keyword is not None and arg.keyword.value == "size"]
    positional = [arg.value for arg in value.args if arg.keyword is None and not arg.star]
    sizes += [value for value in positional if isinstance(value, (cst.Tuple, cst.List))]
    return len(sizes) == 1 and isinstance(sizes[0], (cst.Tuple, cst.List)) and len(sizes[0].elements) == 1 \
        and not isinstance(sizes[0].elements[0], cst.StarredElement)
