"""``d() if callable(d) else d`` in a compiled function: a tensor is taken as it is.

The ``default`` helper of lucidrains' packages (x-transformers, and most of his
repositories) calls a lazy default and passes any other value through::

    def default(*args):
        for arg in args:
            if exists(arg):
                return arg() if callable(arg) else arg

Graph mode has no ``callable``: its JIT fallback evaluates it when the network
runs, so graph mode compiles both branches, and with a tensor ``arg()`` refuses the
network ("The object is not callable", x-transformers' ``default(context, x)``;
measured on MindSpore 2.10 CPU, for an ``if`` statement as for the conditional
expression). ``ops.is_tensor(arg)`` graph mode decides as it compiles, so a
tensor, never callable, takes the branch it always took::

    return arg if ops.is_tensor(arg) else arg() if callable(arg) else arg

The same in PyNative. Only in the functions graph mode compiles, and only in a file
that binds ``ops`` (``from mindspore import ops``; else ``isinstance(arg,
mindspore.Tensor)`` under ``import mindspore``, measured alike). (A lambda passed in still fails in graph mode: the JIT
fallback cannot read it, "name 'arg' is not defined"; measured, no test graph mode
decides tells a function apart from a Cell or a number.)
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from transpiler.convert.structural.compiled_functions import InCompiledFunctions
from transpiler.convert.walk import LAYOUT_TYPES, rewrite


def without_callable_tests(module: cst.Module, compiled: set[str], to_format) -> cst.Module:
    imports = [small for statement in module.body if isinstance(statement, cst.SimpleStatementLine)
               for small in statement.body]
    if any(m.matches(small, m.ImportFrom(module=m.Name("mindspore"), names=[
            m.ZeroOrMore(), m.ImportAlias(name=m.Name("ops"), asname=None), m.ZeroOrMore()])) for small in imports):
        test = "ops.is_tensor({})"
    elif any(m.matches(small, m.Import(names=[m.ZeroOrMore(), m.ImportAlias(name=m.Name("mindspore"), asname=None),
                                               m.ZeroOrMore()])) for small in imports):
        test = "isinstance({}, mindspore.Tensor)"
    else:
        return module
    return rewrite(module, _Rewrite(compiled, test, to_format))


def _called_if_callable(node: cst.IfExp) -> str | None:
    """``d`` for ``d() if callable(d) else ...``."""
    test, body = node.test, node.body
    if not (isinstance(test, cst.Call) and m.matches(test.func, m.Name("callable")) and len(test.args) == 1
            and isinstance(test.args[0].value, cst.Name) and not test.args[0].star and not test.args[0].keyword):
        return None
    name = test.args[0].value.value
    if m.matches(body, m.Call(func=m.Name(name), args=[])):
        return name
    return None


class _Rewrite(InCompiledFunctions):
    prune = LAYOUT_TYPES

    def __init__(self, compiled: set[str], test: str, to_format):
        super().__init__(compiled, to_format)
        self.test = test
        self.changed = False

    def leave_IfExp(self, original_node, updated_node):
        name = _called_if_callable(updated_node) if self.depth else None
        if name is None:
            return updated_node
        self.changed = True
        tensor = cst.parse_expression(self.test.format(name))
        return cst.IfExp(test=tensor, body=updated_node.orelse.deep_clone(), orelse=updated_node)

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if self.changed:
            self.to_format.add(updated_node)
            self.changed = False
        return updated_node
