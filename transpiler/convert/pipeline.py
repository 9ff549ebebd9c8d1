"""Per-file conversion: a pure function from source text to a FileResult.
It never raises: any failure becomes an error diagnostic on the result."""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field, replace

import libcst as cst

from rewrite_rules.registry import RuleSet, load_rules
from transpiler.convert.context import FileContext
from transpiler.convert.definitions import add_definitions
from transpiler.convert.diagnostics import Diagnostic, Severity
from transpiler.convert.formatting import line_length as formatted_at, render
from transpiler.convert.marked import number_stand_ins
from transpiler.convert.imports import fix_imports
from transpiler.convert.names import TORCH_ROOTS, analyse
from transpiler.convert.project import SiblingFacts, keep_to_tensor_functions
from transpiler.convert.rewriter import Rewriter
from transpiler.convert.structural import is_module_base
from transpiler.convert.structural.checkpoint_globs import follow_checkpoint_globs
from transpiler.convert.structural.graph_subset import to_graph_subset
from transpiler.convert.structural.runtime_settings import add_runtime_settings
from transpiler.convert.unbound_aliases import CONVENTIONAL, unbound_aliases
from transpiler.convert.walk import rewrite

STAGES = ("read", "parse", "analyse", "rewrite", "format", "render", "write", "report")


@dataclass
class FileResult:
    path: str
    status: str  # "converted", "unchanged", "failed", "copied"
    output: str | None = None  # converted text (None when failed)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return self.status == "converted"


def _method_names(rules: RuleSet) -> frozenset[str]:
    from rewrite_rules.tensor.methods_data import TORCH_ONLY_TENSOR_METHODS

    # .apply: autograd Function classes converted to Cells are called through it;
    # ._conv_forward: torch's convolution step, called by its subclasses (structural.cells)
    return frozenset(rules.methods) | TORCH_ONLY_TENSOR_METHODS | {"forward", "register_buffer", "apply", "_conv_forward"}


def mentions_torch(text: str, rules: RuleSet | None = None) -> bool:
    """Whether ``text`` may use torch or a name a (user) rule converts."""
    return any(root in text for root in TORCH_ROOTS) or (
        rules is not None and any(root in text for root in rules.rule_roots))


def convert_source(text: str, path: str = "<string>", rules: RuleSet | None = None,
                   siblings: SiblingFacts | None = None, line_length: int | None = None,
                   jit_steps: bool = False, runtime_settings: bool = False) -> FileResult:
    """``siblings``: what the project index knows about the classes this file
    imports from other files of its tree; ``line_length``: black's for the statements
    the conversion writes (the project's ``[tool.black] line-length``; default 88);
    ``jit_steps``: ``convert --jit``; ``runtime_settings``: write ms-migrate convert's runtime
    settings (transpiler/convert/structural/runtime_settings.py)."""
    timings: dict[str, float] = {}
    rules = rules or load_rules()
    if not mentions_torch(text, rules) and not siblings:
        return FileResult(path, "unchanged", text, [], timings)
    start = time.perf_counter()
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        line, col, message = _syntax_error(text, exc)
        diagnostic = Diagnostic(path, line, col, "syntax", Severity.ERROR, f"syntax error: {message}")
        return FileResult(path, "failed", None, [diagnostic], timings)
    except Exception as exc:  # libcst can raise on pathological input
        diagnostic = Diagnostic(path, 1, 1, "parse", Severity.ERROR, f"cannot parse: {exc}")
        return FileResult(path, "failed", None, [diagnostic], timings)
    timings["parse"] = time.perf_counter() - start
    try:
        with formatted_at(line_length):
            return _convert_module(module, text, path, rules, timings, siblings if siblings is not None else SiblingFacts(),
                                   jit_steps, runtime_settings)
    except RecursionError:
        diagnostic = Diagnostic(path, 1, 1, "internal", Severity.ERROR, "file nests too deeply to convert")
        return FileResult(path, "failed", None, [diagnostic], timings)
    except Exception as exc:  # a bug in a rule must not stop the batch
        where = traceback.extract_tb(exc.__traceback__)[-1]
        message = f"internal error {type(exc).__name__}: {exc} (at {where.filename}:{where.lineno}); please report"
        diagnostic = Diagnostic(path, 1, 1, "internal", Severity.ERROR, " ".join(message.split()))
        return FileResult(path, "failed", None, [diagnostic], timings)


def _syntax_error(text: str, exc: cst.ParserSyntaxError) -> tuple[int, int, str]:
    """Python's own parser points at the error more precisely than libcst's;
    use it when it agrees that the file is invalid."""
    import ast
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ast.parse(text)
    except SyntaxError as error:
        message = error.msg
        if "Missing parentheses in call to 'print'" in message:
            message += " (Python 2 code is not supported)"
        return error.lineno or 1, error.offset or 1, " ".join(message.split())
    except (ValueError, MemoryError, RecursionError):
        pass
    return exc.raw_line, exc.raw_column + 1, " ".join(str(exc.message).split())


def _convert_module(module: cst.Module, text: str, path: str, rules: RuleSet, timings, siblings,
                    jit_steps: bool = False, runtime_settings: bool = False) -> FileResult:
    start = time.perf_counter()
    # ``F.dropout`` in a torch file that never binds ``F``: torch.nn.functional (unbound_aliases.py)
    assumed = unbound_aliases(module, {local for local, _ in siblings.torch_names})
    if assumed:
        siblings = replace(siblings, torch_names=(*siblings.torch_names,
                                                  *((local, CONVENTIONAL[local]) for local in assumed)))
    # an autograd Function's apply read as a value (fn = Fn.apply) becomes an instance of its Cell
    analysis = analyse(module, _method_names(rules), is_module_base, rules.property_names | {"apply"}, siblings,
                       rules.rule_names)
    keep_to_tensor_functions(module, analysis, siblings)
    timings["analyse"] = time.perf_counter() - start
    if not analysis.interesting:
        return FileResult(path, "unchanged", text, [], timings)
    start = time.perf_counter()
    ctx = FileContext(path, analysis, jit_steps=jit_steps, runtime_settings=runtime_settings,
                      project_attributes=siblings.attributes, project_datasets=siblings.datasets,
                      project_compiled=siblings.compiled, project_pynative_only=siblings.pynative_only,
                      project_objects=siblings.objects)
    for local, use in assumed.items():
        ctx.warn(use, local, f"{local} is used but never imported in the torch source; read as "
                             f"{CONVENTIONAL[local]} ({local} = {CONVENTIONAL[local]} by convention)")
    rewriter = Rewriter(ctx, rules, module, siblings.functions)
    converted = rewrite(module, rewriter)
    rewriter.adapters.define(converted)
    converted = fix_imports(converted, ctx)
    # what graph mode cannot compile, in a form it can (before the helpers: it may drop a use of one)
    converted = to_graph_subset(converted, ctx)
    converted = follow_checkpoint_globs(converted, ctx)  # glob('*.pth') of saved checkpoints: MindSpore's .ckpt names
    converted = add_definitions(converted, ctx)
    converted = add_runtime_settings(converted, ctx)  # launch_blocking() where a training step was rewritten
    timings["rewrite"] = time.perf_counter() - start
    start = time.perf_counter()
    rendered = render(converted, ctx.to_format, ctx.passed)  # black runs on changed statements as they are written
    output, timings["format"] = number_stand_ins(rendered.code, ctx), rendered.format_seconds
    timings["render"] = time.perf_counter() - start - timings["format"]
    start = time.perf_counter()
    ctx.resolve_positions(module, rendered.passed_lines)
    timings["report"] = time.perf_counter() - start
    status = "converted" if output != text else "unchanged"
    return FileResult(path, status, output, ctx.diagnostics, timings)
