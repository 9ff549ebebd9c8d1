"""What the language server knows about one document, as plain data.

``check_document(text, path)`` is a pure function of the text (no LSP types, no
I/O besides the project's configuration and rule files): it converts the text
with the converter's own pipeline (``convert_source``), runs ``analyze``'s
function-compliance checkers on the same parse, and gives every decision a
range in the text. The converter reports the start of a node (line from 1,
column from 1, in code points); the end comes from Python's own parser
(``ast``), which holds every node's end: the call a marker or a rule is about
(``torch.zeros(2).view(1, 2)``: the ``view`` call for ``torch.Tensor.view``,
the inner call for ``torch.zeros``), an expression, or a statement's first line.

Positions here are 0-based lines and code-point columns; the server turns them
into the client's units (UTF-16 unless negotiated otherwise) with ``to_client``.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import os
import re
import time
import warnings
from collections import defaultdict
from dataclasses import dataclass, field

from transpiler.convert.diagnostics import Diagnostic, Outcome, Severity

_NEWLINE = re.compile(r"\r\n?|\n")  # as the converter and Python's tokenizer count lines
_NAME_CHAIN = re.compile(r"[^\W\d]\w*(?:\s*\.\s*[^\W\d]\w*)*")

# what an item is, and how an editor shows it
MARKER, UNKNOWN, WARNING, ERROR, HAZARD, CONVERTED = "marker", "unknown", "warning", "error", "hazard", "converted"
LEVEL = {ERROR: "error", MARKER: "warning", UNKNOWN: "warning", WARNING: "information", HAZARD: "information",
         CONVERTED: "hint"}

Position = tuple[int, int]  # (line from 0, column in code points from 0)


@dataclass(frozen=True)
class Span:
    start: Position
    end: Position

    def contains(self, position: Position) -> bool:
        return self.start <= position <= self.end

    def size(self) -> tuple[int, int]:
        return (self.end[0] - self.start[0], self.end[1] - self.start[1])


@dataclass(frozen=True)
class Item:
    """One thing the editor shows: a diagnostic, or (``converted``) a converted
    use that only hover shows."""

    kind: str  # MARKER, UNKNOWN, WARNING, ERROR, HAZARD, CONVERTED
    code: str  # the torch API or transform (conversion), the finding kind (analyze)
    message: str
    span: Span
    hover_span: Span  # where hover answers for it (a call's callee, a method's name)
    changes: tuple[tuple[str, str], ...] = ()  # converted calls: (torch parameter, what happened to it)
    source: str = "ms-migrate"

    @property
    def level(self) -> str:
        return LEVEL[self.kind]


@dataclass
class DocumentReport:
    path: str
    text: str
    status: str  # converted / unchanged / failed (the converter's FileResult.status)
    output: str | None  # the converted text (None: the file cannot be converted)
    items: list[Item] = field(default_factory=list)
    seconds: float = 0.0  # how long checking took
    rules: object = field(default=None, repr=False, compare=False)  # the RuleSet it was checked with
    analysed: bool = True  # whether analyze's hazards are among the items (see with_hazards)
    locator: "Locator | None" = field(default=None, repr=False, compare=False)
    rules_key: tuple = ()  # which rule set (its files and digest): the hover catalog to read
    cpu_seconds: float = 0.0  # of the process that checked it

    @property
    def diagnostics(self) -> list[Item]:
        return [item for item in self.items if item.kind != CONVERTED]

    @property
    def converts(self) -> bool:
        """Whether converting would change the file."""
        return self.output is not None and self.output != self.text

    def at(self, position: Position) -> list[Item]:
        """Items whose hover span holds ``position``, innermost first."""
        found = [item for item in self.items if item.hover_span.contains(position)]
        return sorted(found, key=lambda item: (item.hover_span.size(), item.kind == CONVERTED))


def rules_for(path: str):
    """The rules that apply to ``path``: ms-migrate's, and the project's rule
    files from ``[tool.ms-migrate] rules`` in the closest pyproject.toml.
    Returns (rules, problem): a configuration or rule file that cannot be used
    is a problem to show; the file is then checked with ms-migrate's rules."""
    from rewrite_rules.registry import load_rules
    from transpiler.config import ConfigError, config_for

    if not path or not os.path.isabs(path):
        return load_rules(), None
    try:
        files = config_for(path).rules or ()
        return load_rules(tuple(files)), None
    except ConfigError as exc:
        return load_rules(), f"configuration not used: {exc}"
    except Exception as exc:  # noqa: BLE001 - a broken project rule file (RuleLoadError, its import errors)
        return load_rules(), f"project rules not used: {' '.join(str(exc).split())}"


def check_document(text: str, path: str, rules=None, hazards: bool = True) -> DocumentReport:
    """Everything the editor shows for ``text`` (``hazards=False``: the
    conversion's part only; ``with_hazards`` adds analyze's). Never raises."""
    start = time.perf_counter()
    problem = None
    if rules is None:
        rules, problem = rules_for(path)
    from transpiler.convert.pipeline import convert_source

    result = convert_source(text, path, rules)
    report = DocumentReport(path, text, result.status, result.output, rules=rules)
    report.locator = Locator(text)
    items = [_item(d, report.locator) for d in result.diagnostics]
    if problem is not None:
        items.append(Item(ERROR, "configuration", problem, report.locator.line_span(0), report.locator.line_span(0)))
    report.items = _sorted(items)
    report.analysed = not (result.status != "failed" and result.diagnostics)  # nothing torch-like: no hazards
    report.seconds = time.perf_counter() - start
    return with_hazards(report) if hazards else report


def with_hazards(report: DocumentReport) -> DocumentReport:
    """``report`` with the hazards ``ms-migrate analyze`` finds in its text."""
    if report.analysed:
        return report
    start = time.perf_counter()
    hazards = hazard_items(report.text, report.path, report.rules, report.locator)
    return dataclasses.replace(report, items=_sorted([*report.items, *hazards]), analysed=True,
                               seconds=report.seconds + time.perf_counter() - start)


def hazard_items(text: str, path: str, rules, locator: "Locator | None" = None) -> list[Item]:
    """The hazards ``ms-migrate analyze`` finds in ``text``, at their ranges."""
    locator = locator or Locator(text)
    return [_hazard(f, locator) for f in _findings(text, path, rules)]


def carried_hazards(previous: DocumentReport | None, text: str) -> list[Item]:
    """The hazards of ``previous`` (an earlier text of the document) on the
    lines an edit left as they were, moved to where those lines are now: shown
    until the hazards of ``text`` are found, so that they do not blink."""
    if previous is None or not previous.analysed:
        return []
    old, new = split_lines(previous.text), split_lines(text)
    moved: dict[int, int] = {}
    for tag, i1, i2, j1, _ in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            moved.update((i, j1 + i - i1) for i in range(i1, i2))
    carried = []
    for item in previous.items:
        if item.kind != HAZARD or item.span.start[0] not in moved or item.span.end[0] not in moved:
            continue
        shift = moved[item.span.start[0]] - item.span.start[0]
        if moved[item.span.end[0]] - item.span.end[0] != shift:
            continue
        carried.append(dataclasses.replace(item, span=_shifted(item.span, shift), hover_span=_shifted(item.hover_span, shift)))
    return carried


def _shifted(span: Span, lines: int) -> Span:
    return Span((span.start[0] + lines, span.start[1]), (span.end[0] + lines, span.end[1]))


def _sorted(items: list[Item]) -> list[Item]:
    return sorted(items, key=lambda item: (item.span.start, item.kind))


def _findings(text: str, path: str, rules) -> list:
    """What ``ms-migrate analyze`` finds in the file (function compliance), as it finds it."""
    import libcst as cst

    from transpiler.analyze.facts import index_file
    from transpiler.analyze.findings import run_checkers
    from transpiler.convert.names import analyse
    from transpiler.convert.pipeline import _method_names
    from transpiler.convert.structural import is_module_base

    try:
        module = cst.parse_module(text)
        analysis = analyse(module, _method_names(rules), is_module_base, rule_names=rules.rule_names)
        return run_checkers(index_file(path, module, analysis))
    except Exception:  # noqa: BLE001 - analysis adds to the conversion's diagnostics, never replaces them
        return []


def _item(d: Diagnostic, locator: "Locator") -> Item:
    if d.severity is Severity.ERROR:
        kind = ERROR
    elif d.outcome is Outcome.UNKNOWN:
        kind = UNKNOWN
    elif d.severity is Severity.MARKER or d.outcome is Outcome.MARKED:
        kind = MARKER
    elif d.severity is Severity.WARNING:
        kind = WARNING
    else:
        kind = CONVERTED
    message = d.message
    if kind == MARKER:
        message = f"will be marked: {message}"
    if kind == ERROR and d.rule == "syntax":
        span = locator.character_span(d.line - 1, d.col - 1)
        return Item(kind, d.rule, message, span, span)
    span, hover = locator.spans(d.line - 1, d.col - 1, d.rule)
    return Item(kind, d.rule, message, span, hover, d.changes)


def _hazard(finding, locator: "Locator") -> Item:
    span, hover = locator.spans(finding.line - 1, finding.col - 1, None)
    message = f"{finding.family}: {finding.why}\nFix: {finding.fix}"
    return Item(HAZARD, finding.kind, message, span, hover, source="ms-migrate analyze")


class Locator:
    """Ranges of the nodes that start at a position, from Python's own parser."""

    def __init__(self, text: str):
        self.lines = _NEWLINE.split(text)
        self.starts: dict[Position, list[ast.AST]] = defaultdict(list)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(text)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return
        for node in ast.walk(tree):  # breadth first: the outer of two nodes starting together comes first
            if isinstance(node, (ast.expr, ast.stmt)):
                self.starts[self._position(node.lineno, node.col_offset)].append(node)

    def _position(self, lineno: int, byte_col: int) -> Position:
        line = lineno - 1
        text = self.lines[line] if 0 <= line < len(self.lines) else ""
        if text.isascii():
            return line, byte_col
        return line, len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))

    def _end(self, node: ast.AST) -> Position:
        return self._position(node.end_lineno, node.end_col_offset)

    def line_span(self, line: int) -> Span:
        line = min(max(line, 0), len(self.lines) - 1)
        text = self.lines[line]
        indent = len(text) - len(text.lstrip())
        return Span((line, indent), (line, len(text.rstrip())))

    def character_span(self, line: int, col: int) -> Span:
        if not 0 <= line < len(self.lines):
            return self.line_span(len(self.lines) - 1)
        col = min(max(col, 0), len(self.lines[line]))
        return Span((line, col), (line, min(col + 1, len(self.lines[line]))))

    def spans(self, line: int, col: int, rule: str | None) -> tuple[Span, Span]:
        """(the range to underline, the range hover answers on) for a node
        reported at ``line``:``col`` (0-based); ``rule``: the API a converter
        diagnostic names (None: an analyze finding, about the outermost node there)."""
        if line < 0 or line >= len(self.lines):  # a node the rewrite made: the file's first line
            span = self.line_span(0)
            return span, span
        candidates = self.starts.get((line, col), [])
        expressions = [n for n in candidates if isinstance(n, ast.expr)]
        if rule is not None and expressions:
            name = rule.rstrip("()").rsplit(".", 1)[-1]
            named = [n for n in expressions if _name_of(n) == name]
            calls = [n for n in named if isinstance(n, ast.Call)] or \
                ([] if named else [n for n in expressions if isinstance(n, ast.Call)])
            if calls:
                call = calls[-1]  # innermost
                return Span((line, col), self._end(call)), self._callee_span(call, rule)
            if named:  # an attribute or a name (p.grad, a base class)
                node = named[-1]
                return Span((line, col), self._end(node)), self._callee_span(node, rule)
        if expressions:
            span = Span((line, col), self._end(expressions[0]))
            return span, span
        statements = [n for n in candidates if isinstance(n, ast.stmt)]
        if statements:
            end = self._end(statements[0])
            span = Span((line, col), end) if end[0] == line else Span((line, col), (line, len(self.lines[line].rstrip())))
            return span, span
        match = _NAME_CHAIN.match(self.lines[line], col)
        if match:  # the parser disagrees with the converter (or failed): the dotted name there
            span = Span((line, col), (line, match.end()))
            return span, span
        span = Span((line, col), (line, max(col, len(self.lines[line].rstrip()))))
        return span, span

    def _callee_span(self, node: ast.expr, rule: str) -> Span:
        """Where hover answers: a call's callee, an attribute or name as a whole;
        for a method or property, only its name (``x.view``: ``view``)."""
        func = node.func if isinstance(node, ast.Call) else node
        start = self._position(func.lineno, func.col_offset)
        end = self._end(func)
        if isinstance(func, ast.Attribute) and _is_method(rule) and end[1] >= len(func.attr):
            return Span((end[0], end[1] - len(func.attr)), end)
        return Span(start, end)


def _name_of(node: ast.expr) -> str | None:
    """The name a node ends with: a call's callee's, an attribute's, a name's."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


_METHOD_PREFIXES = ("torch.Tensor.", "torch.nn.Module.", "torch.optim.Optimizer.")


def _is_method(rule: str) -> bool:
    """A method rule's API name (``torch.Tensor.view``, ``step()``), as the registry names them."""
    return rule.startswith(_METHOD_PREFIXES) or rule.endswith("()")


# -- client units ----------------------------------------------------------------------------------------------------
def split_lines(text: str) -> list[str]:
    return _NEWLINE.split(text)


def to_client(lines: list[str], position: Position, encoding: str = "utf-16") -> tuple[int, int]:
    """A code-point position as the client counts it: UTF-16 code units by
    default (LSP's), or UTF-8 bytes / code points when negotiated."""
    line, col = position
    if line >= len(lines):
        return len(lines) - 1, _units(lines[-1], encoding)
    return line, _units(lines[line][:col], encoding)


def from_client(lines: list[str], line: int, character: int, encoding: str = "utf-16") -> Position:
    """The code-point position of a client's (line, character)."""
    if line >= len(lines):
        return len(lines) - 1, len(lines[-1])
    text = lines[line]
    if encoding == "utf-32" or text.isascii():
        return line, min(character, len(text))
    units = 0
    for index, char in enumerate(text):
        if units >= character:
            return line, index
        units += _units(char, encoding)
    return line, len(text)


def _units(text: str, encoding: str) -> int:
    if encoding == "utf-32" or text.isascii():
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def end_of(lines: list[str]) -> Position:
    """The position after the last character."""
    return len(lines) - 1, len(lines[-1])


def beside_path(path: str) -> str:
    """Where "write the MindSpore version beside it" writes: foo.py -> foo_mindspore.py."""
    root, ext = os.path.splitext(path)
    return f"{root}_mindspore{ext or '.py'}"


def unified_diff(report: DocumentReport) -> str:
    from transpiler.batch.diffs import unified

    if report.output is None:
        return ""
    name = os.path.basename(report.path) or "untitled.py"
    return unified(report.text, report.output, f"a/{name}", f"b/{name}")
