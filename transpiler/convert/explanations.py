"""Comments that say why the output reads as it does, once per file.

A rule whose form needs a word of explanation wherever it appears (every new
BatchNorm gets ``.set_train()``) asks for a comment with ``explain(ctx, node,
text)`` (rewrite_rules.api): the first statement of the file that holds such a
node when the rewrite leaves it gets ``# text`` above it, later ones none::

    # .set_train(): torch builds a layer in training mode, MindSpore a Cell in inference mode
    self.bn1 = nn.BatchNorm2d(planes, momentum=0.9).set_train()
    self.bn2 = nn.BatchNorm2d(planes, momentum=0.9).set_train()
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.context import FileContext
from transpiler.convert.marked import present_nodes


def with_explanations(statement: cst.CSTNode, ctx: FileContext) -> cst.CSTNode:
    """``statement`` (a simple statement line the rewrite just left) with the comments
    its rules' nodes ask for that the file does not carry yet."""
    said = ctx.facts.setdefault("explained", set())
    pending = [(node, text) for node, text in ctx.explanations if text not in said]
    if not pending or not isinstance(statement, cst.SimpleStatementLine):
        return statement
    present = present_nodes(statement, [node for node, _ in pending])
    texts = list(dict.fromkeys(text for node, text in pending if id(node) in present))
    if not texts:
        return statement
    said.update(texts)
    lines = [cst.EmptyLine(comment=cst.Comment(f"# {text}")) for text in texts]
    return statement.with_changes(leading_lines=[*statement.leading_lines, *lines])
