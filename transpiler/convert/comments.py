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

from transpiler.convert.walk import child_fields


def comments(node: cst.CSTNode) -> list[str]:
    """The text of every comment in ``node``, in source order."""
    return _collect(node, _ALL)


def own_comments(statement: cst.CSTNode) -> list[str]:
    """The comments of a statement's own lines: for a compound statement its
    header, the first line and footer of its block, not the statements in it."""
    return _collect(statement, _OWN)


_ALL, _OWN, _OWN_AND_ABOVE_NESTED = range(3)


def _collect(root: cst.CSTNode, mode: int) -> list[str]:
    """An iterative walk (statements can nest deeply) in source order;
    ``mode`` says what to take from statements nested in ``root``: all of
    them, nothing, or only the comment lines above them."""
    found: list[str] = []
    stack = [root]
    pop, push = stack.pop, stack.extend
    while stack:
        node = pop()
        kind = type(node)
        if kind is cst.Comment:
            found.append(node.value)
            continue
        fields = _FIELDS.get(kind)
        if fields is None:
            fields = _FIELDS[kind] = child_fields(kind)
            _STATEMENTS[kind] = issubclass(kind, cst.BaseStatement)
        if mode != _ALL and _STATEMENTS[kind] and node is not root:
            if mode == _OWN_AND_ABOVE_NESTED:
                found += [line.comment.value for line in node.leading_lines if line.comment is not None]
            continue
        children = []
        for name in fields:
            value = getattr(node, name)
            if type(value) is tuple or type(value) is list:
                children += value
            elif value is not None and type(value) is not cst.MaybeSentinel:
                children.append(value)
        if children:
            children.reverse()
            push(children)
    return found


_FIELDS: dict[type, tuple[str, ...]] = {}  # node type -> the fields holding its children
_STATEMENTS: dict[type, bool] = {}  # node type -> whether it is a statement


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
    before = own_comments(original)
    if not before:
        return result
    nodes = result.nodes if isinstance(result, cst.FlattenSentinel) else [result]
    # a comment may have moved onto a statement of the block (a block that was unwrapped)
    after = [text for node in nodes if isinstance(node, cst.CSTNode) for text in _collect(node, _OWN_AND_ABOVE_NESTED)]
    return above(result, lost(before, after))
