"""``.values`` and ``.indices`` of torch's (values, indices) results read by position.

torch's ``topk``, ``sort``, ``kthvalue``, ``max``/``min``/``median``/``mode`` along a
dim and ``cummax``/``cummin`` return named tuples; MindSpore's return plain tuples, and
the rules cast the indices to torch's int64 (rewrite_rules/helpers.py,
``indices_as_int64``). Read by name, as public research code does
(``logits.topk(k, dim=1).indices`` in perceiver-pytorch and x-transformers,
``torch.max(x, dim=-1).values`` in monai and s4's performer), the converted read
failed where it ran: "'tuple' object has no attribute 'indices'". So the read is
by position, and the cast applies to the one item read::

    logits.topk(k, dim=1).indices     ops.topk(logits, k, dim=1)[1].astype(mindspore.int64)
    torch.max(x, dim=-1).values       ops.max(x, -1)[0]
    x.sort(dim=-1)[1]                 ops.sort(x, axis=-1)[1].astype(mindspore.int64)

Which calls count: the torch functions by their resolved name; methods named
``topk``, ``kthvalue`` or ``sort`` (``ndarray.sort`` returns None, so nothing reads a
field of it); and methods named ``max``, ``min``, ``median``, ``nanmedian``, ``mode``,
``cummax``, ``cummin`` only when given ``dim=``: pandas has these methods too, and a
Series' ``.values`` is its array (``df.max(1).values`` in a data loader stays).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

_FIELDS = {"values": 0, "indices": 1}
_FUNCTIONS = frozenset(f"torch.{name}" for name in (
    "topk", "sort", "kthvalue", "max", "min", "median", "nanmedian", "mode", "cummax", "cummin"))
_ANY_RECEIVER = frozenset({"topk", "kthvalue", "sort"})
_WITH_DIM = frozenset({"max", "min", "median", "nanmedian", "mode", "cummax", "cummin"})

# the pair the rules write: tuple(t.astype(I) if i else t for i, t in enumerate(E))
_PAIR = m.Call(
    func=m.Name("tuple"),
    args=[m.Arg(m.GeneratorExp(
        elt=m.IfExp(test=m.Name("i"), body=m.Call(func=m.Attribute(m.Name("t"), m.Name("astype")), args=[m.Arg()]),
                    orelse=m.Name("t")),
        for_in=m.CompFor(target=m.Tuple([m.Element(m.Name("i")), m.Element(m.Name("t"))]),
                         iter=m.Call(func=m.Name("enumerate"), args=[m.Arg()]), ifs=[], inner_for_in=None)))])


def field_read(rewriter, original: cst.Attribute, updated: cst.BaseExpression) -> cst.BaseExpression | None:
    """``updated`` read by position when ``original`` reads a field of such a result, else None."""
    index = _FIELDS.get(original.attr.value)
    if index is None or not isinstance(original.value, cst.Call) or not _names_a_pair(rewriter, original.value):
        return None
    rewriter.changed()
    return item(updated.value, index)


def index_read(rewriter, updated: cst.Subscript) -> cst.BaseExpression:
    """``pair[0]`` / ``pair[1]`` of the rules' pair: the item of the call, cast alone."""
    index = _literal_index(updated)
    if index is None or not m.matches(updated.value, _PAIR):
        return updated
    rewriter.changed()
    return item(updated.value, index)


def item(value: cst.BaseExpression, index: int) -> cst.BaseExpression:
    """Item ``index`` of ``value``: of the rules' pair, the call's item with its cast."""
    if m.matches(value, _PAIR):
        generator = value.args[0].value
        call = generator.for_in.iter.args[0].value
        taken = _subscript(call, index)
        return generator.elt.body.with_changes(func=generator.elt.body.func.with_changes(value=taken)) \
            if index else taken
    return _subscript(value, index)


def _names_a_pair(rewriter, call: cst.Call) -> bool:
    qualified = rewriter.analysis.qualified(call.func)
    if qualified is not None:
        return qualified in _FUNCTIONS
    if not isinstance(call.func, cst.Attribute):
        return False
    name = call.func.attr.value
    return name in _ANY_RECEIVER or (name in _WITH_DIM and any(
        arg.keyword is not None and arg.keyword.value == "dim" for arg in call.args))


def _subscript(value: cst.BaseExpression, index: int) -> cst.Subscript:
    return cst.Subscript(value, [cst.SubscriptElement(cst.Index(cst.Integer(str(index))))])


def _literal_index(subscript: cst.Subscript) -> int | None:
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return None
    value = subscript.slice[0].slice.value
    return int(value.value) if isinstance(value, cst.Integer) and value.value in ("0", "1") else None
