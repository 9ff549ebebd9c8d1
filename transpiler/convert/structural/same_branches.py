"""An ``if`` whose branches the conversion made the same is the branch alone.

timm's LeViT, EfficientFormer and TinyViT return the attention biases gathered
from their parameters in training, and a per-device cache of them in eval::

    if torch.jit.is_tracing() or self.training:
        return self.attention_biases[:, self.attention_bias_idxs]
    else:
        device_key = str(device)
        ...
        return self.attention_bias_cache[device_key]

Converted, ``torch.jit.is_tracing()`` is ``False`` and the cache is the value it
holds (attribute_caches.py), so both branches are ``return
self.attention_biases[:, self.attention_bias_idxs]`` under ``if False or
self.training:``. The ``if`` runs the same statements whichever way its test goes,
so where the test calls nothing (reading a name or an attribute has no effect) the
statements stand alone: what a MindSpore engineer writes, and what graph mode
compiles without a branch (measured on MindSpore 2.10 CPU: GRAPH_MODE and
``mindspore.export`` compile either form, and give the same values). Only in the
functions graph mode compiles, for ``if``/``else`` (not ``elif``) with blocks equal
to the character.
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.structural.compiled_functions import InCompiledFunctions
from transpiler.convert.walk import WITHIN_STATEMENT_TYPES, rewrite


def without_same_branches(module: cst.Module, compiled: set[str], to_format) -> cst.Module:
    return rewrite(module, _SameBranches(compiled, to_format))


def calls_nothing(expr: cst.CSTNode) -> bool:
    class _Calls(cst.CSTVisitor):
        found = False

        def visit_Call(self, node) -> None:
            self.found = True

        def visit_Await(self, node) -> None:
            self.found = True

        def visit_NamedExpr(self, node) -> None:  # binds a name
            self.found = True

    calls = _Calls()
    expr.visit(calls)
    return not calls.found


def branch_statements(statement: cst.If, block: cst.BaseSuite | None):
    """The statements of ``block`` standing in place of ``statement`` (its comments and blank
    lines above the first of them), or a removal where there are none."""
    if block is None:
        return cst.RemovalSentinel.REMOVE
    if not isinstance(block, cst.IndentedBlock):  # ``if t: x = 1`` on one line
        return cst.SimpleStatementLine(list(block.body), leading_lines=statement.leading_lines)
    body = list(block.body)
    if not body:
        return cst.RemovalSentinel.REMOVE
    body[0] = body[0].with_changes(leading_lines=[*statement.leading_lines, *body[0].leading_lines])
    return cst.FlattenSentinel(body)


class _SameBranches(InCompiledFunctions):
    prune = WITHIN_STATEMENT_TYPES

    def __init__(self, compiled: set[str], to_format):
        super().__init__(compiled, to_format)
        self.elifs: set[int] = set()  # an ``elif``'s If stands where no statements can

    def visit_If(self, node: cst.If) -> None:
        if isinstance(node.orelse, cst.If):
            self.elifs.add(id(node.orelse))

    def leave_If(self, original_node, updated_node):
        if not self.depth or id(original_node) in self.elifs or not isinstance(updated_node.orelse, cst.Else):
            return updated_node
        if not (updated_node.body.deep_equals(updated_node.orelse.body) and calls_nothing(updated_node.test)):
            return updated_node
        return branch_statements(updated_node, updated_node.body)
