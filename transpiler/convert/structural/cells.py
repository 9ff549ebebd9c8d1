"""nn.Module subclasses become nn.Cell subclasses: the base class is renamed by
its attribute rule; here ``forward`` becomes ``construct``."""

from __future__ import annotations

import libcst as cst

from transpiler.convert.diagnostics import Severity
from transpiler.convert.structural.grad_mode import grad_context_reference


_MODULE_BASES = {"torch.nn.Module", "torch.nn.modules.module.Module"}
_NOT_MODULES = {"torch.nn.Parameter", "torch.nn.Buffer", "torch.nn.ParameterList", "torch.nn.ParameterDict"}


def is_module_base(qualified: str) -> bool:
    """True for torch.nn.Module and torch.nn layer classes (all Modules)."""
    if qualified in _MODULE_BASES:
        return True
    if qualified in _NOT_MODULES:
        return False
    parts = qualified.split(".")
    if parts[:2] != ["torch", "nn"]:
        return False
    if len(parts) == 3 or parts[2] == "modules":
        return parts[-1][:1].isupper()
    return False


def is_self_or_super(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Name):
        return expr.value == "self"
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "super"


def drop_no_op_decorators(rewriter, original, updated):
    """Without the decorators the rewrite handled whole: grad-mode ones
    (``@torch.no_grad()``) and those with no effect in MindSpore (``@torch.jit.ignore``)."""
    if not any(id(d.decorator) in rewriter.handled for d in original.decorators):
        return updated
    for decorator in original.decorators:
        if id(decorator.decorator) not in rewriter.handled:
            continue
        rewriter.ctx.consume(grad_context_reference(decorator.decorator))
        api = rewriter.no_op_decorators.get(id(decorator.decorator))
        if api is None:
            rewriter.ctx.converted(
                original, "torch.no_grad", "grad-mode decorator removed: MindSpore computes gradients only inside grad functions"
            )
        else:
            rewriter.ctx.converted(original, api, f"@{api} removed: it has no effect in MindSpore")
    rewriter.changed()
    # the comment lines of a removed decorator go to the next line that stays
    decorators, carried = [], []
    for decorator, source in zip(updated.decorators, original.decorators):
        if id(source.decorator) in rewriter.handled:
            carried.extend(decorator.leading_lines)
            continue
        decorators.append(decorator.with_changes(leading_lines=[*carried, *decorator.leading_lines]))
        carried = []
    changes = {"decorators": decorators}
    if carried and decorators:
        changes["lines_after_decorators"] = [*carried, *updated.lines_after_decorators]
    elif carried:
        changes["leading_lines"] = [*updated.leading_lines, *carried]
    return updated.with_changes(**changes)


def convert_function(rewriter, original: cst.FunctionDef, updated: cst.FunctionDef):
    changes = {}
    updated = drop_no_op_decorators(rewriter, original, updated)
    if rewriter.in_cell_class() and original.name.value == "forward":
        changes["name"] = cst.Name("construct")
        rewriter.changed()
        rewriter.ctx.converted(original, "forward", "forward -> construct")
    return updated.with_changes(**changes) if changes else updated


_SEQUENTIAL_BASES = {"torch.nn.Sequential", "torch.nn.modules.container.Sequential"}
# torch's Sequential.forward, over the children as torch holds them (name_cells(): by name, in the order added)
_SEQUENTIAL_CONSTRUCT = '''\
def construct(self, input_data):
    # torch's Sequential runs every child, those assigned as attributes too; SequentialCell runs its cell_list
    for cell in self.name_cells().values():
        input_data = cell(input_data)
    return input_data
'''


def run_assigned_children(rewriter, original: cst.ClassDef, updated: cst.ClassDef):
    """A Sequential subclass that assigns its children (``self.conv = nn.Conv2d(...)``,
    timm's ConvNorm) and runs them with Sequential's own forward: torch runs
    every registered child in order, MindSpore's SequentialCell runs only the
    cells it was constructed with (its ``cell_list``). Such a class gets the
    ``construct`` torch's forward is; its subclasses inherit it."""
    if not any(rewriter.analysis.qualified(base.value) in _SEQUENTIAL_BASES for base in original.bases):
        return updated
    methods = [s for s in original.body.body if isinstance(s, cst.FunctionDef)] \
        if isinstance(original.body, cst.IndentedBlock) else []
    if any(m.name.value in ("forward", "construct") for m in methods):
        return updated
    if not any(_assigns_child(m) for m in methods):
        return updated
    construct = cst.parse_statement(_SEQUENTIAL_CONSTRUCT).with_changes(leading_lines=[cst.EmptyLine(indent=False)])
    rewriter.changed()
    # recorded, not counted: the base is the one torch.nn.Sequential use, converted by its rule
    rewriter.ctx.report(original, "torch.nn.Sequential", Severity.INFO,
                        "Sequential subclass assigning its children: construct runs them all, as torch's forward")
    return updated.with_changes(body=updated.body.with_changes(body=[*updated.body.body, construct]))


class _ChildAssignments(cst.CSTVisitor):
    """``self.name = value`` with a value that may be a Module (not a literal)."""

    def __init__(self):
        self.found = False

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(_is_self_attribute(t.target) for t in node.targets) and not _is_literal(node.value):
            self.found = True

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if _is_self_attribute(node.target) and node.value is not None and not _is_literal(node.value):
            self.found = True


def _assigns_child(method: cst.FunctionDef) -> bool:
    finder = _ChildAssignments()
    method.body.visit(finder)
    return finder.found


def _is_self_attribute(target: cst.BaseExpression) -> bool:
    return isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"


def _is_literal(value: cst.BaseExpression) -> bool:
    if isinstance(value, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(value, cst.Name):
        return value.value in ("True", "False", "None")
    if isinstance(value, (cst.Tuple, cst.List)):
        return all(_is_literal(e.value) for e in value.elements)
    return False
