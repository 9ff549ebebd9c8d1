"""A value a method caches in a dict attribute is computed where it is returned.

timm's LeViT, EfficientFormer and TinyViT keep, in eval mode, the attention
biases gathered from their parameters in a dict keyed by device::

    device_key = str(device)
    if device_key not in self.attention_bias_cache:
        self.attention_bias_cache[device_key] = self.attention_biases[:, self.attention_bias_idxs]
    return self.attention_bias_cache[device_key]

Graph mode holds a Cell's dict attribute as a constant and cannot store into
it ("'tuple' object does not support item assignment" when the compiled graph
runs, measured on MindSpore 2.10 CPU). The cached value is what the expression
gives on every call (the parameters do not change between calls that read
the cache, and torch clears it when training resumes), so the method returns
the expression itself: ``return self.attention_biases[:, self.attention_bias_idxs]``.
A key made just before only for the cache (``device_key = str(device)``) goes.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from transpiler.convert.formatting import KeepsFormatting
from transpiler.convert.walk import LAYOUT_TYPES, rewrite
from transpiler.convert.structural.name_reads import mentions


def without_attribute_caches(module: cst.Module, to_format) -> cst.Module:
    return rewrite(module, _Caches(to_format))


def _self_attribute(expr) -> str | None:
    if m.matches(expr, m.Attribute(value=m.Name("self"), attr=m.Name())):
        return expr.attr.value
    return None


def _cached(check: cst.BaseStatement, ret: cst.BaseStatement):
    """(key, value) of ``if k not in self.c: self.c[k] = v`` + ``return self.c[k]``."""
    if not (isinstance(check, cst.If) and check.orelse is None and isinstance(check.body, cst.IndentedBlock)
            and len(check.body.body) == 1 and isinstance(check.test, cst.Comparison)
            and len(check.test.comparisons) == 1 and isinstance(check.test.comparisons[0].operator, cst.NotIn)):
        return None
    key, cache = check.test.left, _self_attribute(check.test.comparisons[0].comparator)
    store = check.body.body[0]
    if cache is None or not (isinstance(store, cst.SimpleStatementLine) and len(store.body) == 1
                             and isinstance(store.body[0], cst.Assign) and len(store.body[0].targets) == 1):
        return None
    entry = m.Subscript(value=m.Attribute(value=m.Name("self"), attr=m.Name(cache)),
                        slice=[m.SubscriptElement(m.Index(value=m.DoNotCare()))])
    target, value = store.body[0].targets[0].target, store.body[0].value
    if not (m.matches(target, entry) and target.slice[0].slice.value.deep_equals(key)):
        return None
    if not (isinstance(ret, cst.SimpleStatementLine) and len(ret.body) == 1 and isinstance(ret.body[0], cst.Return)):
        return None
    read = ret.body[0].value
    if not (read is not None and m.matches(read, entry) and read.slice[0].slice.value.deep_equals(key)):
        return None
    if cache in _attributes_read(value):
        return None
    return key, value


def _attributes_read(expr: cst.CSTNode) -> set[str]:
    found = set()

    class _Reads(cst.CSTVisitor):
        def visit_Attribute(self, node):
            name = _self_attribute(node)
            if name is not None:
                found.add(name)

    expr.visit(_Reads())
    return found


def _key_only(statement: cst.BaseStatement, key: cst.BaseExpression) -> bool:
    """``key = str(device)`` (or a name / attribute read): made for the cache alone, no call with effects."""
    if not (isinstance(key, cst.Name) and isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1
            and m.matches(statement.body[0].targets[0].target, m.Name(key.value))):
        return False
    value = statement.body[0].value
    if m.matches(value, m.Call(func=m.Name("str"), args=[m.Arg(value=m.Name() | m.Attribute(), star="")])):
        return True
    return isinstance(value, (cst.Name, cst.Attribute))


class _Caches(KeepsFormatting):
    prune = LAYOUT_TYPES

    def __init__(self, to_format):
        super().__init__(to_format)
        self.depth = 0  # inside a class

    def visit_ClassDef(self, node):
        self.depth += 1

    def leave_ClassDef(self, original_node, updated_node):
        self.depth -= 1
        return updated_node

    def leave_IndentedBlock(self, original_node, updated_node):
        if not self.depth:
            return updated_node
        body = list(updated_node.body)
        for index in range(len(body) - 1):
            found = _cached(body[index], body[index + 1])
            if found is None:
                continue
            key, value = found
            ret = body[index + 1]
            returned = ret.with_changes(body=[ret.body[0].with_changes(value=value)],
                                        leading_lines=body[index].leading_lines)
            start = index
            rest = body[index + 2:]
            if index > 0 and _key_only(body[index - 1], key) and not any(key.value in mentions(s) for s in rest):
                start = index - 1
                returned = returned.with_changes(leading_lines=body[start].leading_lines)
            self.to_format.add(returned)
            return updated_node.with_changes(body=[*body[:start], returned, *rest])
        return updated_node
