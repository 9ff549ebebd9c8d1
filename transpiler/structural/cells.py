"""nn.Module subclasses become nn.Cell subclasses: the base class is renamed by
its attribute rule; here ``forward`` becomes ``construct``."""

from __future__ import annotations

import libcst as cst

from transpiler.structural.grad_mode import grad_context_reference


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

