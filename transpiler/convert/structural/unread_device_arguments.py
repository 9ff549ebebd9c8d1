"""A device argument the method never reads is not passed.

timm's LeViT, EfficientFormer and TinyViT pass the input's device to the method
that returns their attention biases, the key of a per-device cache::

    attn = q @ k * self.scale + self.get_attention_biases(x.device)

    def get_attention_biases(self, device: torch.device) -> torch.Tensor:
        ...

The conversion returns the cached value as computed (attribute_caches.py), and the
method no longer reads ``device``; the call still computes it,
``self.get_attention_biases(torch_device(x.device))``. ``mindspore.export``
compiles in JIT strict mode, which refuses the read ("In JIT strict mode, cannot
get attributes device or the Tensor[Float32] object has no attribute: 'device'",
measured on MindSpore 2.10 CPU; the lax GRAPH_MODE takes it). A MindSpore
engineer would not have the parameter: it goes from the method, and its argument
from the calls, ``self.get_attention_biases()`` (export compiles it, and gives the
Cell's values, measured).

Only where that is sure to mean the same: the parameter (positional, not
``self``) is read by no definition of the method in the file; every mention of
the method's name as an attribute in the file is a call ``self.<method>(...)``
in a class that defines it (no call from elsewhere, no method passed on as a
value), without ``*args``/``**kwargs``; some call passes a device read
(``x.device``, ``torch_device(x.device)``) from a function graph mode compiles,
and every argument dropped reads only names and attributes (calling nothing but
``torch_device`` or ``str``), so dropping it drops no effect.
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.formatting import KeepsFormatting
from transpiler.convert.structural.device_leftovers import reads_device
from transpiler.convert.structural.name_reads import mentions
from transpiler.convert.walk import LAYOUT_TYPES, Visitor, rewrite, walk

_PURE_CALLS = frozenset({"torch_device", "str"})


def without_unread_device_arguments(module: cst.Module, compiled: set[str], to_format) -> cst.Module:
    survey = _Survey(compiled)
    walk(module, survey, prune=LAYOUT_TYPES)
    dropped = _dropped(survey)
    if not dropped:
        return module
    return rewrite(module, _Drop(dropped, to_format))


def _method(node: cst.FunctionDef) -> bool:
    params = node.params.params
    return bool(params) and params[0].name.value == "self" and not any(
        isinstance(d.decorator, (cst.Name, cst.Attribute)) and getattr(d.decorator, "value", None)
        in ("staticmethod", "classmethod", "property") for d in node.decorators)


class _Survey(Visitor):
    """The methods of the file's classes (name -> definitions), and each mention of a name as
    an attribute: (the call, or None where it is no ``self.<name>(...)`` call in a class defining
    ``name``; whether it stands in a function graph mode compiles)."""

    def __init__(self, compiled: set[str]):
        super().__init__()
        self.compiled = compiled
        self.classes: list[set[str]] = []  # the method names of the classes around
        self.functions: list[str] = []
        self.methods: dict[str, list[cst.FunctionDef]] = {}
        self.mentions: dict[str, list[tuple[cst.Call | None, bool]]] = {}
        self.calls: set[int] = set()  # the func of each self.<name>(...) call

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        names = set()
        if isinstance(node.body, cst.IndentedBlock):
            for statement in node.body.body:
                if isinstance(statement, cst.FunctionDef) and _method(statement):
                    names.add(statement.name.value)
                    self.methods.setdefault(statement.name.value, []).append(statement)
        self.classes.append(names)

    def leave_ClassDef(self, original_node) -> None:
        self.classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node.name.value)

    def leave_FunctionDef(self, original_node) -> None:
        self.functions.pop()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" \
                and self.classes and func.attr.value in self.classes[-1]:
            self.calls.add(id(func))
            in_compiled = any(name in self.compiled for name in self.functions)
            self.mentions.setdefault(func.attr.value, []).append((node, in_compiled))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if id(node) not in self.calls:
            self.mentions.setdefault(node.attr.value, []).append((None, False))


def _argument(call: cst.Call, index: int, name: str) -> cst.Arg | None | bool:
    """The argument ``call`` passes for the parameter at ``index`` (after self) named ``name``,
    None where it passes none, False where that cannot be told."""
    if any(arg.star for arg in call.args):
        return False
    for position, arg in enumerate(call.args):
        if arg.keyword is None and position == index:
            return arg
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def _pure(expr: cst.BaseExpression) -> bool:
    class _Effects(cst.CSTVisitor):
        found = False

        def visit_Call(self, node) -> None:
            if not (isinstance(node.func, cst.Name) and node.func.value in _PURE_CALLS):
                self.found = True

        def visit_Await(self, node) -> None:
            self.found = True

        def visit_NamedExpr(self, node) -> None:
            self.found = True

    effects = _Effects()
    expr.visit(effects)
    return not effects.found


def _dropped(survey: _Survey) -> dict[str, tuple[int, str]]:
    """method name -> (index after self, name) of the parameter that goes."""
    dropped = {}
    for method, definitions in survey.methods.items():
        calls = survey.mentions.get(method, [])
        if not calls or any(call is None for call, _ in calls):
            continue
        first = definitions[0].params
        for index, param in enumerate(first.params[1:]):
            name = param.name.value
            if any(len(d.params.params) <= index + 1 or d.params.params[index + 1].name.value != name
                   or name in mentions(d.body) or _default_mentions(d, name) for d in definitions):
                continue
            args = [_argument(call, index, name) for call, _ in calls]
            if any(arg is False for arg in args):
                continue
            if any(arg is None for arg in args) and param.default is None:
                continue
            if not any(arg is not None and compiled and reads_device(arg.value)
                       for arg, (_, compiled) in zip(args, calls)):
                continue
            if all(arg is None or _pure(arg.value) for arg in args):
                dropped[method] = (index, name)
                break
    return dropped


def _default_mentions(definition: cst.FunctionDef, name: str) -> bool:
    """Another parameter's default or annotation mentions ``name`` (a closure default would)."""
    return any(name in mentions(p) for p in definition.params.params if p.name.value != name)


def _without(items: list, index: int):
    """``items`` but the one at ``index``, the comma of the last one as it was."""
    kept = [item for position, item in enumerate(items) if position != index]
    if kept and index == len(items) - 1:
        kept[-1] = kept[-1].with_changes(comma=items[-1].comma)
    return kept


class _Drop(KeepsFormatting):
    prune = LAYOUT_TYPES

    def __init__(self, dropped: dict[str, tuple[int, str]], to_format):
        super().__init__(to_format)
        self.dropped = dropped
        self.classes = 0
        self.changed: list[bool] = []  # per statement line: a call lost an argument

    def visit_ClassDef(self, node) -> None:
        self.classes += 1

    def leave_ClassDef(self, original_node, updated_node):
        self.classes -= 1
        return updated_node

    def leave_FunctionDef(self, original_node, updated_node):
        name = updated_node.name.value
        if not self.classes or name not in self.dropped or not _method(updated_node):
            return updated_node
        index, param = self.dropped[name]
        params = list(updated_node.params.params)
        if len(params) <= index + 1 or params[index + 1].name.value != param:
            return updated_node
        return updated_node.with_changes(params=updated_node.params.with_changes(
            params=_without(params, index + 1)))

    def visit_SimpleStatementLine(self, node) -> None:
        self.changed.append(False)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if self.changed.pop():
            self.to_format.add(updated_node)  # the call's layout was black's for its arguments
        return updated_node

    def leave_Call(self, original_node, updated_node):
        func = updated_node.func
        if not (self.classes and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)
                and func.value.value == "self" and func.attr.value in self.dropped):
            return updated_node
        index, param = self.dropped[func.attr.value]
        arg = _argument(updated_node, index, param)
        if not isinstance(arg, cst.Arg):
            return updated_node
        args = list(updated_node.args)
        position = next(i for i, a in enumerate(args) if a is arg)
        if self.changed:
            self.changed[-1] = True
        return updated_node.with_changes(args=_without(args, position))
