"""A comprehension with several ``for`` clauses, in code graph mode compiles:
the loops it stands for.

VITS flattens its padding as ``pad_shape = [item for sublist in l for item in
sublist]``; x-transformers returns ``tuple(layer for block in order for layer in
range(...))``. Graph mode compiles a comprehension of one ``for`` clause only
("The 'generators' supports 1 'comprehension' in ListComp/GeneratorExp, but got 2
comprehensions", measured on MindSpore 2.10 CPU) and refuses the whole
``construct`` that calls such a function. Where the comprehension is the whole
value of an assignment to a name or of a ``return`` (``list(...)`` and
``tuple(...)`` of it too), it becomes the nested loops that append to that list::

    pad_shape = []
    for sublist in l:
        for item in sublist:
            pad_shape.append(item)

Only where the loop variables are not otherwise used in the function (the loops
leave them bound) and the comprehension does not read the name it is assigned to.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from transpiler.convert.formatting import KeepsFormatting
from transpiler.convert.walk import LAYOUT_TYPES, rewrite
from transpiler.convert.structural.name_reads import mentions


def without_nested_comprehensions(module: cst.Module, compiled: set[str], to_format) -> cst.Module:
    return rewrite(module, _NestedComprehensions(compiled, to_format))


def _comprehension(value: cst.BaseExpression):
    """(the ListComp/GeneratorExp, the wrapping ``list``/``tuple`` name or None)."""
    if isinstance(value, cst.ListComp):
        return value, None
    if (m.matches(value, m.Call(func=m.Name("list") | m.Name("tuple"), args=[m.Arg(keyword=None, star="")]))
            and isinstance(value.args[0].value, (cst.ListComp, cst.GeneratorExp))):
        return value.args[0].value, value.func.value
    return None, None


def _clauses(comprehension) -> list[cst.CompFor]:
    clauses, clause = [], comprehension.for_in
    while clause is not None:
        clauses.append(clause)
        clause = clause.inner_for_in
    return clauses


def _loops(clauses: list[cst.CompFor], innermost: cst.BaseStatement) -> cst.For:
    body = innermost
    for clause in reversed(clauses):
        for condition in reversed(clause.ifs):
            body = cst.If(test=condition.test, body=cst.IndentedBlock([body]))
        body = cst.For(target=clause.target, iter=clause.iter, body=cst.IndentedBlock([body]))
    return body


def _bound_names(target: cst.BaseExpression) -> set[str]:
    return {name.value for name in m.findall(target, m.Name())}


class _NestedComprehensions(KeepsFormatting):
    prune = LAYOUT_TYPES

    def __init__(self, compiled: set[str], to_format):
        super().__init__(to_format)
        self.compiled = compiled
        self.functions: list[cst.FunctionDef] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node)

    def leave_FunctionDef(self, original_node, updated_node):
        self.functions.pop()
        return updated_node

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if not self.functions or self.functions[-1].name.value not in self.compiled or len(updated_node.body) != 1:
            return updated_node
        small = updated_node.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            target = small.targets[0].target.value
            value = small.value
        elif isinstance(small, cst.Return) and small.value is not None:
            target, value = None, small.value
        else:
            return updated_node
        comprehension, wrapper = _comprehension(value)
        if comprehension is None or comprehension.for_in.inner_for_in is None:
            return updated_node
        clauses = _clauses(comprehension)
        if any(clause.asynchronous is not None for clause in clauses):
            return updated_node
        loop_names = set().union(*(_bound_names(clause.target) for clause in clauses))
        inside = set(mentions(comprehension))
        outside = [name for name in mentions(self.functions[-1].body) if name in loop_names]
        # each loop name is mentioned in the comprehension only (its target and its reads there)
        if len(outside) != sum(mentions(comprehension).count(name) for name in loop_names & inside):
            return updated_node
        if target is None:
            element = comprehension.elt
            target = f"{element.value}s" if isinstance(element, cst.Name) else "items"
            if target in mentions(self.functions[-1]):
                return updated_node
        elif target in inside:
            return updated_node
        append = cst.SimpleStatementLine([cst.Expr(cst.Call(cst.Attribute(cst.Name(target), cst.Name("append")),
                                                            [cst.Arg(comprehension.elt)]))])
        made = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(target))], cst.List([]))],
                                       leading_lines=updated_node.leading_lines)
        loops = _loops(clauses, append)
        if isinstance(small, cst.Return) or wrapper == "tuple":
            result = cst.Name(target) if wrapper != "tuple" else cst.Call(cst.Name("tuple"), [cst.Arg(cst.Name(target))])
            last = (cst.Return(result) if isinstance(small, cst.Return)
                    else cst.Assign([cst.AssignTarget(cst.Name(target))], result))
            return cst.FlattenSentinel([made, loops, cst.SimpleStatementLine([last])])
        return cst.FlattenSentinel([made, loops])
