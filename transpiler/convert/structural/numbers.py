"""Which expressions the file shows are Python numbers (not tensors): literals,
``len()``/``float()``/``int()``/``round()``/``.item()`` results, arithmetic of
numbers, ``range()`` loop variables, and names every binding of which is one
of those. Used to leave ``f"{value:.3f}"`` alone when value cannot be a tensor.
"""

from __future__ import annotations

import libcst as cst

_NUMBER_CALLS = frozenset({"len", "float", "int", "round", "abs", "min", "max", "sum", "divmod"})
_NUMBER_METHODS = frozenset({"item", "__len__", "count", "index", "dim", "numel", "ndimension", "nelement"})
_NUMBER_MODULES = frozenset({"math", "time"})


class Numbers:
    def __init__(self, provenance):
        self.provenance = provenance
        self._busy: set = set()

    def is_number(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary)):
            return True
        if isinstance(expr, cst.UnaryOperation):
            return self.is_number(expr.expression)
        if isinstance(expr, cst.BinaryOperation):
            return self.is_number(expr.left) and self.is_number(expr.right)
        if isinstance(expr, cst.Call):
            return self._call(expr)
        if isinstance(expr, cst.Name):
            return self._name(expr)
        if isinstance(expr, cst.Subscript):
            if isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape":
                return True  # x.shape[0]
            return self._element(expr.value, depth=1)
        return False

    def _element(self, container: cst.BaseExpression, depth: int) -> bool:
        """``losses[-1]`` (depth 1) or ``losses[-1][0]`` (depth 2): every element is a number,
        the container being a list built from literals and ``.append(...)`` calls."""
        if isinstance(container, cst.Subscript):
            return self._element(container.value, depth + 1)
        if not isinstance(container, cst.Name) or self.provenance is None or depth > 2:
            return False
        values = self.provenance.values_of(container)
        appended = self.provenance.appended(container)
        if not values or appended is None or not all(isinstance(v, cst.List) for v in values):
            return False
        items = [e.value for v in values for e in v.elements] + appended
        return all(self._item(item, depth) for item in items)

    def _item(self, item: cst.BaseExpression, depth: int) -> bool:
        if depth == 1:
            return self.is_number(item)
        return isinstance(item, (cst.Tuple, cst.List)) and all(self.is_number(e.value) for e in item.elements)

    def _call(self, call: cst.Call) -> bool:
        func = call.func
        if isinstance(func, cst.Name):
            if func.value in ("min", "max", "sum", "abs"):
                return bool(call.args) and all(self.is_number(a.value) for a in call.args)
            if func.value in _NUMBER_CALLS:
                return True
            returned = self.provenance.returned_by(call) if self.provenance is not None else None
            if not returned or id(call) in self._busy:
                return False
            self._busy.add(id(call))
            try:
                return all(self.is_number(value) for value in returned)
            finally:
                self._busy.discard(id(call))
        if isinstance(func, cst.Attribute):
            if func.attr.value in _NUMBER_METHODS or (func.attr.value == "size" and call.args):
                return True
            return isinstance(func.value, cst.Name) and func.value.value in _NUMBER_MODULES
        return False

    def _name(self, name: cst.Name) -> bool:
        if name.value in ("True", "False"):
            return True
        if self.provenance is None:
            return False
        key = (name.value, id(self.provenance.scope_of(name)))
        if key in self._busy:
            return True  # x += v refers back to x: the other bindings decide
        values = self.provenance.values_of(name)
        if not values:
            return False  # unknown bindings (a parameter, a loop variable ...) may hold a tensor
        self._busy.add(key)
        try:
            return all(self.is_number(v) for v in values)
        finally:
            self._busy.discard(key)
