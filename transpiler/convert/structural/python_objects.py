"""An object graph mode runs as Python, made in a compiled function, is marked where the
tensors that come from it lose their dtype and shape.

Graph mode (GRAPH_MODE, ``mindspore.jit``, ``mindspore.export``) compiles Cells,
functions and ``mindspore.jit_class`` objects made from constants; an object of any
other class made in compiled code, from tensors, it runs as Python (JIT fallback), and
a tensor that comes out of such an object reaches compiled code as a tensor of unknown
dtype and rank (``Any(Tensor)[Float64], (-2)`` in the compiled graph). The first
operator that needs either fails, often far from the cause. Two forms of public code:

- A record returned beside tensors. x-transformers (MIT) keeps what attention computed
  in a dataclass made in ``Attend.forward``::

      intermediates = Intermediates(qk_similarities=..., pre_softmax_attn=..., ...)
      return out, intermediates

  A compiled caller gets the whole tuple as one Python value, so ``out`` too: the next
  LayerNorm fails ("For Tensor.astype, the input type must be one of ..."). Measured on
  MindSpore 2.10 CPU: a dataclass, a ``collections.namedtuple``, a ``mindspore.jit_class``
  dataclass (made only from constants: "all arguments are required to be constants")
  and ``dict(values=out)`` all fail; the record made and read in one function compiles,
  and so does a tuple or a dict display (``{"values": out}``). A Cell called from
  Python (the model itself) returns such a tuple intact.
- An object whose methods compute tensors. RAFT (BSD-3-Clause) builds its correlation
  pyramid in forward, in a plain class of corr.py, and calls it in its update loop::

      corr_fn = CorrBlock(fmap1, fmap2, radius=self.args.corr_radius)
      ...
      corr = corr_fn(coords1)

  Every tensor of the loop that depends on ``corr`` is of unknown rank, and
  ``ops.interpolate`` in ``upflow8`` fails looking its rank up. A plain class is one with
  no base but ``object``, of the file or of a project file it imports (the project
  index's ``SiblingFacts.objects``).

PyNative runs both as torch does, so the code stays as written; the comment above the
line says what graph mode needs.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.helpers import get_full_name_for_node

from transpiler.convert.structural.compiled_functions import InCompiledFunctions, with_comment
from transpiler.convert.walk import rewrite

_DATACLASS = frozenset({"dataclass", "dataclasses.dataclass"})
_NAMED_TUPLE = frozenset({"NamedTuple", "typing.NamedTuple"})
_NAMEDTUPLE_FACTORY = frozenset({"namedtuple", "collections.namedtuple"})


def returned_comment(name: str) -> str:
    return (f"# graph mode runs {name} as Python: compiled code calling this gets the tensors returned "
            "beside it with no dtype or shape; return a tuple or a {...} dict of its tensors")


def called_comment(name: str) -> str:
    return (f"# graph mode runs {name} as Python: what it computes reaches compiled code with no dtype "
            "or shape; compute it in functions or a Cell")


def with_python_objects_marked(module: cst.Module, compiled: set[str], called: set[str], imported: frozenset[str],
                               to_format) -> cst.Module:
    """``called``: the names compiled functions call as ``f(...)`` (graph_subset's survey): most
    files define a plain class, few make one in compiled code, and the others are not walked
    again. ``imported``: names the file binds to plain classes of other files
    (SiblingFacts.objects); a dotted one (``corr.CorrBlock``) is called as an attribute."""
    records, plain = _classes(module)
    if not (records | plain | imported) & called and not any("." in name for name in imported):
        return module
    return rewrite(module, _Marks(records, plain | imported, compiled, to_format))


def _classes(module: cst.Module) -> tuple[frozenset[str], frozenset[str]]:
    """The file's records (dataclasses, named tuples) and plain classes (no base but object)."""
    records, plain = set(), set()
    for statement in module.body:
        if isinstance(statement, cst.ClassDef):
            decorators = {get_full_name_for_node(_called(d.decorator)) for d in statement.decorators}
            bases = {get_full_name_for_node(base.value) for base in statement.bases}
            if decorators & _DATACLASS or bases & _NAMED_TUPLE:
                records.add(statement.name.value)
            elif not bases - {"object"}:
                plain.add(statement.name.value)
        elif m.matches(statement, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(m.Name())],
                                                                          value=m.Call())])):
            assign = statement.body[0]
            if get_full_name_for_node(assign.value.func) in _NAMEDTUPLE_FACTORY:
                records.add(assign.targets[0].target.value)
    return frozenset(records), frozenset(plain)


def _called(expression: cst.BaseExpression) -> cst.BaseExpression:
    return expression.func if isinstance(expression, cst.Call) else expression


class _Marks(InCompiledFunctions):
    """In a compiled function: ``name = Record(...)`` where a returned tuple holds ``name``, or
    ``return ..., Record(...)``; ``name = Plain(...)`` where the function calls ``name(...)`` or
    ``name.method(...)``."""

    def __init__(self, records: frozenset[str], plain: frozenset[str], compiled: set[str], to_format):
        super().__init__(compiled, to_format)
        self.records = records
        self.plain = plain
        self.uses: list[_Uses] = []  # per compiled function

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        if self.depth:
            uses = _Uses()
            node.body.visit(uses)
            self.uses.append(uses)

    def leave_FunctionDef(self, original_node, updated_node):
        if self.depth:
            self.uses.pop()
        return super().leave_FunctionDef(original_node, updated_node)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if not self.depth or len(updated_node.body) != 1:
            return updated_node
        text = self._comment(updated_node.body[0])
        return updated_node if text is None else with_comment(updated_node, text)

    def _comment(self, small: cst.BaseSmallStatement) -> str | None:
        uses = self.uses[-1]
        if m.matches(small, m.Assign(targets=[m.AssignTarget(m.Name())], value=m.Call())):
            name, made = small.targets[0].target.value, get_full_name_for_node(small.value.func)
            if made in self.records and name in uses.returned:
                return returned_comment(made)
            if made in self.plain and name in uses.called and (uses.called[name] or _passes_locals(small.value)):
                return called_comment(made)
        elif isinstance(small, cst.Return) and isinstance(small.value, cst.Tuple):
            for element in small.value.elements:
                if isinstance(element.value, cst.Call):
                    made = get_full_name_for_node(element.value.func)
                    if made in self.records:
                        return returned_comment(made)
        return None


def _passes_locals(call: cst.Call) -> bool:
    """Whether an argument is a local name (a tensor, in compiled code, more often than not): an
    object made and called with constants only runs while compiling, and gives constants."""
    return any(isinstance(arg.value, cst.Name) and arg.value.value not in ("self", "True", "False", "None")
               for arg in call.args)


class _Uses(cst.CSTVisitor):
    """The names a function's ``return a, b`` tuples hold, and those it calls or calls a method
    of (-> whether such a call passes a local name), not in the functions it defines."""

    def __init__(self):
        self.returned: set[str] = set()
        self.called: dict[str, bool] = {}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Return(self, node: cst.Return) -> None:
        if isinstance(node.value, cst.Tuple):
            self.returned.update(element.value.value for element in node.value.elements
                                 if isinstance(element.value, cst.Name))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute):
            func = func.value
        if isinstance(func, cst.Name):
            self.called[func.value] = self.called.get(func.value, False) or _passes_locals(node)
