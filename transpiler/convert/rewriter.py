"""The one rewriting traversal of a file.

API rules are looked up by qualified name (from the metadata pass), method
rules by name and arity; the structural transforms (Module -> Cell, forward ->
construct, grad-mode contexts, buffers) live in ``transpiler.convert.structural`` and
are called from here. Every statement that changes is reformatted with black;
every statement that cannot be converted gets a marker comment above it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from rewrite_rules.registry import RuleSet
from rewrite_rules.spec import InPlace, Unconvertible, UnknownValue
from rewrite_rules.tensor.methods_data import BUILTIN_NAMED_TENSOR_METHODS, TORCH_ONLY_TENSOR_METHODS
from transpiler.convert import comments, structural
from transpiler.convert.formatting import parenthesize_owners, requote_in_fstring
from transpiler.convert.structural.provenance import CELL, LAYER, origin_of
from transpiler.convert.adapters import Adapters, written_namespaces
from transpiler.convert.change_text import describe, same_arguments, short
from transpiler.convert.context import FileContext
from transpiler.convert.diagnostics import MARKER_PREFIX, Outcome, Severity
from transpiler.convert.engine import code_of, convert_call, convert_method
from transpiler.convert.marked import LeftReference, MarkedStatements, present_nodes
from transpiler.convert.markers import add_markers
from transpiler.convert.structural.autograd_function import (apply_as_value, convert_function_class, function_base,
                                                             function_classes, stateless_functions)
from transpiler.convert.structural import (builtin_abs, complex_constants, mapped_calls, named_results, numpy_scalars,
                                          shift_operators, stacked_slices)
from transpiler.convert.structural.launcher_env import LauncherEnvironment
from transpiler.convert.structural.grad_mode import drop_unneeded_alias
from transpiler.convert.structural.graph_exports import GraphExports
from transpiler.convert.structural.cells import LAYER_METHOD_NAMES, layer_method_call, parent_layer_call
from transpiler.convert.structural.class_tables import indexed_tuples
from transpiler.convert.structural.feature_checks import answer as feature_answer
from transpiler.convert.structural.feature_checks import FeatureCheck, feature_check, membership_check
from transpiler.convert.names import catches_import_error, chain_parts
from transpiler.convert.statements import Placeholders
from transpiler.convert.explanations import with_explanations
from transpiler.convert.tensor_properties import PropertyReads, known_foreign, passes_image_constants
from transpiler.convert.walk import IS_STATEMENT, LAYOUT_TYPES, Transformer

_NOT_TENSOR = frozenset({"cell", "any", "optimizer"})
_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)  # take a method call without parentheses


@dataclass
class _PendingMark:
    """A marker for a torch reference, kept only if the reference is still in
    the statement when it is finished (a rule may drop the argument holding it)."""

    node: cst.CSTNode  # the reference as returned (identity in the output)
    original: cst.CSTNode
    api: str
    text: str


@dataclass
class _Frame:
    markers: list = field(default_factory=list)  # marker texts and _PendingMarks, in order
    changed: bool = False
    # torch references left as written (id of the node in the output -> reference)
    left: dict[int, LeftReference] = field(default_factory=dict)


class Rewriter(Transformer):
    # Diagnostics get their positions after the traversal (FileContext.resolve_positions):
    # no metadata wrapper, no position table for every node.

    prune = LAYOUT_TYPES  # whitespace, comments, punctuation: nothing to rewrite in them

    def __init__(self, ctx: FileContext, rules: RuleSet, module: cst.Module, sibling_functions=frozenset()):
        super().__init__()
        self.ctx = ctx
        self.rules = rules
        self.module = module
        self._written_namespaces: frozenset[str] | None = None  # found when first needed
        self._indexed_tuples: set[int] | None = None  # tuples of torch classes that are indexed
        self.analysis = ctx.analysis
        self.frames: list[_Frame] = []
        self.depth = 0
        self.classes: list[str | None] = []  # enclosing classes; the name if it is a Cell
        self.autograd_classes: list[bool] = []  # enclosing classes: whether each is a torch.autograd.Function
        self.type_context: set[int] = set()  # isinstance()/annotation references
        self.annotation_refs: set[int] = set()  # annotation references (no effect at run time)
        self.base_context: set[int] = set()  # class bases
        self.call_funcs: set[int] = set()  # callee expressions (handled in leave_Call)
        self.handled: set[int] = set()  # nodes a structural transform consumes whole
        self.statement_calls: set[int] = set()  # calls that are a whole expression statement
        self.sole_argument_of: dict[int, str] = {}  # id(call) -> f in f(call), for f a plain name
        self.in_place: dict[int, tuple[cst.BaseExpression, cst.BaseExpression, bool]] = {}
        self.placeholders = Placeholders(track=ctx.to_format)
        self.training = structural.TrainingLoops(self)
        self.checkpoints = structural.Checkpoints(self)  # dicts of states in torch.save / torch.load
        self.graph_exports = GraphExports(self)  # traced / exported models saved as MindIR, whole models saved
        self.surroundings = structural.Surroundings(self)  # backend flags, freezing, autocast variables
        self.attributes = structural.Attributes(self)  # attribute reads of layers, loaders, wrappers
        self.launcher_env = LauncherEnvironment(self)  # os.environ["LOCAL_RANK"] -> msrun's DEVICE_ID
        self.properties = PropertyReads(self)  # x.real, x.is_cuda ... on untyped receivers
        self.marked = MarkedStatements(ctx)
        self.elifs: set[int] = set()  # `elif` branches (If nodes in an If's orelse)
        self.function_depth = 0  # statements outside any function run when the module is imported
        self.return_depth = 0  # inside a return statement
        self.import_guards: list[cst.Try] = []  # enclosing `try: ... except ImportError:` blocks
        self.no_op_decorators: dict[int, str] = {}  # id(decorator expression) -> torch API
        self.feature_checks: dict[int, FeatureCheck] = {}  # by id(hasattr/getattr call)
        self.function_classes: dict[int, int] = {}  # id(autograd Function class) -> index of that base
        # autograd Function classes converted to Cells (here or in another file of the project)
        self.function_cells: set[str] = set(sibling_functions) | function_classes(module, ctx.analysis)
        self.stateless_functions = stateless_functions(module, ctx.analysis)  # fn = Fn.apply -> Fn() (see apply_as_value)
        self.adapters = Adapters(ctx, rules.attributes)  # torch signatures for layers used as values, bases, with **kwargs
        self._header_comments = {line.comment.value for line in module.header if line.comment is not None}

    # -- infrastructure -------------------------------------------------------
    @property
    def frame(self) -> _Frame:
        return self.frames[-1]

    def changed(self) -> None:
        if self.frames:
            self.frame.changed = True

    def mark(self, node: cst.CSTNode, api: str, reason: str) -> None:
        text = reason if reason.startswith(api) else f"{api}: {reason}"
        if self.frames and text not in self.frame.markers:
            self.frame.markers.append(text)
        self.ctx.report(node, api, Severity.MARKER, text, Outcome.MARKED)

    def in_cell_class(self) -> bool:
        return bool(self.classes) and self.classes[-1] is not None

    def on_visit(self, node: cst.CSTNode) -> bool:
        if IS_STATEMENT[type(node)]:
            if id(node) not in self.analysis.interesting:
                self.ctx.passed.add(node)
                return False
            self.frames.append(_Frame())
        elif type(node) is cst.IndentedBlock:
            self.depth += 1
            self.marked.record_block(node.body)
        return super().on_visit(node)

    def on_leave(self, original_node, updated_node):
        is_statement = IS_STATEMENT[type(original_node)]
        if is_statement and id(original_node) not in self.analysis.interesting:
            return self.training.leave(original_node, updated_node)  # skipped in on_visit: no leave_ handlers either
        result = super().on_leave(original_node, updated_node)
        if type(original_node) is cst.IndentedBlock:
            self.depth -= 1
            if isinstance(result, cst.IndentedBlock):
                result = result.with_changes(body=self.placeholders.compact(list(result.body)))
        elif is_statement and id(original_node) in self.analysis.interesting:
            result = self._finish_statement(original_node, result, self.frames.pop())
            result = self.checkpoints.leave(original_node, result)
            result = self.surroundings.leave(original_node, result)
            result = drop_unneeded_alias(self, original_node, result)  # autocast = torch.cuda.amp.autocast
        result = self.training.leave(original_node, result)
        if is_statement:
            result = comments.keep_in_statement(original_node, result)  # what a rewrite dropped goes above it
        return result

    def _settle_pending_marks(self, result, frame: _Frame) -> None:
        pending = [m for m in frame.markers if isinstance(m, _PendingMark)]
        if not pending:
            return
        present = present_nodes(result, [m.node for m in pending])
        markers = []
        for marker in frame.markers:
            if not isinstance(marker, _PendingMark):
                markers.append(marker)
            elif id(marker.node) in present:
                self.ctx.report(marker.original, marker.api, Severity.MARKER, marker.text, Outcome.MARKED)
                if marker.text not in markers:
                    markers.append(marker.text)
            else:
                self.ctx.consume(marker.original)
                self.ctx.converted(marker.original, marker.api, f"{marker.api}: removed with the argument that held it")
        frame.markers = markers

    def _finish_statement(self, original, result, frame: _Frame):
        self._settle_pending_marks(result, frame)
        if isinstance(result, cst.SimpleStatementLine) and isinstance(original, cst.SimpleStatementLine):
            if structural.is_noop_statement(original, result):
                self.ctx.converted(original, "statement",
                                   "removed a statement that does nothing in MindSpore (a device move, a TorchScript or fx marker)")
                return self.placeholders.make(original)  # with every comment, in order
        formatted = frame.changed and isinstance(result, cst.SimpleStatementLine)
        if formatted:
            result = with_explanations(parenthesize_owners(result), self.ctx)
        if frame.markers and id(original) in self.elifs and self.frames:
            # nothing can stand between `if` and `elif`: the whole if statement carries it
            parent = self.frames[-1]
            parent.markers.extend(m for m in frame.markers if m not in parent.markers)
            parent.left.update(frame.left)
        elif frame.markers:
            # the torch imports a marked statement still needs go just above it
            guard = self.import_guards[-1] if self.import_guards else None
            at_import = self.function_depth == 0 and guard is None
            result, standing = self.marked.localise(original, result, frame.left, guard=at_import, inside=guard)
            # comments above the first statement are parsed into the module header
            first = self.module.body[0] if self.module.body else None
            header = self._header_comments if first is not None and first in (original, guard) else frozenset()
            result = add_markers(result, frame.markers, header | standing)
        if formatted:  # marked or not, so that a second conversion formats nothing more
            for statement in _simple_statements(result):
                self.ctx.to_format.add(statement)  # black runs after the import edits
        return result

    def visit_Module(self, node: cst.Module) -> None:
        self.marked.record_block(node.body)
        self.training.plan(node)
        self.checkpoints.plan(node)
        self.graph_exports.plan(node)
        self.surroundings.plan(node)
        structural.record_dataset_columns(node, self.ctx)
        self.attributes.plan(node)
        self.launcher_env.plan(node)
        numpy_scalars.plan(self.ctx, node)  # np.log(k) * t, x[range(n)]
        shift_operators.plan(self.ctx, node)  # lengths >> 2
        complex_constants.plan(self.ctx, node)  # torch.exp(1j * theta)

    def leave_Module(self, original_node, updated_node):
        return updated_node.with_changes(body=self.placeholders.compact(list(updated_node.body)))

    # -- imports are handled by transpiler.convert.imports after the traversal --------
    def visit_Import(self, node) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if isinstance(node.names, cst.ImportStar) and node in self.analysis.star_imports:
            self.mark(node, "import *", "star import from torch: names cannot be resolved; import them explicitly")
        return False

    # -- contexts set on the way down ----------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        for decorator in node.decorators:
            self._drop_if_no_op(decorator)
        base = function_base(node, self.analysis)
        if base is not None:
            self.handled.add(id(base.value))
            self.function_classes[id(node)] = node.bases.index(base)
        is_cell = node.name.value in self.analysis.cell_classes
        self.classes.append(node.name.value if is_cell else None)
        self.autograd_classes.append(base is not None)
        structural.visit_dataset_class(self, node)
        for base in node.bases:
            self.base_context.add(id(base.value))

    def leave_ClassDef(self, original_node, updated_node):
        self.classes.pop()
        self.autograd_classes.pop()
        updated_node = structural.drop_no_op_decorators(self, original_node, updated_node)
        if id(original_node) in self.function_classes:
            updated_node = self._autograd_function(original_node, updated_node)
        if original_node.name.value in self.analysis.cell_classes:
            self.changed()
            updated_node = structural.run_assigned_children(self, original_node, updated_node)
        return structural.convert_dataset_class(self, original_node, updated_node)

    def visit_If(self, node: cst.If) -> None:
        if isinstance(node.orelse, cst.If):
            self.elifs.add(id(node.orelse))

    def _autograd_function(self, original, updated):
        index = self.function_classes.pop(id(original))
        try:
            result = convert_function_class(self.ctx, updated, updated.bases[index])
        except Unconvertible as exc:
            self.mark(original, "torch.autograd.Function", exc.reason)
            self.function_cells.discard(original.name.value)  # Fn.apply stays: the stand-in's apply names the marker
            return updated
        self.ctx.consume(original.bases[index].value)
        self.changed()
        self.function_cells.add(original.name.value)
        self.ctx.converted(original, "torch.autograd.Function", f"autograd Function {original.name.value} -> a Cell "
                           "whose bprop is its backward; .apply(...) calls an instance")
        return result

    def visit_Annotation(self, node: cst.Annotation) -> None:
        names = structural.reference_ids(node.annotation)
        self.type_context.update(names)
        self.annotation_refs.update(names)

    def visit_Tuple(self, node: cst.Tuple) -> None:
        # a tuple of torch classes and nothing else, e.g. minGPT's whitelist = (torch.nn.Linear,):
        # classes for isinstance(), which must also accept the layers converted directly
        # (one that is indexed is a table of layers to build: values, see structural/class_tables.py)
        if self._is_class_tuple(node) and id(node) not in self._class_tables():
            self.type_context.update(id(element.value) for element in node.elements)

    def _is_class_tuple(self, node: cst.Tuple) -> bool:
        values = [element.value for element in node.elements]
        return bool(values) and all(isinstance(v, (cst.Name, cst.Attribute))
                                    and _is_torch_class(self.analysis.qualified(v)) for v in values)

    def _class_tables(self) -> set[int]:
        if self._indexed_tuples is None:  # found when first needed: few files hold tuples of torch classes
            self._indexed_tuples = indexed_tuples(self.module, self._is_class_tuple)
        return self._indexed_tuples

    def visit_Call(self, node: cst.Call) -> None:
        self.call_funcs.add(id(node.func))
        if isinstance(node.func, cst.Name) and node.args and not node.args[0].star and (
                len(node.args) == 1 or (node.func.value == "next" and len(node.args) == 2)):  # next(it, default)
            self.sole_argument_of[id(node.args[0].value)] = node.func.value
        self.handled.update(structural.device_reads_used_as_strings(node))
        mapped_calls.note(self, node)  # map(torch.LongTensor, rows)
        check = feature_check(self, node)
        if check is not None:
            self.handled.add(id(check.module))
            self.feature_checks[id(node)] = check
        if isinstance(node.func, cst.Name) and node.func.value in ("isinstance", "issubclass") and len(node.args) >= 2:
            self.type_context.update(structural.reference_ids(node.args[1].value))

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            if structural.is_grad_context(item.item, self.analysis):
                self.handled.add(id(item.item))

    def visit_Try(self, node: cst.Try) -> None:
        if catches_import_error(node):
            self.import_guards.append(node)

    def leave_Try(self, original_node, updated_node):
        if self.import_guards and self.import_guards[-1] is original_node:
            self.import_guards.pop()
        return updated_node

    def visit_Return(self, node: cst.Return) -> None:
        self.return_depth += 1

    def leave_Return(self, original_node, updated_node):
        self.return_depth -= 1
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.function_depth += 1
        if self.ctx.forward_depth or (node.name.value == "forward" and (
                self.in_cell_class() or (self.autograd_classes and self.autograd_classes[-1]))):
            self.ctx.forward_depth += 1  # a Cell's (or autograd Function's) forward, and functions defined in it
        for decorator in node.decorators:
            if structural.is_grad_context(decorator.decorator, self.analysis):
                self.handled.add(id(decorator.decorator))
            else:
                self._drop_if_no_op(decorator)

    def _drop_if_no_op(self, decorator: cst.Decorator) -> None:
        """``@torch.jit.ignore``, ``@torch.jit.unused(...)``: no effect in MindSpore."""
        reference = structural.grad_context_reference(decorator.decorator)
        rule = self.rules.calls.get(self.analysis.qualified(reference) or "")
        if rule is not None and rule.no_op:
            self.handled.add(id(decorator.decorator))
            self.no_op_decorators[id(decorator.decorator)] = rule.torch

    def visit_Assign(self, node: cst.Assign) -> None:
        structural.record_known_kinds(node, self.ctx)
        self.properties.note_targets(t.target for t in node.targets)

    def leave_Assign(self, original_node, updated_node):
        return self.attributes.rewrite_assignment(original_node, updated_node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.properties.note_targets([node.target])

    def visit_Expr(self, node: cst.Expr) -> None:
        if isinstance(node.value, cst.Call):
            self.statement_calls.add(id(node.value))
            if structural.is_torch_assert(node.value, self.analysis):
                self.handled.update((id(node.value), id(node.value.func)))

    # -- structural rewrites on the way up ----------------------------------
    def leave_FunctionDef(self, original_node, updated_node):
        self.function_depth -= 1
        self.ctx.forward_depth = max(0, self.ctx.forward_depth - 1)
        return structural.convert_function(self, original_node, updated_node)

    def leave_With(self, original_node, updated_node):
        return structural.unwrap_grad_context(self, original_node, updated_node)

    def leave_Expr(self, original_node, updated_node):
        if id(original_node.value) in self.handled and structural.is_torch_assert(original_node.value, self.analysis):
            self.changed()
            return structural.as_assert(self.ctx, original_node.value, updated_node.value)
        pending = self.in_place.pop(id(original_node.value), None)
        if pending is not None:
            return structural.assign_in_place(self.ctx, *pending, in_forward=self.ctx.forward_depth > 0)
        return structural.convert_buffer_registration(self, original_node, updated_node)

    # -- references and calls ------------------------------------------------
    def visit_Comparison(self, node: cst.Comparison) -> None:
        self.handled.update(structural.device_reads_used_as_strings(node))
        check = membership_check(self, node)
        if check is not None:
            self.handled.add(id(check.module))
            self.feature_checks[id(node)] = check

    def leave_Comparison(self, original_node, updated_node):
        check = self.feature_checks.pop(id(original_node), None)
        if check is None:
            return updated_node
        return feature_answer(self, original_node, updated_node, check).with_changes(
            lpar=updated_node.lpar, rpar=updated_node.rpar)

    def leave_BinaryOperation(self, original_node, updated_node):
        result = numpy_scalars.float_numpy_operand(self.ctx, original_node, updated_node)
        result = complex_constants.tensor_operands(self.ctx, original_node, result)
        return self._changed_if(updated_node, shift_operators.shift(self.ctx, original_node, result))

    def leave_AugAssign(self, original_node, updated_node):
        return self._changed_if(updated_node, shift_operators.augmented_shift(self.ctx, original_node, updated_node))

    def leave_Subscript(self, original_node, updated_node):
        if id(original_node) in self.launcher_env.before_init:  # os.environ["LOCAL_RANK"] before init()
            return self.launcher_env.leave_read(original_node, updated_node)
        if (read := named_results.index_read(self, updated_node)) is not updated_node:
            return read  # ops.sort(x)'s pair [1]: the item, cast alone
        result = numpy_scalars.list_range_index(self.ctx, original_node, updated_node)
        return self._changed_if(updated_node, numpy_scalars.numpy_array_index(self.ctx, original_node, result))

    def _changed_if(self, updated_node, result):
        if result is not updated_node:
            self.changed()  # np.log(k) * t -> float(np.log(k)) * t; x[range(n)] -> x[list(range(n))]
        return result

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call):
        if id(original_node) in self.graph_exports.sites:
            return self.graph_exports.leave_call(original_node, updated_node)
        if id(original_node) in self.handled:
            return updated_node
        if id(original_node) in self.launcher_env.before_init:  # os.environ.get("LOCAL_RANK") before init()
            return self.launcher_env.leave_read(original_node, updated_node)
        if id(original_node) in self.feature_checks:
            return feature_answer(self, original_node, updated_node, self.feature_checks.pop(id(original_node)))
        func = original_node.func
        qualified = self.analysis.qualified(func)
        if qualified is not None:
            return _keep_parentheses(updated_node, self._api_call(original_node, updated_node, qualified))
        if isinstance(func, cst.Attribute):
            if self._is_function_apply(func):  # SwishFn.apply(x) -> SwishFn()(x)
                self.changed()
                return updated_node.with_changes(func=cst.Call(func.value))
            return _keep_parentheses(updated_node, self._method_call(original_node, updated_node, func.attr.value))
        mapped = mapped_calls.convert(self, original_node, updated_node)
        return mapped if mapped is not updated_node else builtin_abs.convert(self, original_node, updated_node)

    def _is_function_apply(self, func: cst.Attribute) -> bool:
        return func.attr.value == "apply" and isinstance(func.value, cst.Name) and func.value.value in self.function_cells

    def _api_call(self, original, updated, qualified):
        if qualified == "torch.stack" and (gathered := stacked_slices.convert(self, original, updated)) is not None:
            self.ctx.consume(original.func)
            return gathered  # torch.stack([data[i:i+k] for i in ix]) -> data[ix[:, None] + ops.arange(k)]
        rule = self.rules.calls.get(qualified)
        if rule is None:
            attribute = self.rules.attributes.get(qualified)
            if attribute is not None and attribute.target is not None:
                # a callable constant such as a dtype: torch.float32(...)
                return updated.with_changes(func=self._reference(original.func, qualified))
            if (parent_call := parent_layer_call(self, original, updated, qualified)) is not None:
                return parent_call  # nn.Linear.__init__(self, ...) in a subclass
            if (method := self._unbound_tensor_method(original, updated, qualified)) is not None:
                return method  # torch.Tensor.numpy(t) -> t.numpy()
            self.mark(original, qualified, "no MindSpore rule for this API")
            return updated
        try:
            if rule.after_init:
                raise UnknownValue("the layer needs statements after its constructor")
            expanded = structural.expand_keyword_dicts(qualified, original, updated, self.ctx)
            changes: list[tuple[str, str]] = []
            why: list[str] = []
            result = convert_call(rule, expanded, self.ctx, source=original, changes=changes, why=why)
        except Unconvertible as exc:
            if not (isinstance(exc, UnknownValue) or any(arg.star for arg in original.args)):
                self.mark(original, qualified, exc.reason)
                return updated
            return self._adapted_call(original, updated, qualified, rule, exc.reason)
        self.ctx.consume(original.func)
        self.changed()
        message = describe(original, result, changes, rule.target, why[0] if why else _first_sentence(rule.notes))
        if not changes and rule.hook is not None and not same_arguments(original, result):
            changes = [("the call", message)]
        self.ctx.converted(original, qualified, message, changes=changes)
        return result

    def _adapted_call(self, original, updated, qualified, rule, reason: str):
        """Arguments known only at run time (unpacked, or through variables where the
        rule needs a value): the call goes through the API's adapter, which has
        torch's signature and applies the rule when the values arrive."""
        try:
            if rule.is_plain_rename and not rule.args:
                adapter = self.ctx.ref(rule.target)  # the same signature: the arguments pass as they are
            else:
                adapter = self.adapters.reference(qualified, rule, call=updated)
        except Unconvertible as no_adapter:
            self.mark(original, qualified, f"{reason}; {no_adapter.reason}")
            return updated
        result = updated.with_changes(func=adapter)
        self.ctx.consume(original.func)
        self.changed()
        self.ctx.converted(original, qualified, f"{short(original)} -> {short(result)}: {code_of(adapter)} takes "
                           f"torch's arguments and converts them when their values are known at run time ({reason})")
        return result

    def _method_call(self, original, updated, name):
        if self._is_module_function(original.func.value):
            return updated  # np.sum(...), ops.softmax(...): a module's function, not a method
        if name in LAYER_METHOD_NAMES and (layer_call := layer_method_call(self, original, updated)) is not None:
            return layer_call  # self._conv_forward(x, w, b)
        on_self_or_super = structural.is_self_or_super(original.func.value)
        if name == "forward" and (self.in_cell_class() or not on_self_or_super):
            # a Module's forward is its Cell's construct (down.forward(y) in timm's HRNet);
            # an object without one fails loudly
            self.changed()
            origin = origin_of(self.ctx, original.func.value)
            if origin is not None and origin.kind == LAYER:  # a torch layer's form may be a function (a loss)
                self.ctx.converted(original, "forward", "forward call on a torch layer -> the call itself")
                return updated.with_changes(func=updated.func.value)
            self.ctx.converted(original, "forward", "forward call -> construct")
            return updated.with_changes(func=updated.func.with_changes(attr=cst.Name("construct")))
        if name in BUILTIN_NAMED_TENSOR_METHODS and id(original) in self.statement_calls:
            return updated  # items.sort(), seen.add(x): a builtin type's method, whose result a tensor's would not discard
        positional = sum(1 for a in original.args if a.keyword is None and not a.star)
        on_self = isinstance(original.func.value, cst.Name) and original.func.value.value == "self"
        # self.norm(x) calls the object's own method or submodule, never a tensor method;
        # so does self.head.norm(x) where the file shows self.head is a layer (timm's MetaFormer head)
        kinds = _NOT_TENSOR if on_self or self._is_layer_attribute(original.func.value) else None
        rule = self.rules.method_rule(name, positional, kinds)
        if (rule is not None or name in TORCH_ONLY_TENSOR_METHODS) and (
                known_foreign(self.ctx, original.func.value) or passes_image_constants(self.ctx, original)):
            # adj.multiply(mask) on a scipy matrix, a.view(np.int8) on an array, img.resize((w, h),
            # Image.BILINEAR) on a PIL image: their own methods
            return updated
        if rule is None:
            if _is_in_place_name(name) and self._is_torch_result(original.func.value):
                # on a tensor for sure: MindSpore's in-place methods are missing or no-ops on CPU
                self.mark(original, f"torch.Tensor.{name}", "in-place method with no rule; no MindSpore form is known")
                return updated
            if name in TORCH_ONLY_TENSOR_METHODS and not on_self:
                self._mark_unrecognised(original, name)
            return updated
        if rule.rename == name and rule.hook is None:  # MindSpore's Tensor has the same method
            self.ctx.converted(original, rule.torch, f"{short(original)}: the same in MindSpore")
            return updated
        try:
            result = convert_method(rule, updated.func.value, updated, self.ctx, source=original,
                                    enclosing=self.sole_argument_of.get(id(original)))
            if isinstance(result, InPlace) and id(original) in self.statement_calls:
                self.in_place[id(original)] = (updated.func.value, result.value, result.rebinds)
                result = updated
            elif isinstance(result, InPlace):
                result = structural.in_place_value(self.ctx, original.func.value, updated.func.value, result.value,
                                                   result.rebinds, in_forward=self.ctx.forward_depth > 0,
                                                   returned=self.return_depth > 0)
        except Unconvertible as exc:
            result = self._unpacked_method_call(original, updated, rule)
            if result is None:
                self.mark(original, rule.torch, exc.reason)
                return updated
        self.changed()
        if id(original) in self.in_place:
            receiver, value, _ = self.in_place[id(original)]
            message = f"{short(original)} -> {short(receiver)} updated to {short(value)} (MindSpore's in-place " \
                      "methods do not update on CPU)"
        else:
            message = describe(original, result, why=_first_sentence(rule.notes))
        self.ctx.converted(original, rule.torch, message, changes=[(f".{name}()", message)])
        return result

    def _unbound_tensor_method(self, original, updated, qualified):
        """``torch.Tensor.numpy(t)``, ``torch.Tensor.add(a, b)``: the method called on its first
        argument, converted by the method's rule (None: not that form, or no rule)."""
        name = _tensor_method_name(qualified)
        if not name or not original.args or original.args[0].keyword is not None \
                or original.args[0].star or not isinstance(updated.args[0].value, _ATOMS):
            return None
        rest = [a for a in original.args[1:] if a.keyword is None and not a.star]
        rule = self.rules.method_rule(name, len(rest), None)
        if rule is None or rule.receiver not in ("tensor", "any"):
            return None
        receiver, args = updated.args[0].value, list(updated.args[1:])
        if args:  # the last argument loses a trailing comma
            args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        call = cst.Call(cst.Attribute(receiver, cst.Name(name)), args)
        source = cst.Call(cst.Attribute(original.args[0].value, cst.Name(name)), list(original.args[1:]))
        try:
            result = convert_method(rule, receiver, call, self.ctx, source=source)
        except Unconvertible as exc:
            self.mark(original, qualified, exc.reason)
            return updated
        if isinstance(result, InPlace):
            self.mark(original, qualified, "an in-place method called through its class: call it on the tensor")
            return updated
        self.ctx.consume(original.func)
        self.changed()
        self.ctx.converted(original, qualified, describe(original, result, why=_first_sentence(rule.notes)))
        return result

    def _unpacked_method_call(self, original, updated, rule):
        """``m.add_module(*pair)``: the rule applied to its own parameter names,
        inside a lambda that receives the unpacked arguments (None: no such form)."""
        if not rule.signature or not any(arg.star for arg in original.args):
            return None
        params = cst.parse_expression(f"lambda {rule.signature}: 0").params
        if not isinstance(params.star_arg, cst.MaybeSentinel) or params.star_kwarg is not None:
            return None  # torch's own *args: the names cannot stand for them
        args = [cst.Arg(p.name) for p in params.params]
        args += [cst.Arg(p.name, keyword=p.name) for p in params.kwonly_params]
        try:
            body = convert_method(rule, updated.func.value, updated.with_changes(args=args), self.ctx, source=original)
        except Unconvertible:
            return None
        if isinstance(body, InPlace):
            return None
        return cst.Call(cst.Lambda(params, body, lpar=[cst.LeftParen()], rpar=[cst.RightParen()]), updated.args)

    def _is_layer_attribute(self, receiver: cst.BaseExpression) -> bool:
        """``self.head`` made from a torch layer or one of the file's Cells."""
        if not (isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name)
                and receiver.value.value == "self"):
            return False
        origin = origin_of(self.ctx, receiver)
        return origin is not None and origin.kind in (LAYER, CELL)

    def _mark_unrecognised(self, node: cst.Call, name: str) -> None:
        """A torch-only Tensor method no rule knows: MindSpore's Tensor lacks
        it, so the call gets a marker; it is counted as unrecognised."""
        api = f"torch.Tensor.{name}"
        text = f"{api}: MindSpore's Tensor has no .{name}() and no rule converts it; if the receiver is a tensor, rewrite it by hand"
        if self.frames and text not in self.frame.markers:
            self.frame.markers.append(text)
        self.ctx.report(node, api, Severity.MARKER, text, Outcome.UNKNOWN)

    def _is_torch_result(self, receiver: cst.BaseExpression) -> bool:
        """The receiver is what a torch API call (or a method on its result) returns."""
        while isinstance(receiver, cst.Call):
            qualified = self.analysis.qualified(receiver.func)
            if qualified is not None:
                return qualified.startswith("torch.")
            if not isinstance(receiver.func, cst.Attribute):
                return False
            receiver = receiver.func.value
        return False

    def _is_module_function(self, receiver: cst.BaseExpression) -> bool:
        parts = chain_parts(receiver)
        if parts is None:
            return False
        if self._written_namespaces is None:
            self._written_namespaces = written_namespaces(self.module)
        return parts[0] in self.analysis.imports or parts[0] in self._written_namespaces

    def leave_SimpleString(self, original_node, updated_node):
        return self.launcher_env.leave(original_node, updated_node)

    def leave_FormattedString(self, original_node, updated_node):
        return updated_node if updated_node is original_node else requote_in_fstring(updated_node)

    def leave_Attribute(self, original_node, updated_node):
        if (read := named_results.field_read(self, original_node, updated_node)) is not None:
            return read  # x.topk(k).indices -> ops.topk(x, k)[1].astype(mindspore.int64)
        if self._is_function_apply(original_node) and id(original_node) not in self.call_funcs:
            self.changed()
            return apply_as_value(original_node.value, original_node.value.value in self.stateless_functions)
        mapped = self.attributes.rewrite(original_node, updated_node)
        if mapped is not None:
            return mapped
        return self._maybe_reference(original_node, updated_node)

    def leave_Name(self, original_node, updated_node):
        return self._maybe_reference(original_node, updated_node)

    def _maybe_reference(self, original, updated):
        qualified = self.analysis.qualified(original)
        if qualified is None and isinstance(original, cst.Attribute):
            return self.properties.leave(original, updated)
        if qualified is None:
            return updated
        if id(original) in self.call_funcs or id(original) in self.handled:
            result = updated  # the call (or structural transform) decides
        else:
            result = self._reference(original, qualified, updated)
        if result is updated and self.frames:
            binding = self.analysis.reference_binding.get(id(original))
            self.frame.left[id(result)] = LeftReference(result, original, binding, qualified)
        return result

    def _reference(self, original, qualified, updated=None):
        """A torch name used as a value: a dtype, a class in isinstance(), a base class ..."""
        updated = updated if updated is not None else original
        attribute = self.rules.attributes.get(qualified)
        if attribute is not None:
            if attribute.target is None:
                return self._unconverted(original, updated, qualified, attribute.reason or "no MindSpore equivalent")
            return self._renamed(original, qualified, attribute.target)
        rule = self.rules.calls.get(qualified)
        if rule is not None and rule.target is not None:
            # as a value it is called later with torch's arguments: only a rule that
            # changes none of them (and adds no torch method) can stand as the MindSpore name
            if id(original) in self.type_context or (rule.is_plain_rename and not rule.args
                                                      and not rule.reset_parameters):
                return self._renamed(original, qualified, rule.target)
        if rule is not None and (rule.target is not None or rule.hook is not None) and id(original) not in self.type_context:
            as_base = id(original) in self.base_context
            where = "as a base class" if as_base else "as a value"
            try:
                adapter = self.adapters.reference(qualified, rule, subclassed=as_base)
            except Unconvertible as exc:
                return self._unconverted(original, updated, qualified, f"used {where}: {exc.reason}")
            self.ctx.consume(original)
            self.changed()
            self.ctx.converted(original, qualified, f"{code_of(original)} used {where} -> {code_of(adapter)}, "
                               "which takes torch's arguments and converts them to MindSpore's")
            return adapter
        name = _tensor_method_name(qualified)
        method = self.rules.method_rule(name, 0, None) if name else None
        if method is not None and method.rename == name and method.hook is None and method.receiver == "tensor":
            return self._renamed(original, qualified, f"mindspore.Tensor.{name}")  # map(torch.Tensor.numpy, xs)
        return self._unconverted(original, updated, qualified, "no MindSpore rule for this API")

    def _unconverted(self, original, updated, qualified: str, reason: str):
        if id(original) not in self.annotation_refs:
            if not self.frames:
                self.mark(original, qualified, reason)
            else:
                text = reason if reason.startswith(qualified) else f"{qualified}: {reason}"
                self.frame.markers.append(_PendingMark(updated, original, qualified, text))
            return updated
        # an annotation has no effect at run time: a torch type with no MindSpore
        # counterpart stays readable as a string (a forward reference)
        self.ctx.consume(original)
        self.changed()
        self.ctx.converted(original, qualified, f"{qualified} in an annotation kept as the string annotation "
                           f"'{code_of(original)}' ({reason})", Severity.WARNING)
        return cst.SimpleString(repr(code_of(original)).replace("'", '"'))

    def _renamed(self, original, qualified, target):
        self.ctx.consume(original)
        self.changed()
        self.ctx.converted(original, qualified, f"{qualified} -> {target}")
        return self.ctx.ref(target)


def _tensor_method_name(qualified: str) -> str:
    """``numpy`` for ``torch.Tensor.numpy``; "" for anything else."""
    name = qualified[len("torch.Tensor."):] if qualified.startswith("torch.Tensor.") else ""
    return "" if "." in name else name


def _is_in_place_name(name: str) -> bool:
    return name.endswith("_") and not name.startswith("_")


def _first_sentence(text: str) -> str:
    sentence = " ".join(text.split()).split(". ")[0].rstrip(".")
    return sentence if len(sentence) <= 160 else ""


def _is_torch_class(qualified: str | None) -> bool:
    return qualified is not None and qualified.startswith("torch.") and qualified.rsplit(".", 1)[-1][:1].isupper()


def _simple_statements(result) -> list[cst.SimpleStatementLine]:
    """The simple statements a statement's rewrite became (itself; with the
    imports placed above it; in the ``try`` guarding it)."""
    if isinstance(result, cst.FlattenSentinel):
        return [node for node in result.nodes if isinstance(node, cst.SimpleStatementLine)]
    if isinstance(result, cst.Try):
        return [node for node in result.body.body if isinstance(node, cst.SimpleStatementLine)]
    return [result] if isinstance(result, cst.SimpleStatementLine) else []


def _keep_parentheses(before: cst.BaseExpression, after):
    """A rewritten call keeps the parentheses around the original: they may be
    what makes line breaks inside it legal (``return (x\n    .clone())``)."""
    if after is before or not before.lpar or not isinstance(after, cst.BaseExpression):
        return after
    if getattr(after, "lpar", None) != ():
        return after  # parenthesised already, or a node without parentheses
    return after.with_changes(lpar=before.lpar, rpar=before.rpar)
