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

The same holds for a value cached in an attribute that starts as None
(lucidrains' PaLM and CoCa: the causal mask and the rotary embedding, first
``register_buffer("mask", None, persistent=False)``)::

    def get_mask(self, n, device):
        if self.mask is not None and self.mask.shape[-1] >= n:
            return self.mask[:n, :n]
        mask = ops.ones((n, n), dtype=mindspore.bool_).triu(1)
        self.mask = mask
        return mask

Graph mode cannot set the attribute in the compiled graph ("For 'Cast', the
input 'dtype' expect a type, but got AbstractNegligible" further on, measured);
the cache hit (an ``if`` whose test starts ``self.mask is not None``, returning)
and the store go, in a Cell (a class with a ``construct``), where nothing else of
the class reads the attribute: the method computes the value on every call, as
it did on the first.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from transpiler.convert.formatting import KeepsFormatting
from transpiler.convert.walk import LAYOUT_TYPES, rewrite
from transpiler.convert.structural.name_reads import mentions


def without_attribute_caches(module: cst.Module, to_format) -> cst.Module:
    return rewrite(module, _Caches(to_format, _none_checks(module)))


def _none_checks(module: cst.Module) -> frozenset[str]:
    """The module's functions ``def exists(val): return val is not None`` (lucidrains' helper)."""
    found = set()
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef) and len(statement.params.params) == 1 \
                and not isinstance(statement.params.star_arg, cst.Param) and not statement.params.kwonly_params \
                and isinstance(statement.body, cst.IndentedBlock) and len(statement.body.body) == 1:
            param = statement.params.params[0].name.value
            if m.matches(statement.body.body[0], m.SimpleStatementLine(body=[m.Return(value=m.Comparison(
                    left=m.Name(param), comparisons=[m.ComparisonTarget(operator=m.IsNot(), comparator=m.Name("None"))]))])):
                found.add(statement.name.value)
    return frozenset(found)


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

    def __init__(self, to_format, none_checks: frozenset[str] = frozenset()):
        super().__init__(to_format)
        self.depth = 0  # inside a class
        self.none_checks = none_checks

    def visit_ClassDef(self, node):
        self.depth += 1

    def leave_ClassDef(self, original_node, updated_node):
        self.depth -= 1
        return _without_none_caches(updated_node, self.none_checks)

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


def _none_cache_hit(statement, none_checks: frozenset[str]) -> str | None:
    """The attribute of ``if self.a is not None [and ...]: return ...`` (no else;
    ``exists(self.a)`` with ``exists`` one of ``none_checks``)."""
    if not (isinstance(statement, cst.If) and statement.orelse is None and isinstance(statement.body, cst.IndentedBlock)
            and len(statement.body.body) == 1 and m.matches(statement.body.body[0],
                                                            m.SimpleStatementLine(body=[m.Return()]))):
        return None
    test = statement.test
    while isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        test = test.left
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 \
            and isinstance(test.comparisons[0].operator, cst.IsNot) \
            and m.matches(test.comparisons[0].comparator, m.Name("None")):
        return _self_attribute(test.left)
    if m.matches(test, m.Call(func=m.Name(), args=[m.Arg(keyword=None, star="")])) and test.func.value in none_checks:
        return _self_attribute(test.args[0].value)
    return None


def _stored(statement, attribute: str) -> str | None:
    """The name of ``self.attribute = name``."""
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1 \
            and _self_attribute(statement.body[0].targets[0].target) == attribute \
            and isinstance(statement.body[0].value, cst.Name):
        return statement.body[0].value.value
    return None


def _returns(statement, name: str) -> bool:
    return m.matches(statement, m.SimpleStatementLine(body=[m.Return(value=m.Name(name))]))


def _self_reads(node: cst.CSTNode, attribute: str) -> int:
    count = 0

    class _Reads(cst.CSTVisitor):
        def visit_Attribute(self, inner):
            nonlocal count
            count += _self_attribute(inner) == attribute

    node.visit(_Reads())
    return count


def _none_sets(node: cst.CSTNode, attribute: str) -> int:
    """``self.attribute = None`` statements in ``node``."""
    count = 0

    class _Sets(cst.CSTVisitor):
        def visit_Assign(self, inner):
            nonlocal count
            count += len(inner.targets) == 1 and _self_attribute(inner.targets[0].target) == attribute \
                and m.matches(inner.value, m.Name("None"))

    node.visit(_Sets())
    return count


def _without_none_caches(cls: cst.ClassDef, none_checks: frozenset[str]) -> cst.ClassDef:
    methods = [s for s in cls.body.body if isinstance(s, cst.FunctionDef)] \
        if isinstance(cls.body, cst.IndentedBlock) else []
    if not any(method.name.value == "construct" for method in methods):
        return cls
    replaced = {}
    for method in methods:
        body = list(method.body.body)
        for index, statement in enumerate(body):
            attribute = _none_cache_hit(statement, none_checks)
            if attribute is None:
                continue
            store = next((j for j in range(index + 1, len(body) - 1)
                          if (name := _stored(body[j], attribute)) and _returns(body[j + 1], name)), None)
            if store is None:
                continue
            others = _self_reads(cls, attribute) - _self_reads(statement, attribute) - 1 - _none_sets(cls, attribute)
            if others:
                continue  # read elsewhere: the cache may be more than a cache
            kept = []
            carried = []
            for j, line in enumerate(body):
                if j in (index, store):
                    carried.extend(line.leading_lines)
                    continue
                if carried:  # the comments of what goes, and its blank line where the next has none
                    blank = [] if line.leading_lines else [next((e for e in carried if not e.comment), None)]
                    carried = [e for e in carried if e.comment] + [e for e in blank if e is not None]
                    line = line.with_changes(leading_lines=[*carried, *line.leading_lines])
                    carried = []
                kept.append(line)
            if index == 0 and kept:  # the method now starts where the hit was: no blank line above
                kept[0] = kept[0].with_changes(leading_lines=[line for line in kept[0].leading_lines if line.comment])
            replaced[id(method)] = method.with_changes(body=method.body.with_changes(body=kept))
            break
    if not replaced:
        return cls
    return cls.with_changes(body=cls.body.with_changes(
        body=[replaced.get(id(s), s) for s in cls.body.body]))
