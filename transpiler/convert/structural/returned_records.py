"""A record (a dataclass or named tuple of the file) made in a compiled function and
returned beside tensors is marked with why graph mode cannot compile it.

x-transformers (MIT) keeps what attention computed on the way in a dataclass,
made in ``Attend.forward`` and returned with the output::

    intermediates = Intermediates(qk_similarities=..., pre_softmax_attn=..., ...)
    return out, intermediates

PyNative runs this as torch does. Graph mode (GRAPH_MODE, ``mindspore.jit``,
``mindspore.export``) runs the class as Python, and a function returning a tuple
that holds such an object returns the whole tuple as one Python value: at the caller
``out`` is a tensor of unknown dtype and rank (``Any(Tensor)[Float64], (-2)`` in the
compiled graph), and the first layer that needs its dtype fails (x-transformers'
LayerNorm: "For Tensor.astype, the input type must be one of ..."). Measured on
MindSpore 2.10 CPU with a Dense and a LayerNorm: a dataclass, a
``collections.namedtuple``, and a ``mindspore.jit_class`` dataclass (which graph mode
makes only from constants, "all arguments are required to be constants") all fail,
and so does ``dict(values=out)``, which graph mode also runs as Python; the same
object made and read in one function compiles, and so does a tuple or a dict display
(``{"values": out}``) of the tensors returned. A Cell called from Python (the model
itself) returns such a tuple intact. The code stays as written, since it runs as
torch's does; the comment above the line says what graph mode needs.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.helpers import get_full_name_for_node

from transpiler.convert.structural.compiled_functions import InCompiledFunctions
from transpiler.convert.walk import rewrite

_DATACLASS = frozenset({"dataclass", "dataclasses.dataclass"})
_NAMED_TUPLE = frozenset({"NamedTuple", "typing.NamedTuple"})
_NAMEDTUPLE_FACTORY = frozenset({"namedtuple", "collections.namedtuple"})


def comment(name: str) -> str:
    return (f"# graph mode runs {name} as Python: compiled code calling this gets the tensors returned "
            "beside it with no dtype or shape; return a tuple or a {...} dict of its tensors")


def with_returned_records_marked(module: cst.Module, compiled: set[str], to_format) -> cst.Module:
    records = _records(module)
    if not records:
        return module
    return rewrite(module, _Marks(records, compiled, to_format))


def _records(module: cst.Module) -> frozenset[str]:
    """The names of the file's dataclasses and named tuples (classes of the module and
    ``X = namedtuple(...)``)."""
    names = set()
    for statement in module.body:
        if isinstance(statement, cst.ClassDef):
            decorators = {get_full_name_for_node(_called(d.decorator)) for d in statement.decorators}
            bases = {get_full_name_for_node(base.value) for base in statement.bases}
            if decorators & _DATACLASS or bases & _NAMED_TUPLE:
                names.add(statement.name.value)
        elif m.matches(statement, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(m.Name())],
                                                                          value=m.Call())])):
            assign = statement.body[0]
            if get_full_name_for_node(assign.value.func) in _NAMEDTUPLE_FACTORY:
                names.add(assign.targets[0].target.value)
    return frozenset(names)


def _called(expression: cst.BaseExpression) -> cst.BaseExpression:
    return expression.func if isinstance(expression, cst.Call) else expression


class _Marks(InCompiledFunctions):
    """In a compiled function: ``name = Record(...)`` where ``name`` stands in a returned
    tuple, or ``return ..., Record(...)``."""

    def __init__(self, records: frozenset[str], compiled: set[str], to_format):
        super().__init__(compiled, to_format)
        self.records = records
        self.returned: list[set[str]] = []  # per compiled function: names its tuple returns hold

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        if self.depth:
            finder = _ReturnedNames()
            node.body.visit(finder)
            self.returned.append(finder.names)

    def leave_FunctionDef(self, original_node, updated_node):
        if self.depth:
            self.returned.pop()
        return super().leave_FunctionDef(original_node, updated_node)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if not self.depth or len(updated_node.body) != 1:
            return updated_node
        small = updated_node.body[0]
        record = None
        if m.matches(small, m.Assign(targets=[m.AssignTarget(m.Name())], value=m.Call(func=m.Name()))) \
                and small.targets[0].target.value in self.returned[-1]:
            record = small.value.func.value
        elif isinstance(small, cst.Return) and isinstance(small.value, cst.Tuple):
            record = next((element.value.func.value for element in small.value.elements
                           if m.matches(element.value, m.Call(func=m.Name()))
                           and element.value.func.value in self.records), None)
        if record not in self.records:
            return updated_node
        text = comment(record)
        if any(line.comment is not None and line.comment.value == text for line in updated_node.leading_lines):
            return updated_node
        return updated_node.with_changes(
            leading_lines=[*updated_node.leading_lines, cst.EmptyLine(comment=cst.Comment(text))])


class _ReturnedNames(cst.CSTVisitor):
    """The names a function's ``return a, b`` tuples hold (not those of the functions it defines)."""

    def __init__(self):
        self.names: set[str] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Return(self, node: cst.Return) -> None:
        if isinstance(node.value, cst.Tuple):
            self.names.update(element.value.value for element in node.value.elements
                              if isinstance(element.value, cst.Name))
