"""Per-file state shared by the rewriter, the rule engine and rule hooks:
diagnostics, queued imports and how MindSpore names are spelled here."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import lru_cache

import libcst as cst

from transpiler.convert.diagnostics import Diagnostic, Outcome, Severity
from transpiler.convert.names import Analysis
from transpiler.convert.node_sets import NodeSet
from transpiler.convert.positions import start_positions

# How a MindSpore module is spelled in output, and the import that provides it.
# Ordered longest prefix first.
SPELLINGS: tuple[tuple[str, str, str | None], ...] = (
    # (qualified module, local name, "from" module or None for a plain import)
    ("mindspore.nn", "nn", "mindspore"),
    ("mindspore.ops", "ops", "mindspore"),
    ("mindspore", "mindspore", None),
    ("numpy", "np", None),
    ("math", "math", None),
    ("typing", "typing", None),
)


@lru_cache(maxsize=4096)
def parse_expr(text: str) -> cst.BaseExpression:
    """Parse a small expression (rule defaults, generated snippets). Cached:
    libcst nodes are immutable, so sharing them is safe."""
    return cst.parse_expression(text)


@lru_cache(maxsize=1024)
def parse_stmt(text: str) -> cst.BaseStatement:
    """Parse a generated statement (adapter parts, helper definitions, imports):
    each is written into many files of a batch. Cached as parse_expr is."""
    return cst.parse_statement(text)


@dataclass
class FileContext:
    path: str
    analysis: Analysis
    # node -> (line, col); None: positions are filled in after the rewrite by
    # resolve_positions, in one pass over the original tree (see positions.py)
    position_of: "callable | None" = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    imports_needed: set[tuple[str, str]] = field(default_factory=set)  # (qualified module, local)
    consumed: dict[str, int] = field(default_factory=dict)  # alias -> references rewritten away
    generated_refs: list[tuple[cst.CSTNode, str, str]] = field(default_factory=list)
    # variables known to hold a device / an optimizer / a Cell (light type info)
    known_kinds: dict[str, str] = field(default_factory=dict)
    # per-file analyses built on demand by structural transforms (e.g. provenance)
    facts: dict[str, object] = field(default_factory=dict)
    # what the command line asks beyond the rules: ``convert --jit`` (training steps'
    # gradient functions compiled) and ``ms-migrate convert``'s runtime settings
    # (launch_blocking() where a training step was rewritten; see runtime_settings.py)
    jit_steps: bool = False
    # the forward functions of training steps ``convert --jit`` compiled (grad_fn =
    # mindspore.jit(value_and_grad(forward_fn, ...))): graph mode compiles them as it compiles
    # construct, so the graph-subset rewrites act in them too (structural/graph_subset.py)
    jit_functions: set[str] = field(default_factory=set)
    # inside a Cell's forward (construct) or a function defined in it, as the rewrite walks down:
    # MindSpore differentiates construct as a whole (no ops.assign on locals; no requires_grad flags)
    forward_depth: int = 0
    runtime_settings: bool = False
    # the adapter members (torch's attribute names, reset_parameters) some file of the project
    # names (SiblingFacts.attributes); None: the project is not known
    project_attributes: frozenset[str] | None = None
    # names bound to a dataset another file builds as a mindspore.dataset pipeline (SiblingFacts.datasets)
    project_datasets: frozenset[str] = frozenset()
    # this file's functions and methods (``f``, ``Class.method``) another file's compiled code
    # calls (SiblingFacts.compiled): graph mode compiles them too (structural/graph_subset.py)
    project_compiled: frozenset[str] = frozenset()
    # classes this file reaches that only PyNative runs (SiblingFacts.pynative_only): convert --jit
    # leaves the steps uncompiled
    project_pynative_only: frozenset[str] = frozenset()
    # names bound to plain classes of other files (SiblingFacts.objects): graph mode runs their
    # objects as Python (structural/python_objects.py)
    project_objects: frozenset[str] = frozenset()
    # ids of statements the rewrite changed: black formats exactly these
    to_format: NodeSet = field(default_factory=NodeSet)
    # statements the rewrite passed by (nothing to convert in them): written as they were
    passed: NodeSet = field(default_factory=NodeSet)
    # torch Import/ImportFrom nodes that must stay: marked statements still need them
    kept_imports: NodeSet = field(default_factory=NodeSet)
    # module-level helpers rules asked for (name -> statement), written after the imports
    definitions: dict[str, cst.BaseStatement] = field(default_factory=dict)
    # (an expression a rule made, a comment): the comment goes above the first statement of the
    # file that holds such an expression, once per text (transpiler/convert/explanations.py)
    explanations: list[tuple[cst.CSTNode, str]] = field(default_factory=list)
    # the original calls whose rules are running, innermost last (see converting_call)
    converting: list[cst.CSTNode] = field(default_factory=list, repr=False)
    # (index in diagnostics, node, the call being converted) for diagnostics whose position is pending
    _unplaced: list[tuple[int, cst.CSTNode, cst.CSTNode | None]] = field(default_factory=list, repr=False)

    # -- diagnostics --------------------------------------------------------
    def report(self, node, rule: str, severity: Severity, message: str, outcome=Outcome.NONE, changes=()):
        if self.position_of is not None:
            line, col = self.position_of(node)
        else:
            line = col = 0
            self._unplaced.append((len(self.diagnostics), node, self.converting[-1] if self.converting else None))
        self.diagnostics.append(Diagnostic(self.path, line, col, rule, severity, message, outcome,
                                           changes=tuple(changes)))

    @contextmanager
    def converting_call(self, call: cst.CSTNode):
        """While a rule converts ``call``: a diagnostic on a node the rule made
        (an argument it rewrote) takes the position of the call."""
        self.converting.append(call)
        try:
            yield
        finally:
            self.converting.pop()

    def resolve_positions(self, original: cst.Module, passed_lines: dict[int, int] | None = None) -> None:
        """Give deferred diagnostics the line and column (1-based) of their node
        in the original tree, or else of the call whose rule made the node;
        other nodes the rewrite created stay at 0:0. ``passed_lines``: the lines
        of each statement the rewrite passed by (see positions.py)."""
        if not self._unplaced:
            return
        found = start_positions(original, self._unplaced_nodes(self._unplaced), passed_lines)
        unfound = [(index, node, call) for index, node, call in self._unplaced
                   if id(node) not in found and (call is None or id(call) not in found)]
        if unfound and passed_lines:  # a node inside a statement passed by, or one the rewrite made
            found.update(start_positions(original, self._unplaced_nodes(unfound)))
        for index, node, call in self._unplaced:
            position = found.get(id(node)) or found.get(id(call))
            if position is not None:
                self.diagnostics[index] = replace(self.diagnostics[index], line=position[0], col=position[1] + 1)
        self._unplaced = []

    @staticmethod
    def _unplaced_nodes(unplaced) -> list[cst.CSTNode]:
        return [n for _, node, call in unplaced for n in (node, call) if n is not None]

    def warn(self, node, rule: str, message: str):
        """Converted, but the user should look (not an API use of its own)."""
        self.report(node, rule, Severity.WARNING, message)

    def converted(self, node, rule: str, message: str, severity=Severity.INFO, changes=()):
        """``message``: what the code became, in the user's words (``transpiler.convert.change_text``);
        ``changes``: (torch parameter or "the call", its change) for a converted call."""
        self.report(node, rule, severity, message, Outcome.CONVERTED, changes)

    # -- module-level helpers ---------------------------------------------------
    def define(self, name: str, statement: cst.BaseStatement) -> None:
        """Write ``statement`` (a class or function called ``name``) once at the
        top of the converted module, for code MindSpore has no API for."""
        self.definitions.setdefault(name, statement)

    # -- references ---------------------------------------------------------
    def consume(self, original_node: cst.CSTNode) -> None:
        """The rewrite replaced this resolved torch reference: its import alias
        has one use fewer."""
        binding = self.analysis.reference_binding.get(id(original_node))
        if binding is not None:
            self.consumed[binding.local] = self.consumed.get(binding.local, 0) + 1

    def _spelling_usable(self, local: str, module: str) -> bool:
        if local in self.analysis.bound_names:
            return False  # a local variable somewhere uses the name
        binding = self.analysis.imports.get(local)
        if binding is not None:
            return binding.qualified == module or binding.qualified.split(".", 1)[0] == "torch"
        return True

    def ref(self, qualified: str) -> cst.BaseExpression:
        """An expression naming a MindSpore (or numpy) object, with its import queued."""
        if not qualified[:1].isidentifier():
            return _fresh(parse_expr(qualified))  # a literal ('"2.13.0"'), which imports nothing
        for module, local, from_module in SPELLINGS:
            if qualified != module and not qualified.startswith(module + "."):
                continue
            if not self._spelling_usable(local, module):
                continue
            rest = qualified[len(module) + 1 :] if qualified != module else ""
            self.imports_needed.add((module, local))
            node = parse_expr(f"{local}.{rest}" if rest else local)
            # Record for a possible respelling if a kept torch import claims `local`.
            node = _fresh(node)
            self.generated_refs.append((node, local, qualified))
            return node
        if qualified.split(".", 1)[0] == "mindspore":
            self.imports_needed.add(("mindspore", "mindspore"))
        elif "." in qualified:  # a project's own MindSpore code (a user rule's target): import its module
            module = qualified.rsplit(".", 1)[0]
            self.imports_needed.add((module, module))
        return _fresh(parse_expr(qualified))


def _fresh(node: cst.BaseExpression) -> cst.BaseExpression:
    # A distinct object per use, so a respelling pass can find it by identity.
    return node.deep_clone()
