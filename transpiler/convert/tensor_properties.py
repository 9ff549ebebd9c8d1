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
