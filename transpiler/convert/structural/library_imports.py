"""The torch imports marked statements keep inside a library's functions move above
the code, guarded, as they do in the functions graph mode compiles (graph_subset.py).

torch-einops-utils is a library of tensor helpers that other packages call in their
``forward``; converted on its own, nothing in it is compiled, so its marked
``tree_map_tensor`` keeps its import where marked.py puts it::

    def tree_map_tensor(fn, tree):
        # TODO(ms-migrate): torch.utils._pytree.tree_map: no MindSpore rule for this API
        from torch.utils._pytree import tree_map
        return tree_map(lambda t: fn(t) if ops.is_tensor(t) else t, tree)

x-transformers' TransformerWrapper.construct names it in a branch that never runs
(``if detach_mems:``), and graph mode parses every function compiled code names,
reached or not: "Unsupported statement 'ImportFrom'" refuses the whole network
(measured on MindSpore 2.10 CPU). The project that calls it is converted apart, so
its compiled code cannot say which of the library's functions it reaches: every
public function of a module (one without a ``__main__`` block: not a script), with
the functions nested in it, may be. There the torch imports, and only those (an
author's own ``import matplotlib`` stays: moved up it would be needed to import
the module), move above the code into ``try: ... except ImportError:`` binding
None, as graph_subset.py does for compiled functions: the module imports
without torch, graph mode compiles the callers, and the marked statement still
fails where it runs without torch (``'NoneType' object is not callable``) under
its marker.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from transpiler.convert.walk import LAYOUT_TYPES, Visitor, walk


def library_functions(module: cst.Module) -> set[str]:
    """The public module-level functions of a module that is no script (None of them in a
    file with an ``if __name__ == "__main__":`` block)."""
    if any(m.matches(statement, m.If(test=m.Comparison(left=m.Name("__name__"))))
           or m.matches(statement, m.If(test=m.Comparison(comparisons=[m.ZeroOrMore(), m.ComparisonTarget(
               comparator=m.Name("__name__")), m.ZeroOrMore()])))
           for statement in module.body):
        return set()
    return {statement.name.value for statement in module.body
            if isinstance(statement, cst.FunctionDef) and not statement.name.value.startswith("_")}


def hoist_library_imports(module: cst.Module, compiled: set[str], hoist, imports_torch, to_format) -> cst.Module:
    """``module`` with the torch imports of its library functions (and of the functions nested
    in them) above the code, guarded; the ``compiled`` ones graph_subset has seen to.
    ``hoist(module, functions, to_format)`` is graph_subset's: it moves the import statements
    of the functions named; ``imports_torch(small)`` tells a torch import."""
    functions = library_functions(module) - compiled
    if not functions:
        return module
    for _ in range(3):  # a function nested in one whose imports moved: the next round moves its own
        holding = _TorchImportsOnly(functions, imports_torch)
        walk(module, holding, prune=LAYOUT_TYPES)
        holding.found -= holding.clashing(module)
        if not holding.found:
            break
        module = hoist(module, holding.found, to_format)
    return module


class _TorchImportsOnly(Visitor):
    """The functions, of ``functions`` or nested in one, whose own statements hold imports,
    all of them torch imports: those graph_subset's hoist may move (it moves the imports of
    a function named, not of the functions nested in it: ``tree_flatten_with_inverse``'s
    ``inverse`` holds the import, not the function around it)."""

    def __init__(self, functions: set[str], imports_torch):
        super().__init__()
        self.functions = functions
        self.imports_torch = imports_torch
        self.stack: list[str] = []
        self.torch: dict[str, bool] = {}  # function -> all its own imports are torch imports
        self.found: set[str] = set()
        self.bound: dict[str, set[str]] = {}  # a name a function's import binds -> the imports binding it
        self.binders: dict[str, set[str]] = {}  # function -> the names its own imports bind

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.append(node.name.value)

    def leave_FunctionDef(self, original_node) -> None:
        name = self.stack.pop()
        if self.torch.pop(name, False):
            self.found.add(name)

    def visit_ClassDef(self, node) -> bool:
        return bool(self.stack)

    def _import(self, node) -> None:
        if not self.stack:
            return
        code = cst.Module([cst.SimpleStatementLine([node])]).code.strip()
        for alias in node.names if not isinstance(node.names, cst.ImportStar) else ():
            name = (alias.asname.name if alias.asname is not None else alias.name)
            name = cst.Module([]).code_for_node(name).split(".")[0]
            self.bound.setdefault(name, set()).add(code)
            self.binders.setdefault(self.stack[-1], set()).add(name)
        if self.stack[0] not in self.functions:
            return
        own = self.stack[-1]
        self.torch[own] = self.torch.get(own, True) and self.imports_torch(node)

    visit_Import = visit_ImportFrom = _import

    def clashing(self, module: cst.Module) -> set[str]:
        """The functions found whose imports bind a name another import of another function binds
        to something else (torch._dynamo's style: each function imports its own ``config``), or
        that the module binds itself: moved up, one would take the other's place."""
        at_module = set()
        for statement in module.body:
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
                at_module.add(statement.name.value)
            elif isinstance(statement, cst.SimpleStatementLine):
                for small in statement.body:
                    if isinstance(small, cst.Assign):
                        at_module.update(n.value for t in small.targets for n in m.findall(t.target, m.Name()))
                    elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                        code = cst.Module([cst.SimpleStatementLine([small])]).code.strip()
                        for alias in small.names:
                            name = cst.Module([]).code_for_node(alias.asname.name if alias.asname else alias.name)
                            if code not in self.bound.get(name.split(".")[0], {code}):
                                at_module.add(name.split(".")[0])
        clashes = {name for name, codes in self.bound.items() if len(codes) > 1 or name in at_module}
        return {function for function in self.found if self.binders.get(function, set()) & clashes}
