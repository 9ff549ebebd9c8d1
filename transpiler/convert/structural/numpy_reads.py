"""A tensor's values read as NumPy or a list in compiled code are marked with why graph
mode cannot compile what is made of them.

Time-Series-Library's TimesNet (MIT) finds its periods in forward::

    top_list = top_list.detach().cpu().numpy()
    period = x.shape[1] // top_list
    return period, abs(xf).mean(-1)[:, top_list]

and reshapes by ``period``; mamba.py's Jamba routes tokens to experts by
``top_x.tolist()`` of a ``nonzero``. PyNative runs the converted ``.numpy()`` as torch does.
Graph mode (GRAPH_MODE, ``mindspore.jit``, ``mindspore.export``) reads the values only
when the graph runs (JIT fallback), so a tensor sized or indexed by them is of unknown
dtype and rank while it compiles: TimesNet's blocks compute, but the LayerNorm after them
fails ("For Tensor.astype, the input type must be one of ...", measured on MindSpore 2.10
CPU); code that needs neither runs. The code stays as written; the comment above the line
says so.
Only in the functions graph mode compiles (graph_subset.py): elsewhere a ``.numpy()`` or
``.tolist()`` is what it was in torch.
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.structural.compiled_functions import InCompiledFunctions, with_comment
from transpiler.convert.walk import rewrite

COMMENT = ("# graph mode reads a tensor's values only when the graph runs: tensors sized or indexed by "
           "them have no dtype or shape while it compiles")
READS = frozenset({"numpy", "asnumpy", "tolist"})


def with_numpy_reads_marked(module: cst.Module, compiled: set[str], to_format) -> cst.Module:
    return rewrite(module, _Marks(compiled, to_format))


class _Marks(InCompiledFunctions):
    def __init__(self, compiled: set[str], to_format):
        super().__init__(compiled, to_format)
        self.found = [False]

    def visit_SimpleStatementLine(self, node) -> None:
        self.found.append(False)

    def visit_Call(self, node: cst.Call) -> None:
        if self.depth and not node.args and isinstance(node.func, cst.Attribute) and node.func.attr.value in READS:
            self.found[-1] = True

    def leave_SimpleStatementLine(self, original_node, updated_node):
        return with_comment(updated_node, COMMENT) if self.found.pop() else updated_node

    def leave_IndentedBlock(self, original_node, updated_node):
        """One comment over consecutive marked lines (Jamba's two ``.tolist()``)."""
        body, previous = [], False
        for statement in updated_node.body:
            marked = _marked(statement)
            if marked and previous:
                statement = statement.with_changes(leading_lines=statement.leading_lines[:-1])
            body.append(statement)
            previous = marked
        return updated_node.with_changes(body=body)


def _marked(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and bool(statement.leading_lines) \
        and statement.leading_lines[-1].comment is not None and statement.leading_lines[-1].comment.value == COMMENT
