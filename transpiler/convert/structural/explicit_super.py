"""``super().construct(x)`` in a Cell another class derives from: ``super(Cls, self).construct(x)``.

pytorch-tcn's TemporalConv1d pads its input, then runs nn.Conv1d's forward through
``super().forward(x)``; DepthwiseConv1d derives from it. Graph mode reads a bare
``super()`` as ``super(type(self), self)`` (measured on MindSpore 2.10 CPU): called on
a DepthwiseConv1d, TemporalConv1d's ``construct`` finds itself again, and compiling
stops at "Exceed function call depth limit 1000"; Python's two-argument form names
the class and compiles. Only in the functions graph mode compiles, of a class at the
top of the file that a class of the file names as a base (a subclass elsewhere is
not seen here).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from transpiler.convert.structural.compiled_functions import InCompiledFunctions
from transpiler.convert.walk import rewrite

COMMENT = "# graph mode reads super() as super(type(self), self), which a subclass would recurse into"


def with_explicit_super(module: cst.Module, compiled: set[str], to_format) -> cst.Module:
    classes = {s.name.value for s in module.body if isinstance(s, cst.ClassDef)}
    # a base named as such (``class LayerNorm(nn.LayerNorm)`` derives from no class of the file)
    bases = {arg.value.value for node in m.findall(module, m.ClassDef()) for arg in node.bases
             if isinstance(arg.value, cst.Name)}
    derived_from = classes & bases
    if not derived_from:
        return module
    return rewrite(module, _ExplicitSuper(derived_from, compiled, to_format))


class _ExplicitSuper(InCompiledFunctions):
    def __init__(self, derived_from: set[str], compiled: set[str], to_format):
        super().__init__(compiled, to_format)
        self.derived_from = derived_from
        self.classes: list[str | None] = []  # the top-level class a method is in, else None
        self.selves: list[str | None] = []  # the first parameter of each method entered
        self.rewritten = [False]

    def visit_ClassDef(self, node) -> None:
        top = not self.classes and node.name.value in self.derived_from
        self.classes.append(node.name.value if top else None)

    def leave_ClassDef(self, original_node, updated_node):
        self.classes.pop()
        return updated_node

    def visit_FunctionDef(self, node) -> None:
        super().visit_FunctionDef(node)
        params = node.params.params
        method = len(self.classes) == 1 and self.classes[0] is not None and not self.selves
        self.selves.append(params[0].name.value if method and params else None)

    def leave_FunctionDef(self, original_node, updated_node):
        self.selves.pop()
        return super().leave_FunctionDef(original_node, updated_node)

    def visit_SimpleStatementLine(self, node) -> None:
        self.rewritten.append(False)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if not self.rewritten.pop():
            return updated_node
        comment = cst.EmptyLine(comment=cst.Comment(COMMENT))
        return updated_node.with_changes(leading_lines=[*updated_node.leading_lines, comment])

    def leave_Call(self, original_node, updated_node):
        if not (self.depth == 1 and self.selves and self.selves[-1] and isinstance(updated_node.func, cst.Name)
                and updated_node.func.value == "super" and not updated_node.args):
            return updated_node
        self.rewritten[-1] = True
        return updated_node.with_changes(args=[
            cst.Arg(cst.Name(self.classes[0]), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.Arg(cst.Name(self.selves[-1]))])
