"""Data-parallel gradient averaging in the converted training step.

torch's ``DistributedDataParallel(model)`` averages the gradients over the
ranks inside ``loss.backward()``. The converted model is the model itself
(rewrite_rules/training/distributed.py), so the training step of a file that
wraps its model averages them explicitly, as MindSpore's data-parallel
training does::

    grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
    grad_reducer = nn.DistributedGradReducer(optimizer.parameters, mean=True)
    ...
        loss, grads = grad_fn(x, y)
        grads = grad_reducer(grads)
        optimizer(grads)

Clipping and the optimizer then see the averaged gradients, as in torch. Where
the file wraps the model only on some paths (``if args.distributed: model =
DDP(model)``) the reducer is ``ops.identity`` when no process group is set
up. Measured under msrun on 2 CPU workers: ``mean=True`` gives the average
without ``set_auto_parallel_context`` (tests/training/test_distributed_msrun.py).
"""

from __future__ import annotations

import libcst as cst

_DDP = frozenset({"torch.nn.parallel.DistributedDataParallel",
                  "torch.nn.parallel.distributed.DistributedDataParallel"})
PLAIN, CONDITIONAL = "plain", "conditional"


def reduction_of(analysis, module: cst.Module) -> str | None:
    """PLAIN when the file wraps its model in DistributedDataParallel on every
    path, CONDITIONAL when only inside an ``if`` (or a conditional expression),
    None when it never does."""
    if not _DDP & set(analysis.references.values()):
        return None
    finder = _Wraps(analysis)
    module.visit(finder)
    if not finder.found:
        return None
    return CONDITIONAL if finder.conditional else PLAIN


class _Wraps(cst.CSTVisitor):
    def __init__(self, analysis):
        self.analysis = analysis
        self.depth = 0
        self.found = False
        self.conditional = False

    def visit_If(self, node) -> None:
        self.depth += 1

    def leave_If(self, node) -> None:
        self.depth -= 1

    def visit_IfExp(self, node) -> None:
        self.depth += 1

    def leave_IfExp(self, node) -> None:
        self.depth -= 1

    def visit_Call(self, node: cst.Call) -> None:
        if self.analysis.qualified(node.func) in _DDP:
            self.found = True
            self.conditional = self.conditional or self.depth > 0


def reducer_definition(ctx, name: str, optimizer: cst.BaseExpression, mode: str) -> cst.SimpleStatementLine:
    """``grad_reducer = nn.DistributedGradReducer(optimizer.parameters, mean=True)``"""
    parameters = cst.Attribute(optimizer.deep_clone(), cst.Name("parameters"))
    mean = cst.Arg(cst.Name("True"), keyword=cst.Name("mean"),
                   equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
    value = cst.Call(ctx.ref("mindspore.nn.DistributedGradReducer"), [cst.Arg(parameters), mean])
    if mode == CONDITIONAL:
        initialized = cst.Call(ctx.ref("mindspore.mint.distributed.is_initialized"), [])
        value = cst.IfExp(test=initialized, body=value, orelse=ctx.ref("mindspore.ops.identity"))
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], value)])


def reduce_statement(name: str, grads: str) -> cst.SimpleStatementLine:
    """``grads = grad_reducer(grads)``"""
    call = cst.Call(cst.Name(name), [cst.Arg(cst.Name(grads))])
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(grads))], call)])
