"""Statements around a training loop that are rewritten as a whole:

    torch.backends.cudnn.benchmark = True       (removed: no MindSpore meaning; reported)
    torch.backends.cudnn.deterministic = True   mindspore.set_deterministic(True)
    torch.set_float32_matmul_precision("high")  (removed: TF32 is not a MindSpore setting; reported)
    model.features.requires_grad_(False)        for param in model.features.get_parameters():
                                                    param.requires_grad = False
    ctx = nullcontext() if cpu else autocast()  ctx = nullcontext()   (mixed precision goes on the network)

Planned on the original tree before the traversal (which statements, and the
torch references they hold, so no rule marks them); applied as the traversal
leaves each statement.
"""

from __future__ import annotations

import libcst as cst

from transpiler.engine import code_of
from transpiler.structural.amp import is_nullcontext
from transpiler.structural.provenance import AUTOCASTS, CELL, LAYER, WRAPPER, provenance_of, remember_module

_BACKENDS = "torch.backends."
_LAYERS = "torch.nn."
_DETERMINISTIC = frozenset({"torch.backends.cudnn.deterministic"})
_DROPPED_CALLS = frozenset({"torch.set_float32_matmul_precision"})


class Surroundings:
    def __init__(self, rewriter):
        self.rewriter = rewriter
        self.ctx = rewriter.ctx
        self.plans: dict[int, tuple] = {}  # id(original statement) -> (rewrite, data)

    def plan(self, module: cst.Module) -> None:
        analysis = self.ctx.analysis
        relevant = any(q.startswith((_BACKENDS, _LAYERS)) or q in _DROPPED_CALLS or q in AUTOCASTS
                       for q in analysis.references.values())
        if not relevant and not analysis.cell_classes:
            return  # no flags, no autocast, no layers to freeze: skip the walk
        remember_module(self.ctx, module)
        finder = _Statements()
        module.visit(finder)
        for statement in finder.lines:
            small = statement.body[0] if len(statement.body) == 1 else None
            if isinstance(small, cst.Assign):
                self._plan_assignment(statement, small)
            elif isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                self._plan_call(statement, small.value)

    def _plan_assignment(self, statement, assign: cst.Assign) -> None:
        qualified = [self.ctx.analysis.qualified(t.target) for t in assign.targets]
        if qualified and all(q is not None and q.startswith(_BACKENDS) for q in qualified):
            for target in assign.targets:
                self.rewriter.handled.add(id(target.target))
            self.plans[id(statement)] = (self._flag, qualified)
            return
        value = assign.value
        if isinstance(value, cst.IfExp):
            analysis = self.ctx.analysis
            branches = (value.body, value.orelse)
            autocast = [b for b in branches if isinstance(b, cst.Call) and analysis.qualified(b.func) in AUTOCASTS]
            plain = [b for b in branches if is_nullcontext(b, analysis)]
            if len(autocast) == 1 and len(plain) == 1:
                self.plans[id(statement)] = (self._context, 0 if branches[0] is plain[0] else 1)

    def _plan_call(self, statement, call: cst.Call) -> None:
        analysis = self.ctx.analysis
        if analysis.qualified(call.func) in _DROPPED_CALLS:
            self.rewriter.handled.add(id(call))
            self.ctx.consume(call.func)
            self.plans[id(statement)] = (self._dropped_call, analysis.qualified(call.func))
            return
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "requires_grad_" and len(call.args) <= 1:
            provenance = provenance_of(self.ctx)
            if provenance is not None and provenance.kind(call.func.value) in (CELL, LAYER, WRAPPER):
                self.rewriter.handled.add(id(call))
                self.ctx.analysis.interesting.add(id(statement))
                self.plans[id(statement)] = (self._freeze, None)

    # -- as the traversal leaves the statements ------------------------------------
    def leave(self, original, result):
        planned = self.plans.pop(id(original), None)
        if planned is None:
            return result
        rewrite, data = planned
        self.rewriter.changed()
        return rewrite(original, result, data)

    def _flag(self, original, result, qualified: list[str]):
        for target in original.body[0].targets:
            self.ctx.consume(target.target)
        if all(q in _DETERMINISTIC for q in qualified):
            value = result.body[0].value
            call = cst.Call(self.ctx.ref("mindspore.set_deterministic"), [cst.Arg(value)])
            self.ctx.converted(original, qualified[0], f"{qualified[0]} = ... -> mindspore.set_deterministic(...)")
            self.ctx.to_format.add(result)
            return result.with_changes(body=[cst.Expr(call)])
        for name in qualified:
            self.ctx.converted(original, name, f"{name} = ... removed: a CUDA backend setting with no MindSpore "
                                               "meaning (MindSpore chooses its kernels itself)")
        return self.rewriter.placeholders.make(result)

    def _dropped_call(self, original, result, qualified: str):
        self.ctx.converted(original, qualified, f"{qualified}(...) removed: TF32 matrix products are not a MindSpore "
                                                "setting")
        return self.rewriter.placeholders.make(result)

    def _freeze(self, original, result, _):
        call = result.body[0].value
        flag = call.args[0].value if call.args else cst.Name("True")
        if call.args and call.args[0].keyword is not None and call.args[0].keyword.value != "requires_grad":
            return result
        param = cst.Name("param")
        body = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Attribute(param, cst.Name("requires_grad")))],
                                                   flag)])
        loop = cst.For(
            target=param,
            iter=cst.Call(cst.Attribute(call.func.value, cst.Name("get_parameters")), []),
            body=cst.IndentedBlock([body]),
            leading_lines=result.leading_lines,
        )
        self.ctx.converted(original, "torch.nn.Module.requires_grad_",
                           f"{code_of(original.body[0].value)} -> requires_grad set on each of its Parameters")
        return loop

    def _context(self, original, result, plain_index: int):
        value = result.body[0].value
        plain = value.body if plain_index == 0 else value.orelse
        self.ctx.converted(original, "torch.autocast", "autocast-or-nullcontext -> nullcontext(): mixed precision is "
                                                       "set on the network where it trains")
        self.ctx.to_format.add(result)
        return result.with_changes(body=[result.body[0].with_changes(value=plain)])


class _Statements(cst.CSTVisitor):
    def __init__(self):
        self.lines: list[cst.SimpleStatementLine] = []

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> bool:
        self.lines.append(node)
        return False

