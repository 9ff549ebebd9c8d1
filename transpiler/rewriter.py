"""The one rewriting traversal of a file.

API rules are looked up by qualified name (from the metadata pass), method
rules by name and arity; the structural transforms (Module -> Cell, forward ->
construct, grad-mode contexts, buffers) live in ``transpiler.structural`` and
are called from here. Every statement that changes is reformatted with black;
every statement that cannot be converted gets a marker comment above it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from rewrite_rules.registry import RuleSet
from rewrite_rules.spec import InPlace, Unconvertible
from rewrite_rules.tensor_methods_data import BUILTIN_NAMED_TENSOR_METHODS, TORCH_ONLY_TENSOR_METHODS
from transpiler import comments, structural
from transpiler.context import FileContext
from transpiler.diagnostics import Outcome, Severity
from transpiler.engine import convert_call, convert_method
from transpiler.names import chain_parts
from transpiler.statements import Placeholders
from transpiler.tensor_properties import PropertyReads
from transpiler.walk import LAYOUT_TYPES

MARKER_PREFIX = "# TODO(ms-migrate): "
_NOT_TENSOR = frozenset({"cell", "any", "optimizer"})


@dataclass
class _Frame:
    markers: list[str] = field(default_factory=list)
    changed: bool = False


class Rewriter(cst.CSTTransformer):
    # Diagnostics get their positions after the traversal (FileContext.resolve_positions):
    # no metadata wrapper, no position table for every node.

    def __init__(self, ctx: FileContext, rules: RuleSet, module: cst.Module):
        super().__init__()
        self.ctx = ctx
        self.rules = rules
        self.module = module
        self.analysis = ctx.analysis
        self.frames: list[_Frame] = []
        self.depth = 0
        self.classes: list[str | None] = []  # enclosing classes; the name if it is a Cell
        self.type_context: set[int] = set()  # isinstance()/annotation references
        self.base_context: set[int] = set()  # class bases
        self.call_funcs: set[int] = set()  # callee expressions (handled in leave_Call)
        self.handled: set[int] = set()  # nodes a structural transform consumes whole
        self.statement_calls: set[int] = set()  # calls that are a whole expression statement
        self.in_place: dict[int, tuple[cst.BaseExpression, cst.BaseExpression, bool]] = {}
        self.placeholders = Placeholders(track=ctx.to_format)
        self.training = structural.TrainingLoops(self)
        self.checkpoints = structural.Checkpoints(self)  # dicts of states in torch.save / torch.load
        self.surroundings = structural.Surroundings(self)  # backend flags, freezing, autocast variables
        self.attributes = structural.Attributes(self)  # attribute reads of layers, loaders, wrappers
        self.properties = PropertyReads(self)  # x.real, x.is_cuda ... on untyped receivers
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
        if type(node) in LAYOUT_TYPES:
            return False  # whitespace, comments, punctuation: nothing to rewrite below
        if isinstance(node, cst.BaseStatement):
            if id(node) not in self.analysis.interesting:
                return False
            self.frames.append(_Frame())
        elif isinstance(node, cst.IndentedBlock):
            self.depth += 1
        return super().on_visit(node)

    def on_leave(self, original_node, updated_node):
        if isinstance(original_node, cst.BaseStatement) and id(original_node) not in self.analysis.interesting:
            return self.training.leave(original_node, updated_node)  # skipped in on_visit: no leave_ handlers either
        result = super().on_leave(original_node, updated_node)
        if isinstance(original_node, cst.IndentedBlock):
            self.depth -= 1
            if isinstance(result, cst.IndentedBlock):
                result = result.with_changes(body=self.placeholders.compact(list(result.body)))
        elif isinstance(original_node, cst.BaseStatement) and id(original_node) in self.analysis.interesting:
            result = self._finish_statement(original_node, result, self.frames.pop())
            result = self.checkpoints.leave(original_node, result)
            result = self.surroundings.leave(original_node, result)
        result = self.training.leave(original_node, result)
        if isinstance(original_node, cst.BaseStatement):
            result = comments.keep_in_statement(original_node, result)  # what a rewrite dropped goes above it
        return result

    def _finish_statement(self, original, result, frame: _Frame):
        if isinstance(result, cst.SimpleStatementLine) and isinstance(original, cst.SimpleStatementLine):
            if structural.is_noop_statement(original, result):
                self.ctx.converted(original, "statement", "removed a statement that only moved a device")
                return self.placeholders.make(original)  # with every comment, in order
        if frame.markers:
            # comments above the first statement are parsed into the module header
            header = self._header_comments if self.module.body and original is self.module.body[0] else ()
            result = _add_markers(result, frame.markers, header)
        if frame.changed and isinstance(result, cst.SimpleStatementLine):
            self.ctx.to_format.add(result)  # black runs after the import edits
        return result

    def visit_Module(self, node: cst.Module) -> None:
        self.training.plan(node)
        self.checkpoints.plan(node)
        self.surroundings.plan(node)
        structural.record_dataset_columns(node, self.ctx)
        self.attributes.plan(node)

    def leave_Module(self, original_node, updated_node):
        return updated_node.with_changes(body=self.placeholders.compact(list(updated_node.body)))

    # -- imports are handled by transpiler.imports after the traversal --------
    def visit_Import(self, node) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if isinstance(node.names, cst.ImportStar) and node in self.analysis.star_imports:
            self.mark(node, "import *", "star import from torch: names cannot be resolved; import them explicitly")
        return False

    # -- contexts set on the way down ----------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        is_cell = node.name.value in self.analysis.cell_classes
        self.classes.append(node.name.value if is_cell else None)
        structural.visit_dataset_class(self, node)
        for base in node.bases:
            self.base_context.add(id(base.value))

    def leave_ClassDef(self, original_node, updated_node):
        self.classes.pop()
        if original_node.name.value in self.analysis.cell_classes:
            self.changed()
        return structural.convert_dataset_class(self, original_node, updated_node)

    def visit_Annotation(self, node: cst.Annotation) -> None:
        self.type_context.update(structural.reference_ids(node.annotation))

    def visit_Call(self, node: cst.Call) -> None:
        self.call_funcs.add(id(node.func))
        if isinstance(node.func, cst.Name) and node.func.value in ("isinstance", "issubclass") and len(node.args) >= 2:
            self.type_context.update(structural.reference_ids(node.args[1].value))

    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            if structural.is_grad_context(item.item, self.analysis):
                self.handled.add(id(item.item))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        for decorator in node.decorators:
            if structural.is_grad_context(decorator.decorator, self.analysis):
                self.handled.add(id(decorator.decorator))

    def visit_Assign(self, node: cst.Assign) -> None:
        structural.record_known_kinds(node, self.ctx)
        self.properties.note_targets(t.target for t in node.targets)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.properties.note_targets([node.target])

    def visit_Expr(self, node: cst.Expr) -> None:
        if isinstance(node.value, cst.Call):
            self.statement_calls.add(id(node.value))

    # -- structural rewrites on the way up ----------------------------------
    def leave_FunctionDef(self, original_node, updated_node):
        return structural.convert_function(self, original_node, updated_node)

    def leave_With(self, original_node, updated_node):
        return structural.unwrap_grad_context(self, original_node, updated_node)

    def leave_Expr(self, original_node, updated_node):
        pending = self.in_place.pop(id(original_node.value), None)
        if pending is not None:
            return structural.assign_in_place(self.ctx, *pending)
        return structural.convert_buffer_registration(self, original_node, updated_node)

    # -- references and calls ------------------------------------------------
    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call):
        if id(original_node) in self.handled:
            return updated_node
        func = original_node.func
        qualified = self.analysis.qualified(func)
        if qualified is not None:
            return _keep_parentheses(updated_node, self._api_call(original_node, updated_node, qualified))
        if isinstance(func, cst.Attribute):
            return _keep_parentheses(updated_node, self._method_call(original_node, updated_node, func.attr.value))
        return updated_node

    def _api_call(self, original, updated, qualified):
        rule = self.rules.calls.get(qualified)
        if rule is None:
            attribute = self.rules.attributes.get(qualified)
            if attribute is not None and attribute.target is not None:
                # a callable constant such as a dtype: torch.float32(...)
                return updated.with_changes(func=self._reference(original.func, qualified))
            self.mark(original, qualified, "no MindSpore rule for this API")
            return updated
        try:
            expanded = structural.expand_keyword_dicts(qualified, original, updated, self.ctx)
            result = convert_call(rule, expanded, self.ctx, source=original)
        except Unconvertible as exc:
            self.mark(original, qualified, exc.reason)
            return updated
        self.ctx.consume(original.func)
        self.changed()
        outcome = f"-> {rule.target}" if rule.target else f"rewritten ({rule.notes})" if rule.notes else "rewritten"
        self.ctx.converted(original, qualified, f"{qualified} {outcome}")
        return result

    def _method_call(self, original, updated, name):
        if name == "forward" and self.in_cell_class() and structural.is_self_or_super(original.func.value):
            self.changed()
            self.ctx.converted(original, "forward", "forward call -> construct")
            return updated.with_changes(func=updated.func.with_changes(attr=cst.Name("construct")))
        if self._is_module_function(original.func.value):
            return updated  # np.sum(...), ops.softmax(...): a module's function, not a method
        if name in BUILTIN_NAMED_TENSOR_METHODS and id(original) in self.statement_calls:
            return updated  # items.sort(), seen.add(x): a builtin type's method, whose result a tensor's would not discard
        positional = sum(1 for a in original.args if a.keyword is None and not a.star)
        on_self = isinstance(original.func.value, cst.Name) and original.func.value.value == "self"
        # self.norm(x) calls the object's own method or submodule, never a tensor method
        kinds = _NOT_TENSOR if on_self else None
        rule = self.rules.method_rule(name, positional, kinds)
        if rule is None:
            if _is_in_place_name(name) and self._is_torch_result(original.func.value):
                # on a tensor for sure: MindSpore's in-place methods are missing or no-ops on CPU
                self.mark(original, f"torch.Tensor.{name}", "in-place method with no rule; no MindSpore form is known")
                return updated
            if name in TORCH_ONLY_TENSOR_METHODS and not on_self:
                self._mark_unrecognised(original, name)
            return updated
        if rule.rename == name and rule.hook is None:  # MindSpore's Tensor has the same method
            self.ctx.converted(original, rule.torch, f".{name}() is the same in MindSpore")
            return updated
        try:
            result = convert_method(rule, updated.func.value, updated, self.ctx, source=original)
            if isinstance(result, InPlace):
                if id(original) in self.statement_calls:
                    self.in_place[id(original)] = (updated.func.value, result.value, result.rebinds)
                    result = updated
                else:
                    result = structural.in_place_value(self.ctx, original.func.value, updated.func.value, result)
        except Unconvertible as exc:
            self.mark(original, rule.torch, exc.reason)
            return updated
        self.changed()
        self.ctx.converted(original, rule.torch, f".{name}() -> MindSpore form")
        return result

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
        return parts is not None and parts[0] in self.analysis.imports

    def leave_Attribute(self, original_node, updated_node):
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
        if qualified is None or id(original) in self.call_funcs or id(original) in self.handled:
            return updated
        return self._reference(original, qualified, updated)

    def _reference(self, original, qualified, updated=None):
        """A torch name used as a value: a dtype, a class in isinstance(), a base class ..."""
        updated = updated if updated is not None else original
        attribute = self.rules.attributes.get(qualified)
        if attribute is not None:
            if attribute.target is None:
                self.mark(original, qualified, attribute.reason or "no MindSpore equivalent")
                return updated
            return self._renamed(original, qualified, attribute.target)
        rule = self.rules.calls.get(qualified)
        if rule is not None and rule.target is not None:
            as_type = id(original) in self.type_context
            if as_type or rule.is_plain_rename:
                return self._renamed(original, qualified, rule.target)
            where = "as a base class" if id(original) in self.base_context else "as a value"
            self.mark(original, qualified, f"used {where}; its arguments can only be converted where it is called")
            return updated
        self.mark(original, qualified, "no MindSpore rule for this API")
        return updated

    def _renamed(self, original, qualified, target):
        self.ctx.consume(original)
        self.changed()
        self.ctx.converted(original, qualified, f"{qualified} -> {target}")
        return self.ctx.ref(target)


def _is_in_place_name(name: str) -> bool:
    return name.endswith("_") and not name.startswith("_")


def _keep_parentheses(before: cst.BaseExpression, after):
    """A rewritten call keeps the parentheses around the original: they may be
    what makes line breaks inside it legal (``return (x\n    .clone())``)."""
    if after is before or not before.lpar or not isinstance(after, cst.BaseExpression):
        return after
    if getattr(after, "lpar", None) != ():
        return after  # parenthesised already, or a node without parentheses
    return after.with_changes(lpar=before.lpar, rpar=before.rpar)


def _add_markers(statement, markers: list[str], already=()):
    if isinstance(statement, cst.FlattenSentinel):
        nodes = list(statement.nodes)
        if nodes:
            nodes[0] = _add_markers(nodes[0], markers, already)
        return cst.FlattenSentinel(nodes)
    if not hasattr(statement, "leading_lines"):
        return statement
    existing = {line.comment.value for line in statement.leading_lines if line.comment is not None} | set(already)
    new_lines = [
        cst.EmptyLine(comment=cst.Comment(MARKER_PREFIX + _one_line(text)))
        for text in markers
        if MARKER_PREFIX + _one_line(text) not in existing
    ]
    if not new_lines:
        return statement
    return statement.with_changes(leading_lines=[*statement.leading_lines, *new_lines])


def _one_line(text: str) -> str:
    return " ".join(text.split())
