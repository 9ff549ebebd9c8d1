"""A Cell's parameters read in a function graph mode compiles are listed in ``__init__``.

Two torch idioms read a module's parameters in ``forward``: the dtype (or device) of
the first one, ``next(self.input_blocks.parameters()).dtype`` (improved-diffusion's
``inner_dtype`` property, guided-diffusion, ...), and the parameters passed on as a
value, ``checkpoint(self._forward, (x,), self.parameters(), flag)``. The conversion
writes ``next(self.input_blocks.get_parameters())`` and ``self.trainable_params()``,
which run in PyNative, but graph mode compiles neither (measured on MindSpore 2.10
CPU): ``Cell.get_parameters``, ``trainable_params``, ``untrainable_params`` are
forbidden in ``construct`` ("the method or function 'mindspore.nn.cell.Cell.
trainable_params' is not supported in 'construct' ... Try to use the method ...
externally such as initialized in the method '__init__'"); ``parameters_dict`` calls
``get_parameters``, ``parameters_and_names`` is a generator ("Unsupported expression
'Yield'"), and a CellList is a tuple in graph mode ("'Tuple' object has no attribute
'get_parameters'"). A property is compiled with the function that reads it.

Measured alternatives: a Parameter reached by its attribute path
(``self.input_blocks[0][0].weight.dtype``) compiles, but which parameter is first is
known only once the model is built; the dtype read outside compilation (a value
Python computes, such as a property graph mode does not parse) is a constant of the
first compilation. What compiles is what MindSpore's message asks for: the parameters
listed in ``__init__``, a tuple of the Parameters themselves (the Cell keeps it as a
plain attribute: no parameter is added or renamed, ``parameters_and_names``,
``save_checkpoint`` and ``load_param_into_net`` see the same names). Graph mode reads
the tuple's items as the Cell's own Parameters: their values after ``set_data``,
their gradients (the same as PyNative's), their dtype::

    def __init__(self, ...):                   def __init__(self, ...):
        ...                                        ...
                                                   # graph mode cannot list parameters in construct
                                                   self.input_blocks_parameters = tuple(
                                                       self.input_blocks.get_parameters())

    @property                                  @property
    def inner_dtype(self):                     def inner_dtype(self):
        return next(                               return self.input_blocks_parameters[0].dtype
            self.input_blocks.get_parameters()).dtype

    checkpoint(..., self.trainable_params(), ...)   checkpoint(..., self.trainable_parameters, ...)

PyNative runs the same Parameters: the tuple holds the objects ``get_parameters()``
yields (``Cell.to``, ``.data =``, ``set_dtype`` and ``load_param_into_net`` keep
them), in the same order. A dtype changed after the first call: MindSpore's graph
mode does not always compile again (measured after ``weight.data =
weight.data.to(float16)``, with the tuple and with the attribute path alike).

Only for reads rooted at ``self`` (``self``, ``self.a.b``, ``self.blocks[0]``) in the
methods of a class with bases, in functions graph mode compiles (``construct`` and
what it calls or reads, graph_subset.py), where ``__init__`` sets the attribute read
at its top level (its own or a base's of the file): a Cell assigned under a condition
may be missing, and the read stays as it was. ``next(...)`` of the list (also
``next(iter(...))``) is its first item; any other use reads the tuple. The list is
the one ``__init__`` built: a parameter a subclass adds after ``super().__init__()``
is not in it.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from transpiler.convert.definitions import is_docstring
from transpiler.convert.formatting import KeepsFormatting
from transpiler.convert.structural.fresh_names import fresh_name
from transpiler.convert.walk import LAYOUT_TYPES, Visitor, rewrite, walk

# the listing method -> the name of the attribute that holds its tuple
_LISTS = {"get_parameters": "parameters", "trainable_params": "trainable_parameters"}
# the attribute for ``self`` itself (``self.parameters`` would read as torch's method)
_OWN = {"get_parameters": "all_parameters", "trainable_params": "trainable_parameters"}
_COMMENT = "# graph mode cannot list parameters in construct"


def without_parameter_reads(module: cst.Module, compiled: set[str], to_format) -> cst.Module:
    survey = _Survey()
    walk(module, survey, prune=LAYOUT_TYPES)
    if not survey.found:
        return module
    classes = {statement.name.value: statement for statement in module.body if isinstance(statement, cst.ClassDef)}
    return rewrite(module, _ParameterReads(compiled, to_format, classes))


class _Survey(Visitor):
    def __init__(self):
        super().__init__()
        self.found = False

    def visit_Call(self, node: cst.Call) -> None:
        self.found = self.found or (_listing(node) is not None)


def _listing(call) -> tuple[str, cst.BaseExpression] | None:
    """(method, receiver) of ``<receiver>.get_parameters()`` / ``.trainable_params()``."""
    if isinstance(call, cst.Call) and not call.args and isinstance(call.func, cst.Attribute) \
            and call.func.attr.value in _LISTS:
        return call.func.attr.value, call.func.value
    return None


def _path(node) -> list[str] | None:
    """The names after ``self`` of ``self``, ``self.a.b``, ``self.blocks[0]``; None for anything else."""
    if isinstance(node, cst.Name):
        return [] if node.value == "self" else None
    if isinstance(node, cst.Attribute):
        path = _path(node.value)
        return None if path is None else [*path, node.attr.value]
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index) \
            and isinstance(node.slice[0].slice.value, cst.Integer):
        path = _path(node.value)
        return None if path is None or not path else [*path, node.slice[0].slice.value.value]
    return None


def _init(cls: cst.ClassDef) -> cst.FunctionDef | None:
    for statement in cls.body.body:
        if isinstance(statement, cst.FunctionDef) and statement.name.value == "__init__":
            return statement
    return None


def _set_at_top_level(init: cst.FunctionDef) -> set[str]:
    """The attributes ``__init__`` sets (to something other than None) in statements of
    its own body, and never sets to None."""
    if not isinstance(init.body, cst.IndentedBlock):
        return set()
    target = m.AssignTarget(target=m.Attribute(value=m.Name("self"), attr=m.Name()))
    none_targets = {t.target.attr.value for assign in m.findall(init, m.Assign(value=m.Name("None")))
                    for t in assign.targets if m.matches(t, target)}
    names = set()
    for statement in init.body.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and not m.matches(small.value, m.Name("None")):
                    names.update(t.target.attr.value for t in small.targets if m.matches(t, target))
    return names - none_targets


def _returns_early(init: cst.FunctionDef) -> bool:
    """A ``return`` of ``__init__`` itself (not of a function it defines)."""
    finder = _Returns()
    walk(init.body, finder, prune=LAYOUT_TYPES)
    return finder.found


class _Returns(Visitor):
    def __init__(self):
        super().__init__()
        self.found = False

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False

    def visit_Return(self, node) -> None:
        self.found = True


class _ParameterReads(KeepsFormatting):
    prune = LAYOUT_TYPES

    def __init__(self, compiled: set[str], to_format, classes: dict[str, cst.ClassDef]):
        super().__init__(to_format)
        self.compiled = compiled
        self.classes = classes

    def visit_FunctionDef(self, node) -> bool:
        return False  # classes of the module only, not classes a function defines

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef):
        if not updated_node.bases or not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        init = _init(updated_node)
        if init is not None and (_returns_early(init) or not isinstance(init.body, cst.IndentedBlock)):
            return updated_node
        available = self._attributes_set(updated_node, set())
        taken = {node.attr.value for node in m.findall(updated_node, m.Attribute(value=m.Name("self")))}
        taken |= {s.name.value for s in updated_node.body.body if isinstance(s, cst.FunctionDef)}
        reads = _Reads(available, taken, self.to_format)
        body = []
        for statement in updated_node.body.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value in self.compiled \
                    and statement.name.value != "__init__":
                statement = rewrite(statement, reads)
            body.append(statement)
        if not reads.lists:
            return updated_node
        captures = [self._capture(attribute, method, receiver, index == 0)
                    for index, (attribute, method, receiver) in enumerate(reads.lists.values())]
        if init is None:
            at = 1 if body and is_docstring(body[0]) else 0
            if at < len(body) and not body[at].leading_lines:  # a blank line between the new __init__ and what follows
                body[at] = body[at].with_changes(leading_lines=[cst.EmptyLine(indent=False)])
            new = self._new_init(captures)
            body.insert(at, new.with_changes(leading_lines=[cst.EmptyLine(indent=False)]) if at else new)
        else:
            body = [self._extended(s, captures) if s is init else s for s in body]
        return updated_node.with_changes(body=updated_node.body.with_changes(body=body))

    def _attributes_set(self, cls: cst.ClassDef, seen: set[str]) -> set[str]:
        """Attributes set at the top level of the ``__init__`` this class runs: its own,
        or (without one, or through ``super().__init__``) those of its bases in the file."""
        seen = seen | {cls.name.value}
        init = _init(cls)
        names = _set_at_top_level(init) if init is not None else set()
        if init is None or m.findall(init, m.Call(func=m.Attribute(value=m.Call(func=m.Name("super")),
                                                                  attr=m.Name("__init__")))):
            for base in cls.bases:
                if isinstance(base.value, cst.Name) and base.value.value in self.classes \
                        and base.value.value not in seen:
                    names |= self._attributes_set(self.classes[base.value.value], seen)
        return names

    def _capture(self, attribute: str, method: str, receiver: cst.BaseExpression, first: bool):
        """``self.<attribute> = tuple(<receiver>.<method>())``."""
        listing = cst.Call(cst.Attribute(receiver, cst.Name(method)))
        statement = cst.SimpleStatementLine(
            [cst.Assign([cst.AssignTarget(cst.Attribute(cst.Name("self"), cst.Name(attribute)))],
                        cst.Call(cst.Name("tuple"), [cst.Arg(listing)]))],
            leading_lines=[cst.EmptyLine(comment=cst.Comment(_COMMENT))] if first else [])
        self.to_format.add(statement)
        return statement

    def _extended(self, init: cst.FunctionDef, captures: list) -> cst.FunctionDef:
        return init.with_changes(body=init.body.with_changes(body=[*init.body.body, *captures]))

    def _new_init(self, captures: list) -> cst.FunctionDef:
        """``def __init__(self, *args, **kwargs): super().__init__(*args, **kwargs)`` and the captures."""
        forward = cst.SimpleStatementLine([cst.Expr(cst.Call(
            cst.Attribute(cst.Call(cst.Name("super")), cst.Name("__init__")),
            [cst.Arg(cst.Name("args"), star="*"), cst.Arg(cst.Name("kwargs"), star="**")]))])
        self.to_format.add(forward)
        return cst.FunctionDef(
            cst.Name("__init__"),
            cst.Parameters([cst.Param(cst.Name("self"))], star_arg=cst.Param(cst.Name("args")),
                           star_kwarg=cst.Param(cst.Name("kwargs"))),
            cst.IndentedBlock([forward, *captures]))


class _Reads(KeepsFormatting):
    """In one method: ``next(R.get_parameters())`` -> ``self.R_parameters[0]``, other
    listings -> ``self.R_parameters``; records the tuple each attribute holds."""

    prune = LAYOUT_TYPES

    def __init__(self, available: set[str], taken: set[str], to_format):
        super().__init__(to_format)
        self.available = available
        self.taken = taken
        self.lists: dict[tuple[str, str], tuple[str, str, cst.BaseExpression]] = {}  # (method, path) -> capture
        self.statement_changed = False

    def visit_SimpleStatementLine(self, node) -> None:
        self.statement_changed = False

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if self.statement_changed:  # black lays out the statement the read changed
            self.to_format.add(updated_node)
        self.statement_changed = False
        return updated_node

    def _tuple(self, call) -> cst.Attribute | None:
        listing = _listing(call)
        if listing is None:
            return None
        method, receiver = listing
        path = _path(receiver)
        if path is None or (path and path[0] not in self.available):
            return None
        key = (method, ".".join(path))
        if key not in self.lists:
            name = "_".join([*path, _LISTS[method]]) if path else _OWN[method]
            self.lists[key] = (fresh_name(name, self.taken), method, receiver.deep_clone())
        self.statement_changed = True
        return cst.Attribute(cst.Name("self"), cst.Name(self.lists[key][0]))

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call):
        # get_parameters() is a generator: replaced under next() or iter() only, where a tuple
        # does what it did (the conversion writes it for torch's next/iter(m.parameters()));
        # trainable_params() is a list, which the tuple replaces wherever it is read
        if _called(original_node, "next"):
            inner = original_node.args[0].value
            if _called(inner, "iter"):
                inner = inner.args[0].value
            attribute = self._tuple(inner)
            if attribute is not None:
                return cst.Subscript(attribute, [cst.SubscriptElement(cst.Index(cst.Integer("0")))])
        elif _called(original_node, "iter"):
            attribute = self._tuple(original_node.args[0].value)
            if attribute is not None:
                return updated_node.with_changes(args=[updated_node.args[0].with_changes(value=attribute)])
        elif m.matches(original_node, m.Call(func=m.Attribute(attr=m.Name("trainable_params")))):
            attribute = self._tuple(original_node)
            if attribute is not None:
                return attribute
        return updated_node


def _called(node, name: str) -> bool:
    """``name(x)``: one positional argument."""
    return m.matches(node, m.Call(func=m.Name(name), args=[m.Arg(keyword=None, star="")]))
