"""black, applied to the statements the migration changed and to nothing else."""

from __future__ import annotations

from functools import lru_cache

import black
import libcst as cst

from transpiler.comments import comments
from transpiler.walk import walk

_MAX_LINE = 88
_MIN_LINE = 40


@lru_cache(maxsize=8192)
def _black(code: str, line_length: int) -> str | None:
    try:
        return black.format_str(code, mode=black.Mode(line_length=line_length))
    except Exception:  # black refuses some valid code (e.g. odd continuations)
        return None


def format_statement(statement: cst.SimpleStatementLine, depth: int, module: cst.Module) -> cst.SimpleStatementLine:
    """Reformat one changed statement, keeping the comment lines above it."""
    body = statement.with_changes(leading_lines=())
    code = module.code_for_node(body)
    line_length = max(_MIN_LINE, _MAX_LINE - len(module.default_indent.expandtabs()) * depth)
    formatted = _black(code, line_length)
    if formatted is None or formatted == code:
        return statement
    try:
        parsed = cst.parse_module(formatted)
    except cst.ParserSyntaxError:
        return statement
    if len(parsed.body) != 1 or not isinstance(parsed.body[0], cst.SimpleStatementLine):
        return statement
    result = parsed.body[0]
    # when black joins lines it can merge two comments into one (`# a  # b`): keep the statement as it was
    if "#" in code and sorted(comments(result)) != sorted(comments(body)):
        return statement
    return result.with_changes(leading_lines=statement.leading_lines)


def format_compound(statement: cst.BaseCompoundStatement, module: cst.Module) -> cst.BaseCompoundStatement:
    """A statement the migration wrote (at module level), in black's style."""
    body = statement.with_changes(leading_lines=())
    formatted = _black(module.code_for_node(body), _MAX_LINE)
    if formatted is None:
        return statement
    return cst.parse_statement(formatted).with_changes(leading_lines=statement.leading_lines)


# Expressions that bind looser than ``.attr``, ``[...]`` and ``(...)``: as the
# object of one of these they need parentheses, which libcst does not add when
# a rule composes nodes (``torch.masked_scatter(0, m, s)`` -> ``(0).masked_scatter``).
_LOOSE = (cst.BinaryOperation, cst.BooleanOperation, cst.UnaryOperation, cst.Comparison, cst.IfExp, cst.Lambda,
          cst.NamedExpr, cst.Await, cst.Yield, cst.Integer, cst.Float, cst.Imaginary, cst.ConcatenatedString)


class _ParenthesizeOwners(cst.CSTTransformer):
    def _owner(self, node: cst.BaseExpression) -> cst.BaseExpression:
        if isinstance(node, _LOOSE) and not node.lpar:
            return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return node

    def leave_Attribute(self, original_node, updated_node):
        return updated_node.with_changes(value=self._owner(updated_node.value))

    def leave_Subscript(self, original_node, updated_node):
        return updated_node.with_changes(value=self._owner(updated_node.value))

    def leave_Call(self, original_node, updated_node):
        return updated_node.with_changes(func=self._owner(updated_node.func))


class _LooseOwners(cst.CSTVisitor):
    found = False

    def on_visit(self, node) -> bool:
        owner = (node.value if isinstance(node, (cst.Attribute, cst.Subscript))
                 else node.func if isinstance(node, cst.Call) else None)
        if isinstance(owner, _LOOSE) and not owner.lpar:
            self.found = True
        return not self.found


def parenthesize_owners(statement: cst.CSTNode) -> cst.CSTNode:
    """The statement with parentheses around every loose expression a rule
    made the object of an attribute, subscript or call (rebuilt only then:
    the rewriter tracks its nodes by identity)."""
    finder = _LooseOwners()
    walk(statement, finder)
    return statement.visit(_ParenthesizeOwners()) if finder.found else statement


class _FormatChanged(cst.CSTTransformer):
    """Walks statements only and formats the ones marked as changed."""

    def __init__(self, module: cst.Module, marked):
        super().__init__()
        self.module = module
        self.marked = marked
        self.depth = 0

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.IndentedBlock):
            self.depth += 1
        return isinstance(
            node,
            (cst.Module, cst.BaseCompoundStatement, cst.BaseSuite, cst.ExceptHandler, cst.ExceptStarHandler,
             cst.Else, cst.Finally, cst.MatchCase),
        )

    def on_leave(self, original_node, updated_node):
        if isinstance(original_node, cst.IndentedBlock):
            self.depth -= 1
        elif isinstance(original_node, cst.SimpleStatementLine) and original_node in self.marked:
            return format_statement(updated_node, self.depth, self.module)
        return updated_node


def format_changed(module: cst.Module, marked) -> cst.Module:
    if not marked:
        return module
    return module.visit(_FormatChanged(module, marked))
