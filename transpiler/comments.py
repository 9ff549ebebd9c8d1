"""No comment is ever lost.

A comment lives in the whitespace of some node: after a comma, after an
opening parenthesis, on a statement's line. A rewrite that rebuilds a node
without that whitespace (an argument dropped, a call rebuilt by a hook, an
import name removed, a statement restructured) drops the comment with it.
``lost`` finds the comments of a node that its replacement no longer holds
(by text, as a multiset), and ``inside_call`` / ``above`` give them back: at
the end of the rewritten call's arguments, or on their own lines above the
statement.
"""

from __future__ import annotations

from collections import Counter

import libcst as cst

from transpiler.walk import child_fields


def comments(node: cst.CSTNode, nested_statements: bool = True) -> list[str]:
    """The text of every comment in ``node``, in source order. Without
    ``nested_statements``, only the comments of a compound statement's own
    lines (its header, the block's first line and footer), not of the
    statements in its body."""
    found: list[str] = []
    _collect(node, node, nested_statements, found)
    return found


def _collect(node: cst.CSTNode, root: cst.CSTNode, nested: bool, found: list[str]) -> None:
    if type(node) is cst.Comment:
        found.append(node.value)
        return
    if not nested and node is not root and isinstance(node, cst.BaseStatement):
        return
    for name in child_fields(type(node)):
        value = getattr(node, name)
        if type(value) is tuple or type(value) is list:
            for child in value:
                if isinstance(child, cst.CSTNode):
                    _collect(child, root, nested, found)
        elif isinstance(value, cst.CSTNode):
            _collect(value, root, nested, found)


def lost(before: list[str], after: list[str]) -> list[str]:
    """The comments of ``before`` that ``after`` does not have, in order."""
    if not before:
        return []
    remaining = Counter(after)
    missing = []
    for text in before:
        if remaining[text] > 0:
            remaining[text] -= 1
        else:
            missing.append(text)
    return missing


def _lines(texts: list[str]) -> list[cst.EmptyLine]:
    return [cst.EmptyLine(indent=True, whitespace=cst.SimpleWhitespace("    "), comment=cst.Comment(text))
            for text in texts]


def _with_lines(whitespace: cst.BaseParenthesizableWhitespace, texts: list[str]) -> cst.ParenthesizedWhitespace:
    if isinstance(whitespace, cst.ParenthesizedWhitespace):
        return whitespace.with_changes(empty_lines=[*whitespace.empty_lines, *_lines(texts)])
    return cst.ParenthesizedWhitespace(empty_lines=_lines(texts), indent=True)


def inside_call(call: cst.Call, texts: list[str]) -> cst.Call:
    """``call`` with ``texts`` as comment lines after its last argument."""
    if not texts:
        return call
    if not call.args:
        return call.with_changes(whitespace_before_args=_with_lines(call.whitespace_before_args, texts))
    args = list(call.args)
    last = args[-1]
    if isinstance(last.comma, cst.Comma):
        comma = last.comma.with_changes(whitespace_after=_with_lines(last.comma.whitespace_after, texts))
        args[-1] = last.with_changes(comma=comma)
    else:  # no trailing comma: f(x for x in y,) would not even parse
        args[-1] = last.with_changes(whitespace_after_arg=_with_lines(last.whitespace_after_arg, texts))
    return call.with_changes(args=args)


def above(statement, texts: list[str]):
    """``statement`` (or the first of several) with ``texts`` as comment
    lines above it."""
    if not texts:
        return statement
    if isinstance(statement, cst.FlattenSentinel):
        nodes = list(statement.nodes)
        if nodes:
            nodes[0] = above(nodes[0], texts)
        return cst.FlattenSentinel(nodes)
    if not hasattr(statement, "leading_lines"):
        return statement  # removed: nothing left to hold them
    lines = [cst.EmptyLine(comment=cst.Comment(text)) for text in texts]
    return statement.with_changes(leading_lines=[*statement.leading_lines, *lines])


def keep_in_statement(original: cst.CSTNode, result):
    """``result`` with the comments of ``original``'s own lines it dropped
    put back above it (a compound statement's body keeps its own)."""
    if result is original:
        return result
    before = comments(original, nested_statements=False)
    if not before:
        return result
    nodes = result.nodes if isinstance(result, cst.FlattenSentinel) else [result]
    after = [text for node in nodes if isinstance(node, cst.CSTNode) for text in comments(node)]
    return above(result, lost(before, after))
