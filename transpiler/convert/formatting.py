"""black, applied to the statements the migration changed and to nothing else."""

from __future__ import annotations

import contextlib
import contextvars
import os
import time
from functools import lru_cache
from typing import NamedTuple

import libcst as cst

from transpiler.convert.codegen import QuietCodegenState, code_for_node
from transpiler.convert.comments import comments
from transpiler.convert.node_sets import NodeSet
from transpiler.convert.positions import count_lines
from transpiler.convert.walk import IS_STATEMENT, LAYOUT_TYPES, Transformer, rewrite, walk

DEFAULT_LINE_LENGTH = 88  # black's
_MIN_LINE = 40
# the line length of the project being converted ([tool.black] line-length), for this conversion
_LINE_LENGTH: contextvars.ContextVar[int] = contextvars.ContextVar("line_length", default=DEFAULT_LINE_LENGTH)


def project_line_length(source: str) -> int:
    """black's line length for ``source`` (a file or directory): ``[tool.black] line-length``
    of the pyproject.toml black itself would read, else black's default."""
    import black

    try:
        config = black.find_pyproject_toml((os.path.abspath(source),), None)
        value = black.parse_pyproject_toml(config).get("line_length") if config else None
    except (OSError, ValueError):  # an unreadable or invalid file: black's default, as black would fail later
        return DEFAULT_LINE_LENGTH
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else DEFAULT_LINE_LENGTH


@contextlib.contextmanager
def line_length(length: int | None):
    """Statements formatted inside this block are black's at ``length`` (None: as set around it)."""
    if length is None:
        yield
        return
    token = _LINE_LENGTH.set(length)
    try:
        yield
    finally:
        _LINE_LENGTH.reset(token)


@lru_cache(maxsize=8192)
def _black(code: str, line_length: int) -> str | None:
    import black  # imported by the first statement to format: a file with nothing to change never pays for it

    try:
        return black.format_str(code, mode=_mode(line_length))
    except Exception:  # black refuses some valid code (e.g. odd continuations)
        return None


@lru_cache(maxsize=None)
def _mode(line_length: int):
    """One Mode per line length: black's own caches take the mode in their
    keys, and an equal Mode that is another object costs a dataclass
    comparison on every lookup (a hundred per statement)."""
    import black

    return black.Mode(line_length=line_length)


def _line_length(module: cst.Module, depth: int) -> int:
    """black's line length for a statement ``depth`` blocks deep."""
    return max(_MIN_LINE, _LINE_LENGTH.get() - len(module.default_indent.expandtabs()) * depth)


def format_statement(statement: cst.SimpleStatementLine, depth: int, module: cst.Module) -> cst.SimpleStatementLine:
    """Reformat one changed statement, keeping the comment lines above it."""
    return _parsed(statement, *_blacked(statement, depth, module))


def _blacked(statement: cst.SimpleStatementLine, depth: int,
             module: cst.Module) -> tuple[cst.SimpleStatementLine, str, str | None]:
    """The statement without the comment lines above it, its code, and
    black's text of that code (None where black refuses it). A lone string (a
    docstring) is left as written: black, given it alone, takes it for a module
    docstring and strips the indentation of its lines."""
    body = statement.with_changes(leading_lines=())
    code = code_for_node(body, module)
    if len(body.body) == 1 and isinstance(body.body[0], cst.Expr) and isinstance(
            body.body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
        return body, code, None
    return body, code, _black(code, _line_length(module, depth))


def _parsed(statement: cst.SimpleStatementLine, body: cst.SimpleStatementLine, code: str,
            formatted: str | None) -> cst.SimpleStatementLine:
    """black's text of ``body`` (``code``) as a statement, or ``statement`` where it cannot stand for it."""
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


def format_compound(statement: cst.BaseCompoundStatement, module: cst.Module,
                    depth: int = 0) -> cst.BaseCompoundStatement:
    """A statement the migration wrote, in black's style (``depth``: the
    blocks it will sit in)."""
    code = code_for_node(statement.with_changes(leading_lines=()), module)
    formatted = _formatted_statement(code, _line_length(module, depth))
    return statement if formatted is None else formatted.with_changes(leading_lines=statement.leading_lines)


@lru_cache(maxsize=1024)
def _formatted_statement(code: str, line_length: int) -> cst.BaseCompoundStatement | None:
    """Parsed once per process: the same adapter class is written into many
    files of a batch (nodes are immutable, so sharing them is safe)."""
    formatted = _black(code, line_length)
    return None if formatted is None else rewrite(cst.parse_statement(formatted), _UnindentedBlankLines())


class _UnindentedBlankLines(cst.CSTTransformer):
    """Blank lines parsed at the top level count as indented: written into a
    class they would get trailing whitespace."""

    def leave_EmptyLine(self, original_node: cst.EmptyLine, updated_node: cst.EmptyLine) -> cst.EmptyLine:
        return updated_node.with_changes(indent=False) if updated_node.comment is None else updated_node


# Expressions that bind looser than ``.attr``, ``[...]`` and ``(...)``: as the
# object of one of these they need parentheses, which libcst does not add when
# a rule composes nodes (``torch.masked_scatter(0, m, s)`` -> ``(0).masked_scatter``).
_LOOSE = (cst.BinaryOperation, cst.BooleanOperation, cst.UnaryOperation, cst.Comparison, cst.IfExp, cst.Lambda,
          cst.NamedExpr, cst.Await, cst.Yield, cst.Integer, cst.Float, cst.Imaginary, cst.ConcatenatedString)


# the field of each node type that holds the object its operation applies to
_OWNER_FIELDS = {cst.Attribute: "value", cst.Subscript: "value", cst.Call: "func"}


def _loose_owner_field(node: cst.CSTNode) -> str | None:
    """The owner field of ``node`` when it holds a loose expression without parentheses."""
    field = _OWNER_FIELDS.get(type(node))
    owner = getattr(node, field) if field is not None else None
    return field if isinstance(owner, _LOOSE) and not owner.lpar else None


class _ParenthesizeOwners(cst.CSTTransformer):
    def on_leave(self, original_node, updated_node):
        field = _loose_owner_field(updated_node)
        if field is None:
            return updated_node
        owner = getattr(updated_node, field).with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return updated_node.with_changes(**{field: owner})


class _LooseOwners(cst.CSTVisitor):
    """Only the node types with an owner field have a handler: the walk passes the others by."""

    found = False

    def _check(self, node) -> bool:
        self.found = self.found or _loose_owner_field(node) is not None
        return not self.found

    visit_Attribute = visit_Subscript = visit_Call = _check


def parenthesize_owners(statement: cst.CSTNode) -> cst.CSTNode:
    """The statement with parentheses around every loose expression a rule
    made the object of an attribute, subscript or call (rebuilt only then:
    the rewriter tracks its nodes by identity)."""
    finder = _LooseOwners()
    walk(statement, finder, prune=LAYOUT_TYPES)  # layout holds no attribute, subscript or call
    return statement.visit(_ParenthesizeOwners()) if finder.found else statement


class _SameQuoteStrings(cst.CSTVisitor):
    """The strings in the f-string's own quote, and the nodes on the way to them."""

    def __init__(self, quote: str, other: str):
        super().__init__()
        self.quote, self.other = quote, other
        self.path: list[int] = []
        self.found: set[int] = set()  # the strings and their ancestors

    def on_visit(self, node) -> bool:
        if isinstance(node, cst.SimpleString) and node.quote == self.quote and self.other not in _body(node):
            self.found.update([*self.path, id(node)])
        self.path.append(id(node))
        return not isinstance(node, cst.FormattedString)  # a nested f-string has quotes of its own

    def on_leave(self, original_node) -> None:
        self.path.pop()


class _Requote(cst.CSTTransformer):
    """Rebuilds only the strings found and their ancestors: the rewriter tracks
    the other nodes (torch references left in place) by identity."""

    def __init__(self, found: set[int], other: str):
        super().__init__()
        self.found, self.other = found, other

    def on_visit(self, node) -> bool:
        return id(node) in self.found

    def on_leave(self, original_node, updated_node):
        if isinstance(original_node, cst.SimpleString) and id(original_node) in self.found:
            return updated_node.with_changes(value=f"{updated_node.prefix}{self.other}{_body(updated_node)}{self.other}")
        return updated_node


def _body(string: cst.SimpleString) -> str:
    return string.value[len(string.prefix) + len(string.quote):-len(string.quote)]


def requote_in_fstring(fstring: cst.FormattedString) -> cst.FormattedString:
    """The f-string with the strings a rule wrote inside its braces in the other
    quote: before Python 3.12 its own quote ends the f-string there
    (``f"{get_context("device_target")}"`` does not parse on 3.11)."""
    if len(fstring.end) != 1:
        return fstring  # triple-quoted: a lone quote inside is fine
    other = "'" if fstring.end == '"' else '"'
    finder = _SameQuoteStrings(fstring.end, other)
    for part in fstring.parts:
        if isinstance(part, cst.FormattedStringExpression):
            part.expression.visit(finder)
    if not finder.found:
        return fstring
    requote = _Requote(finder.found, other)
    parts = [part.with_changes(expression=part.expression.visit(requote))
             if isinstance(part, cst.FormattedStringExpression) and id(part.expression) in finder.found else part
             for part in fstring.parts]
    return fstring.with_changes(parts=parts)


class Rendered(NamedTuple):
    code: str
    format_seconds: float  # the part of the time black took
    # id(statement) -> the lines its code takes, for each statement of ``passed`` written
    passed_lines: dict[int, int]


def render(module: cst.Module, to_format: NodeSet, passed: NodeSet | None = None) -> Rendered:
    """The code of ``module`` with each statement in ``to_format`` as black
    writes it; ``passed``: statements the rewrite left as they were written,
    whose lines are counted for the diagnostics' positions."""
    state = _FormattingState(module, to_format, passed or NodeSet())
    module._codegen(state)
    return Rendered("".join(state.tokens), state.seconds, state.passed_lines)


class _FormattingState(QuietCodegenState):
    """Generates the module's code and replaces the tokens of each changed
    statement with black's text as it goes: no pass over the tree to swap
    statements first, and black's text used as it is wherever parsing it back
    would give the same code (parsing it cost as much as black's own work)."""

    def __init__(self, module: cst.Module, to_format: NodeSet, passed: NodeSet):
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.module = module
        self.to_format = to_format
        self.passed = passed
        self.start = 0  # where the code of the statement being generated begins (simple statements do not nest)
        self.passed_starts: dict[int, int] = {}
        self.passed_lines: dict[int, int] = {}
        self.seconds = 0.0

    def before_codegen(self, node: cst.CSTNode) -> None:
        if IS_STATEMENT[type(node)]:
            if type(node) is cst.SimpleStatementLine and node in self.to_format:
                self.start = len(self.tokens)
            elif node in self.passed:
                self.passed_starts[id(node)] = len(self.tokens)

    def after_codegen(self, node: cst.CSTNode) -> None:
        if IS_STATEMENT[type(node)]:
            if type(node) is cst.SimpleStatementLine and node in self.to_format:
                start = time.perf_counter()
                self._format(node, self.start)
                self.seconds += time.perf_counter() - start
            elif node in self.passed:
                self.passed_lines[id(node)] = count_lines("".join(self.tokens[self.passed_starts.pop(id(node)):]))

    def _format(self, statement: cst.SimpleStatementLine, start: int) -> None:
        body, code, formatted = _blacked(statement, len(self.indent_tokens), self.module)
        if formatted is None or formatted == code:
            return
        lines = self._plain_lines(statement, code, formatted)
        if lines is None:
            result = _parsed(statement, body, code, formatted)
            if result is not statement:
                del self.tokens[start:]
                result._codegen(self)
            return
        del self.tokens[start:]
        for line in statement.leading_lines:
            line._codegen(self)
        self.add_indent_tokens()
        self.tokens.append((self.default_newline + "".join(self.indent_tokens)).join(lines))
        self.tokens.append(self.default_newline)  # its own token: the module drops it when the file has no final newline

    def _plain_lines(self, statement: cst.SimpleStatementLine, code: str, formatted: str) -> list[str] | None:
        """black's lines when libcst, parsing them back, would indent every
        line after the first by the block's indentation and change nothing
        else; None where parsing must decide: a comment in the statement
        (black may merge two), several statements on the line (black splits
        them), a line that continues a string or a backslash, other newlines
        than the module's."""
        newline = self.default_newline
        if "#" in code or len(statement.body) != 1 or not formatted.endswith(newline):
            return None
        text = formatted[: -len(newline)]
        if '"""' in text or "'''" in text:
            return None
        lines = text.split(newline)
        if any(line.endswith("\\") or "\r" in line or "\n" in line for line in lines):
            return None
        return lines


class KeepsFormatting(Transformer):
    """A transformer makes every node it visits anew: a statement the rewrite queued for
    black (``to_format``, by identity) stays queued as the node that replaces it. (Its
    handlers are found once per node type; ``rewrite`` runs it without rebuilding what
    it leaves as it was.)"""

    def __init__(self, to_format):
        super().__init__()
        self.to_format = to_format

    def on_leave(self, original_node, updated_node):
        result = super().on_leave(original_node, updated_node)
        if result is not original_node and isinstance(result, cst.CSTNode) and original_node in self.to_format:
            self.to_format.add(result)
        return result
