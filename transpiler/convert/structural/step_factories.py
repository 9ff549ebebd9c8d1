"""convert --jit, a training step inside a function the program calls once a batch:
the compiled step is made once per network, loss and optimizer.

    def train(model, loss, optimizer, x, y):      @functools.cache
        optimizer.zero_grad()                      def make_train_step(model, loss, optimizer):
        output = loss(model(x), y)                     def forward_fn(x, y):
        output.backward()                 ->               output = loss(model(x), y)
        optimizer.step()                                   return output
        return output.item()                           grad_fn = mindspore.value_and_grad(...)

                                                       @mindspore.jit
                                                       def train_step(x, y):
                                                           output, grads = grad_fn(x, y)
                                                           optimizer(grads)
                                                           return output
                                                       return train_step

                                                   def train(model, loss, optimizer, x, y):
                                                       train_step = make_train_step(model, loss, optimizer)
                                                       output = train_step(x, y)
                                                       return output.item()

Where the optimizer stays outside the compiled step (training_loop's ``_fuses``), the
factory is ``train_grad_fn`` and returns ``mindspore.jit(mindspore.value_and_grad(...))``.

Measured with MindSpore 2.10 on a softmax regression (vinhkhuc/PyTorch-Mini-Tutorials):
a gradient function made inside ``train`` is a new function at every call, and a
``mindspore.jit`` function that receives a Cell, a loss function or an optimizer as an
argument compiles again at every call (about 0.6 s a step, each of them); closed over
instead, the step compiles once and then takes 4-5 ms. So the objects the step reads
become the factory's arguments (``functools.cache`` keeps one compiled step per
combination), and only the rest (the batch) is passed to the compiled function.

Only where the split is certain: a top-level function, every object the step reads is
one of its parameters and known (from the file) to be a network, a layer or loss, or an
optimizer, or is only called. Anything else keeps the step uncompiled, with a note.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from transpiler.convert.structural.provenance import CELL, LAYER, OPTIMIZER, WRAPPER
from transpiler.convert.structural.step_names import free_names, names_of
from transpiler.convert.structural.step_plan import StepPlan, forward_statements, root_name

_OBJECTS = frozenset({CELL, LAYER, WRAPPER, OPTIMIZER})


@dataclass
class Factory:
    name: str  # the module-level function that makes the compiled step (or gradient function)
    keys: list[str]  # its parameters: the objects the step reads, closed over
    function: cst.FunctionDef  # the function holding the step


def split(planner, site, plan: StepPlan, module: cst.Module) -> tuple[list[str], list[str]] | None:
    """(closed over, passed) names of the step's forward function, or None when the
    step cannot be made once per object (see the module docstring)."""
    function = plan.function
    if not isinstance(function, cst.FunctionDef) or not any(s is function for s in module.body):
        return None
    params = [p.name.value for p in (*function.params.posonly_params, *function.params.params,
                                     *function.params.kwonly_params)]
    statements = site.statements
    body = [s for i in sorted(plan.forward + plan.recomputed)
            for s in forward_statements(statements[i], i in plan.exits)]
    called = set().union(*(names_of(s).callees for s in body)) if body else set()
    local = set(site.scope.bound)
    optimizer_root = root_name(plan.optimizer)
    nodes = _name_nodes(body)  # the original tree's nodes: provenance knows their scope
    keys: list[str] = []
    for name in [*free_names(body), optimizer_root]:
        if name is None or name not in local or name in keys:
            continue  # a module global is read where it stands
        if (name in plan.params and name != optimizer_root and name not in called
                and (name not in nodes or planner.provenance.kind(nodes[name]) not in _OBJECTS)):
            continue  # a tensor, a number: an argument of the compiled function
        if name not in params or _rebound(function, name):
            return None  # made in the function, at every call: the cache would keep each one
        keys.append(name)
    keys.sort(key=params.index)  # the factory's parameters in the order the function takes them
    return keys, [p for p in plan.params if p not in keys]


def _name_nodes(body: list[cst.CSTNode]) -> dict[str, cst.Name]:
    found: dict[str, cst.Name] = {}

    class Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            found.setdefault(node.value, node)

    for statement in body:
        statement.visit(Names())
    return found


def _rebound(function: cst.FunctionDef, name: str) -> bool:
    return any(name in names_of(statement).bound for statement in function.body.body)


def definition(factory: Factory, body: list[cst.BaseStatement], cache: cst.BaseExpression) -> cst.FunctionDef:
    """``@functools.cache def make_train_step(model, ...): def forward_fn(...): ...; return ...``"""
    owner = factory.function.name.value
    once = f"once per {_spoken(factory.keys)}" if factory.keys else "once"
    text = f"# {owner}()'s training step, compiled {once} ({owner}() runs every batch)"
    comment = cst.EmptyLine(comment=cst.Comment(text))
    return cst.FunctionDef(
        name=cst.Name(factory.name),
        params=cst.Parameters([cst.Param(cst.Name(key)) for key in factory.keys]),
        body=cst.IndentedBlock(body),
        decorators=[cst.Decorator(cache)],
        leading_lines=[cst.EmptyLine(), cst.EmptyLine(), comment],
    )


def made(factory: Factory, local: str) -> cst.SimpleStatementLine:
    """``train_step = make_train_step(model, loss, optimizer)``"""
    call = cst.Call(cst.Name(factory.name), [cst.Arg(cst.Name(key)) for key in factory.keys])
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(local))], call)])


def _spoken(names: list[str]) -> str:
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1]
