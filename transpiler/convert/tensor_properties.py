"""Reads of torch Tensor attributes on receivers of unknown type (``x.real``,
``x.is_cuda``, ``x.grad``): rewritten by their ``PropertyRule`` or marked.

MindSpore spells some of them as methods (``x.real()``) and lacks others, so
passing them through unchanged gives a bound method or an AttributeError.
Writes (``p.requires_grad = False``) are left alone: they work on
``mindspore.Parameter``, the usual receiver. The variables of loops over a
module's parameters are recorded as kind "parameter" for the rules.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from rewrite_rules.spec import Unconvertible
from transpiler.convert.walk import LAYOUT_TYPES, walk
from transpiler.convert.change_text import describe, short


_PARAMETER_LISTS = frozenset({"parameters", "named_parameters", "trainable_params", "get_parameters",
                              "parameters_and_names", "untrainable_params"})
_NAMED_PARAMETER_LISTS = frozenset({"named_parameters", "parameters_and_names"})


def parameter_loop_variables(module: cst.Module) -> set[str]:
    """Names bound by ``for p in model.parameters()`` (the last element of the
    target for named_parameters), in loops and comprehensions anywhere; also
    through ``filter(lambda item: item[1].requires_grad, net.parameters_and_names())``
    (the form named_parameters() converts to), where ``item[1]`` is one."""
    loops = _ParameterLoops()
    walk(module, loops, prune=LAYOUT_TYPES)  # read-only: libcst's visit would rebuild the module
    return loops.names


class _ParameterLoops(cst.CSTVisitor):
    # a class of its own, not one per call: the walk finds a visitor's handlers once per class

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def _parameter_list(self, iterable) -> str | None:
        """The method name of a call listing a module's parameters, seen through
        filter() and list()/tuple()/sorted()/reversed()."""
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and len(iterable.args) == 1 \
                and iterable.func.value in ("list", "tuple", "sorted", "reversed"):
            return self._parameter_list(iterable.args[0].value)
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value == "filter" \
                and len(iterable.args) == 2:
            listed = self._parameter_list(iterable.args[1].value)
            predicate = iterable.args[0].value
            if listed is not None and isinstance(predicate, cst.Lambda) and len(predicate.params.params) == 1:
                item = predicate.params.params[0].name.value
                self.names.add(f"{item}[1]" if listed in _NAMED_PARAMETER_LISTS else item)
            return listed
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute) \
                and iterable.func.attr.value in _PARAMETER_LISTS:
            return iterable.func.attr.value
        return None

    def _note(self, target, iterable):
        if self._parameter_list(iterable) is None:
            return
        if isinstance(target, cst.Tuple) and target.elements:
            target = target.elements[-1].value
        if isinstance(target, cst.Name):
            self.names.add(target.value)

    def visit_For(self, node):
        self._note(node.target, node.iter)

    def visit_CompFor(self, node):
        self._note(node.target, node.iter)

    def visit_Call(self, node):
        if isinstance(node.func, cst.Name) and node.func.value == "filter":
            self._parameter_list(node)  # its predicate's item, wherever the filter stands


class PropertyReads:
    def __init__(self, rewriter):
        self.rewriter = rewriter
        self.stores: set[int] = set()  # attributes assigned to, not read
        self._kinds_recorded = False

    def note_targets(self, targets) -> None:
        for target in targets:
            self._note(target)

    def _note(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Attribute):
            self.stores.add(id(target))
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._note(element.value)
        elif isinstance(target, cst.StarredElement):
            self._note(target.value)

    def leave(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        rewriter = self.rewriter
        rule = rewriter.rules.property_rule(original.attr.value)
        if rule is None or id(original) in self.stores or id(original) in rewriter.call_funcs or id(original) in rewriter.handled:
            return updated
        receiver = original.value
        if (isinstance(receiver, cst.Name) and receiver.value == "self") or rewriter._is_module_function(receiver):
            return updated
        if not self._kinds_recorded:
            self._kinds_recorded = True
            for name in parameter_loop_variables(rewriter.module):
                rewriter.ctx.known_kinds.setdefault(name, "parameter")
        if rule.rename == rule.name and rule.hook is None:
            rewriter.ctx.converted(original, rule.torch, f"{short(original)}: the same in MindSpore")
            return updated
        try:
            if rule.hook is None:
                raise Unconvertible(rule.notes or f"MindSpore's Tensor has no .{rule.name}")
            result = rule.hook(updated.value, rewriter.ctx)
        except Unconvertible as exc:
            rewriter.mark(original, rule.torch, exc.reason)
            return updated
        if result is None:
            return updated
        rewriter.changed()
        rewriter.ctx.converted(original, rule.torch, describe(original, result))
        return result


# -- receivers known not to be tensors -----------------------------------------------------------------------------
# Libraries whose objects have methods named like a torch Tensor's (scipy.sparse's multiply/dot/transpose, numpy's
# view/repeat/transpose, pandas'): what they make is theirs, not a tensor.
FOREIGN_ROOTS = frozenset({"numpy", "scipy", "pandas", "sklearn", "networkx", "cv2", "PIL"})
_FOREIGN_DEPTH = 24


def known_foreign(ctx, expr: cst.BaseExpression) -> bool:
    """``expr`` (a node of the original tree) holds an object of numpy, scipy,
    pandas ... as the file shows: made by one of their functions (``adj =
    sp.coo_matrix(...)``; the last assignment before the use, in the order the
    function reads) or a tensor's ``.numpy()``, an attribute, item or method result of such an object
    (``adj.T``, ``mx.dot(m).transpose()``), arithmetic of such objects and numbers,
    or a parameter every call of its function in the file passes such an object.
    Tensor method rules leave such receivers alone (``adj.multiply(mask)`` is
    scipy's)."""
    from transpiler.convert.structural.provenance import provenance_of

    provenance = provenance_of(ctx)
    if provenance is None:
        return False
    cache = ctx.facts.setdefault("foreign receivers", {})
    return _Foreign(ctx.analysis, provenance, cache).holds(expr, 0)


def passes_image_constants(ctx, call: cst.Call) -> bool:
    """An argument is a constant of PIL (``img.resize((w, h), Image.BILINEAR)``,
    ``resample=Image.Resampling.LANCZOS``): the call is a PIL image's method, whatever
    the file shows of the receiver."""
    from transpiler.convert.names import chain_parts

    for arg in call.args:
        parts = chain_parts(arg.value)
        binding = ctx.analysis.imports.get(parts[0]) if parts else None
        if binding is not None and binding.qualified.split(".", 1)[0] == "PIL" and len(parts) > 1:
            return True
    return False


class _StopWalk(Exception):
    pass


class _LastBinding(cst.CSTVisitor):
    """The value last assigned to ``name`` before ``use``, in reading order
    (``None``: no binding before it; ``_UNKNOWN``: one that does not show a value)."""

    def __init__(self, name: str, use: cst.CSTNode):
        super().__init__()
        self.name, self.use, self.value, self.nested = name, use, None, 0

    def on_visit(self, node):
        if node is self.use:
            raise _StopWalk
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            self.nested += 1
        elif not self.nested:
            if isinstance(node, (cst.For, cst.CompFor)) and self.name in _target_names(node.target):
                self.value = _UNKNOWN
            elif isinstance(node, cst.WithItem) and node.asname is not None \
                    and self.name in _target_names(node.asname.name):
                self.value = _UNKNOWN
        return True

    def on_leave(self, node):
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            self.nested -= 1
            return
        if self.nested:
            return
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name) and target.target.value == self.name:
                    self.value = node.value
                elif self.name in _target_names(target.target):
                    self.value = _UNKNOWN
                    position = _position(target.target, self.name)
                    if position is not None and isinstance(node.value, cst.Tuple) \
                            and len(node.value.elements) == len(target.target.elements) \
                            and not isinstance(node.value.elements[position], cst.StarredElement):
                        self.value = node.value.elements[position].value  # a, b = x, y
                    elif position is not None and isinstance(node.value, cst.Attribute) \
                            and node.value.attr.value == "saved_tensors":
                        self.value = _Saved(position)
                    elif position is not None and isinstance(node.value, cst.Call):
                        self.value = _Unpacked(node.value, position, len(target.target.elements))
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)) and isinstance(node.target, cst.Name) \
                and node.target.value == self.name:
            if isinstance(node, cst.AnnAssign):
                self.value = node.value if node.value is not None else self.value
            else:  # x += y: x stays what it was if y is of its kind
                self.value = cst.BinaryOperation(node.target, cst.Add(), node.value) \
                    if self.value is not None else _UNKNOWN
        elif isinstance(node, cst.NamedExpr) and isinstance(node.target, cst.Name) and node.target.value == self.name:
            self.value = node.value


_UNKNOWN = cst.Name("__unknown__")


class _Unpacked(cst.Name):
    """``a, b = f(...)`` bound the name: its position among ``size`` (resolved in what f returns)."""

    def __init__(self, call: cst.Call, position: int, size: int):
        super().__init__("__unpacked__")
        object.__setattr__(self, "call", call)
        object.__setattr__(self, "position", position)
        object.__setattr__(self, "size", size)


class _Saved(cst.Name):
    """``a, b = ctx.saved_tensors`` bound the name: its position (resolved in the forward)."""

    def __init__(self, position: int):
        super().__init__("__saved__")
        object.__setattr__(self, "position", position)


def _position(target, name: str) -> int | None:
    """Where ``name`` stands in a flat unpacking target without a starred element."""
    if not isinstance(target, (cst.Tuple, cst.List)) \
            or any(not isinstance(e.value, cst.Name) for e in target.elements):
        return None
    names = [e.value.value for e in target.elements]
    return names.index(name) if names.count(name) == 1 else None


def _saved_value(owner, position: int) -> cst.BaseExpression | None:
    """In an autograd Function's backward, ``a, b = ctx.saved_tensors``: the value its forward
    passed at ``position`` to ``ctx.save_for_backward(...)``, as the forward last assigned it."""
    parent = owner.parent
    if parent is None or parent.kind != "class" or not isinstance(parent.node, cst.ClassDef):
        return None
    forward = next((s for s in parent.node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "forward"),
                   None)
    saves = m.findall(forward, m.Call(func=m.Attribute(attr=m.Name("save_for_backward")))) \
        if forward is not None else []
    if len(saves) != 1 or any(a.star or a.keyword for a in saves[0].args) or position >= len(saves[0].args):
        return None
    saved = saves[0].args[position].value
    if not isinstance(saved, cst.Name):
        return saved
    finder = _LastBinding(saved.value, saves[0])
    try:
        walk(forward.body, finder)
    except _StopWalk:
        return finder.value if finder.value is not _UNKNOWN and not isinstance(finder.value, _Saved) else None
    return None


def _target_names(target) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return {n for e in target.elements for n in _target_names(e.value)}
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return set()


class _Foreign:
    def __init__(self, analysis, provenance, cache: dict):
        self.analysis, self.provenance, self.cache = analysis, provenance, cache

    def holds(self, expr, depth: int) -> bool:
        if depth > _FOREIGN_DEPTH:
            return False
        key = id(expr)
        if key not in self.cache:
            self.cache[key] = False  # a cycle answers "not known"
            self.cache[key] = self._holds(expr, depth)
        return self.cache[key]

    def _library(self, func) -> str | None:
        """The top package an imported name is from (``sp.coo_matrix`` -> "scipy")"""
        from transpiler.convert.names import chain_parts

        parts = chain_parts(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        binding = self.analysis.imports.get(parts[0]) if parts else None
        return binding.qualified.split(".", 1)[0] if binding is not None else None

    def _is_number(self, expr) -> bool:
        return isinstance(expr, (cst.Integer, cst.Float)) or (
            isinstance(expr, cst.UnaryOperation) and isinstance(expr.expression, (cst.Integer, cst.Float)))

    def _holds(self, expr, depth: int) -> bool:
        if isinstance(expr, cst.Call):
            if self.analysis.qualified(expr.func) is not None:
                return False  # torch's
            root = self._library(expr.func)
            if root is not None:
                return root in FOREIGN_ROOTS
            if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "numpy" and not expr.args:
                return True  # t.cpu().numpy(): a tensor's values as a numpy array
            return isinstance(expr.func, cst.Attribute) and self.holds(expr.func.value, depth + 1)
        if isinstance(expr, cst.Attribute):
            return self.holds(expr.value, depth + 1)
        if isinstance(expr, cst.Subscript):
            return self.holds(expr.value, depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            sides = (expr.left, expr.right)
            return any(self.holds(s, depth + 1) for s in sides) and \
                all(self._is_number(s) or self.holds(s, depth + 1) for s in sides)
        if isinstance(expr, cst.UnaryOperation):
            return self.holds(expr.expression, depth + 1)
        if isinstance(expr, cst.Name):
            return self._name_holds(expr, depth)
        return False

    def _name_holds(self, name: cst.Name, depth: int) -> bool:
        from transpiler.convert.structural.provenance import _Param, _binding_scope

        scope = self.provenance.scope_of(name)
        owner = _binding_scope(name.value, scope) if scope is not None else None
        if owner is None or owner.kind == "class":
            return False
        params = [b for b in owner.bindings.get(name.value, ()) if isinstance(b, _Param)]
        body = owner.node.body if isinstance(owner.node, cst.FunctionDef) else owner.node
        values = self._assigned(body).get(name.value, ())
        # nothing the name can hold here is known foreign (a loop or unpacking target is never
        # known): no need to find its last value before this use (one walk of the scope for all
        # its names, not one per use: a long script has thousands)
        if not any(v is not _UNKNOWN and self.holds(v, depth + 1) for v in values) \
                and not self._parameter_holds(params, depth):
            return False
        finder = _LastBinding(name.value, name)
        try:
            walk(body, finder)
        except _StopWalk:
            pass
        else:
            return False  # the use is not in its scope's code as read: unknown
        if finder.value is _UNKNOWN or isinstance(finder.value, _Saved):
            return False
        if finder.value is not None:
            return self.holds(finder.value, depth + 1)
        return self._parameter_holds(params, depth)

    def _parameter_holds(self, params: list, depth: int) -> bool:
        """Every call of the function passes this parameter a foreign object."""
        if len(params) != 1:
            return False
        arguments = self.provenance._arguments(params[0])
        return bool(arguments) and all(self.holds(value, depth + 1) for value, _ in arguments)


    def _assigned(self, body: cst.CSTNode) -> dict[str, list[cst.BaseExpression]]:
        key = ("assigned", id(body))
        if key not in self.cache:
            collector = _Assigned()
            walk(body, collector, prune=LAYOUT_TYPES)
            self.cache[key] = collector.values
        return self.cache[key]


class _Assigned(cst.CSTVisitor):
    """Every value a scope's own code assigns to each name, in no order (``_UNKNOWN``
    for a binding that shows no value: loop, with, unpacking)."""

    def __init__(self):
        super().__init__()
        self.values: dict[str, list[cst.BaseExpression]] = {}

    def _add(self, target, value) -> None:
        if isinstance(target, cst.Name):
            self.values.setdefault(target.value, []).append(value)
        else:
            for name in _target_names(target):
                self.values.setdefault(name, []).append(_UNKNOWN)

    def on_visit(self, node) -> bool:
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return False  # a scope of its own
        if isinstance(node, cst.Assign):
            for target in node.targets:
                self._add(target.target, node.value)
        elif isinstance(node, cst.AnnAssign) and node.value is not None:
            self._add(node.target, node.value)
        elif isinstance(node, cst.AugAssign):
            self._add(node.target, cst.BinaryOperation(node.target, cst.Add(), node.value))
        elif isinstance(node, cst.NamedExpr):
            self._add(node.target, node.value)
        elif isinstance(node, (cst.For, cst.CompFor)):
            self._add(cst.Tuple([cst.Element(node.target)]), None)
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            self._add(cst.Tuple([cst.Element(node.asname.name)]), None)
        return True


def assigned_value(ctx, name: cst.BaseExpression, _depth: int = 0) -> cst.BaseExpression | None:
    """The value last assigned to the name ``name`` (a node of the original tree)
    before this use, in the order its function reads; None when the file does not
    show one (a parameter, a loop variable, a name bound elsewhere). ``a, b = f(...)``,
    f a function of this file, shows what f returns there (``return x, y``: the value
    f last assigned to x)."""
    from transpiler.convert.structural.provenance import _binding_scope, provenance_of

    provenance = provenance_of(ctx)
    if provenance is None or not isinstance(name, cst.Name):
        return None
    scope = provenance.scope_of(name)
    owner = _binding_scope(name.value, scope) if scope is not None else None
    if owner is None or owner.kind == "class":
        return None
    finder = _LastBinding(name.value, name)
    try:
        walk(owner.node.body if isinstance(owner.node, cst.FunctionDef) else owner.node, finder)
    except _StopWalk:
        if isinstance(finder.value, _Saved):
            return _saved_value(owner, finder.value.position)
        if isinstance(finder.value, _Unpacked):
            return _returned_value(ctx, provenance, finder.value, _depth) if _depth < 4 else None
        return finder.value if finder.value is not _UNKNOWN else None
    return None


def _returned_value(ctx, provenance, unpacked: _Unpacked, depth: int) -> cst.BaseExpression | None:
    """``a, b = f(...)``: the value at the name's position of the tuples f (a function of
    this file) returns, as f last assigned it; None unless every return shows one, of one kind."""
    values = []
    for returned in provenance.returned_by(unpacked.call) or ():
        if not isinstance(returned, cst.Tuple) or len(returned.elements) != unpacked.size \
                or any(isinstance(e, cst.StarredElement) for e in returned.elements):
            return None
        element = returned.elements[unpacked.position].value
        values.append(assigned_value(ctx, element, depth + 1) if isinstance(element, cst.Name) else element)
    if not values or any(v is None for v in values) or len({type(v) for v in values}) != 1:
        return None
    return values[0]
