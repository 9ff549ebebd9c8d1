"""The torch training step -> MindSpore functional training step.

    optimizer.zero_grad()                 def forward_fn(x, y):
    out = model(x)                            out = model(x)
    loss = criterion(out, y)       ->         loss = criterion(out, y)
    loss.backward()                           return loss, out
    optimizer.step()                      grad_fn = mindspore.value_and_grad(
    acc = (out.argmax(1) == y)...             forward_fn, None, optimizer.parameters, has_aux=True)
                                          ...
                                              (loss, out), grads = grad_fn(x, y)
                                              optimizer(grads)
                                              acc = (out.argmax(1) == y)...

The forward function and grad function are defined once, before the outermost
loop of the function (or inline when there is no loop). Values later lines
use (logits, partial losses, recurrent state) come back as auxiliary outputs.
Planning (``step_plan``) reads the original tree when the traversal starts;
this module records the rewritten statements of the affected blocks as the
traversal leaves them and reassembles those blocks.
"""

from __future__ import annotations

import libcst as cst

from transpiler.diagnostics import Outcome, Severity
from transpiler.engine import code_of, keyword_arg
from transpiler.formatting import format_statement
from transpiler.structural.step_names import names_of
from transpiler.structural.step_plan import (
    BACKWARD_API,
    BlockSite,
    Kinds,
    Planner,
    StepFailure,
    StepPlan,
    find_sites,
    method_statement,
)

_NO_PARENS = {"lpar": [], "rpar": []}


class TrainingLoops:
    def __init__(self, rewriter):
        self.rewriter = rewriter
        self.ctx = rewriter.ctx
        self.blocks: dict[int, tuple[BlockSite, list[StepPlan]]] = {}
        self.tracked: set[int] = set()
        self.results: dict[int, object] = {}
        self.failures: dict[int, list[StepFailure]] = {}
        self.hoisted: dict[int, list[StepPlan]] = {}
        self.preludes: dict[int, list[cst.BaseStatement]] = {}
        self.kinds: Kinds | None = None

    # -- planning, before the traversal ------------------------------------------
    def plan(self, module: cst.Module) -> None:
        sites = find_sites(module)
        if not sites:
            return
        self.kinds = Kinds(module, self.ctx.analysis)
        planner = Planner(self.ctx.analysis, self.kinds)
        all_plans: list[StepPlan] = []
        for site in sites:
            plans, failures = planner.plan(site)
            for failure in failures:
                self.failures.setdefault(id(failure.statement), []).append(failure)
                backward = method_statement(failure.statement, "backward")
                if backward is not None:
                    self.rewriter.handled.add(id(backward))  # the specific marker replaces the generic one
            if plans:
                self._register(site, plans)
                all_plans.extend(plans)
        self._name_functions(all_plans)

    def _register(self, site: BlockSite, plans: list[StepPlan]) -> None:
        self.blocks[id(site.owner)] = (site, plans)
        self.tracked.update(id(s) for s in site.statements)
        handled = self.rewriter.handled
        for index, statement in enumerate(site.statements):
            for name in ("backward", "step", "zero_grad"):
                call = method_statement(statement, name)
                if call is not None and (name != "step" or any(p.step == index for p in plans)):
                    handled.add(id(call))
        for plan in plans:
            for index in plan.clips:
                call = _call_of(site.statements[index])
                handled.add(id(call))
                self.ctx.consume(call.func)
            if plan.hoist is not None:
                self.hoisted.setdefault(id(plan.hoist), []).append(plan)

    def _name_functions(self, plans: list[StepPlan]) -> None:
        taken = set(self.ctx.analysis.bound_names)
        for plan in plans:
            suffix = "" if len(plans) == 1 else _suffix(plan.optimizer)
            plan.forward_name = _fresh(f"forward_fn{suffix}", taken)
            plan.grad_name = _fresh(f"grad_fn{suffix}", taken)
        self.grads_name = _fresh("grads", set(self.ctx.analysis.bound_names))

    # -- during the traversal --------------------------------------------------
    def leave(self, original: cst.CSTNode, result):
        key = id(original)
        if key in self.failures:
            result = self._mark(original, result, self.failures.pop(key))
        if key in self.tracked:
            self.results[key] = result
        if key in self.blocks:
            result = self._rebuild(original, result, *self.blocks[key])
        if key in self.hoisted and key in self.preludes:
            result = self._hoist(result, self.preludes.pop(key))
        return result

    def _mark(self, original, result, failures: list[StepFailure]):
        from transpiler.rewriter import _add_markers

        texts = []
        for failure in failures:
            text = f"{failure.api}: {failure.reason}"
            self.ctx.report(original, failure.api, Severity.MARKER, text, Outcome.MARKED)
            texts.append(text)
        return _add_markers(result, texts)

    # -- reassembling a block --------------------------------------------------------
    def _rebuild(self, original, result, site: BlockSite, plans: list[StepPlan]):
        statements = site.statements
        zero_grads = {i for i, s in enumerate(statements) if method_statement(s, "zero_grad") is not None}
        placeholders = self.rewriter.placeholders
        depth = self.rewriter.depth + (1 if isinstance(original, cst.IndentedBlock) else 0)
        body: list[cst.BaseStatement] = []

        def result_of(index: int):
            return self.results[id(statements[index])]

        def emit(index: int) -> None:
            if index in zero_grads:
                self.ctx.converted(statements[index], "torch.optim.Optimizer.zero_grad",
                                   "zero_grad() removed: MindSpore computes fresh gradients every step")
                body.append(placeholders.make(result_of(index)))
                return
            body.extend(_flatten(result_of(index)))

        position = 0
        for plan in plans:
            while position < plan.region_start:
                emit(position)
                position += 1
            for index in range(plan.region_start, plan.step + 1):
                if index in zero_grads:
                    emit(index)  # removed; its comments move on
            for index in plan.before:
                emit(index)
            definitions = self._definitions(site, plan, depth)
            if plan.hoist is None:
                body.extend(definitions)
            else:
                self.preludes.setdefault(id(plan.hoist), []).extend(definitions)
            body.append(placeholders.make(result_of(plan.backward)))
            body.append(self._gradient_call(site, plan, depth))
            for index in plan.after:
                emit(index)
            for index in plan.between:
                if index in plan.clips:
                    body.append(self._clip(site, plan, index, depth))
                else:
                    emit(index)
            body.append(placeholders.make(result_of(plan.step)))
            body.append(_expression(cst.Call(plan.optimizer.deep_clone(), [cst.Arg(cst.Name(self.grads_name))])))
            self.ctx.converted(statements[plan.backward], BACKWARD_API,
                               f"training step -> {plan.forward_name} + mindspore.value_and_grad + optimizer(grads)")
            position = plan.step + 1
        while position < len(statements):
            emit(position)
            position += 1
        self.rewriter.changed()
        return result.with_changes(body=placeholders.compact(body))

    def _definitions(self, site, plan: StepPlan, depth: int) -> list[cst.BaseStatement]:
        statements = site.statements
        inner: list[cst.BaseStatement] = []
        for index in sorted(plan.forward + plan.recomputed):
            for statement in _flatten(self.results[id(statements[index])]):
                inner.append(statement.deep_clone() if index in plan.recomputed else statement)
        inner = self.rewriter.placeholders.compact(inner)
        outputs = [self._loss_output(site, plan), *(cst.Name(n) for n in plan.aux)]
        value = outputs[0] if len(outputs) == 1 else cst.Tuple([cst.Element(o) for o in outputs], **_NO_PARENS)
        inner.append(cst.SimpleStatementLine([cst.Return(value)]))
        function = cst.FunctionDef(
            name=cst.Name(plan.forward_name),
            params=cst.Parameters([cst.Param(cst.Name(p)) for p in plan.params]),
            body=cst.IndentedBlock(inner),
        )
        args = [
            cst.Arg(cst.Name(plan.forward_name)),
            cst.Arg(cst.Name("None")),
            cst.Arg(cst.Attribute(plan.optimizer.deep_clone(), cst.Name("parameters"))),
        ]
        if plan.aux:
            args.append(keyword_arg("has_aux", cst.Name("True")))
        grad = _assign(cst.Name(plan.grad_name), cst.Call(self.ctx.ref("mindspore.value_and_grad"), args))
        training = self._set_train(site, plan)
        return [*training, function, format_statement(grad, depth, self.rewriter.module)]

    def _loss_output(self, site, plan: StepPlan) -> cst.BaseExpression:
        if plan.loss_name is not None:
            return cst.Name(plan.loss_name)
        backward = _flatten(self.results[id(site.statements[plan.backward])])[0]
        return _call_of(backward).func.value

    def _gradient_call(self, site, plan: StepPlan, depth: int) -> cst.SimpleStatementLine:
        loss_name = plan.loss_name or ("loss" if "loss" not in site.scope.bound else "loss_value")
        if plan.aux:
            values = cst.Tuple([cst.Element(cst.Name(n)) for n in [loss_name, *plan.aux]])
        else:
            values = cst.Name(loss_name)
        target = cst.Tuple([cst.Element(values), cst.Element(cst.Name(self.grads_name))], **_NO_PARENS)
        call = cst.Call(cst.Name(plan.grad_name), [cst.Arg(cst.Name(p)) for p in plan.params])
        return format_statement(_assign(target, call), depth, self.rewriter.module)

    def _clip(self, site, plan: StepPlan, index: int, depth: int) -> cst.SimpleStatementLine:
        clip = plan.clips[index]
        limit = _call_of(_flatten(self.results[id(site.statements[index])])[0])
        limit = _clip_limit(limit, clip.kind)
        grads = cst.Name(self.grads_name)
        if clip.kind == "norm":
            call = cst.Call(self.ctx.ref("mindspore.ops.clip_by_global_norm"), [cst.Arg(grads), cst.Arg(limit)])
            api, message = "torch.nn.utils.clip_grad_norm_", "-> ops.clip_by_global_norm on the gradients"
        else:
            low = cst.UnaryOperation(cst.Minus(), _parenthesized(limit))
            call = cst.Call(self.ctx.ref("mindspore.ops.clip_by_value"), [cst.Arg(grads), cst.Arg(low), cst.Arg(limit)])
            api, message = "torch.nn.utils.clip_grad_value_", "-> ops.clip_by_value on the gradients"
        self.ctx.converted(site.statements[index], api, f"{api} {message}")
        statement = _assign(cst.Name(self.grads_name), call)
        original = site.statements[index]
        return format_statement(statement, depth, self.rewriter.module).with_changes(leading_lines=original.leading_lines)

    def _set_train(self, site, plan: StepPlan) -> list[cst.BaseStatement]:
        """A fresh MindSpore Cell is in eval mode, a fresh torch Module trains."""
        if _calls_method(site.scope.node, "train"):
            return []
        statements = []
        visible = site.scope.bound | self.ctx.analysis.bound_names
        for cell in self.kinds.trained_cells(plan.optimizer):
            root = cell
            while isinstance(root, cst.Attribute):
                root = root.value
            if not isinstance(root, cst.Name) or root.value not in visible:
                continue
            call = cst.Call(cst.Attribute(cell.deep_clone(), cst.Name("set_train")), [cst.Arg(cst.Name("True"))])
            statements.append(_expression(call))
        if not statements:
            self.ctx.warn(site.statements[plan.backward], "torch.nn.Module.train",
                          "MindSpore Cells start in eval mode: call set_train(True) on the trained network")
        return statements

    def _hoist(self, loop_result, prelude: list[cst.BaseStatement]):
        seen: set[str] = set()
        unique = []
        for statement in prelude:
            key = code_of(statement) if _is_set_train(statement) else str(id(statement))
            if key not in seen:
                seen.add(key)
                unique.append(statement)
        nodes = list(loop_result.nodes) if isinstance(loop_result, cst.FlattenSentinel) else [loop_result]
        first = nodes[0]
        unique[0] = unique[0].with_changes(leading_lines=first.leading_lines)
        nodes[0] = first.with_changes(leading_lines=[])
        return cst.FlattenSentinel([*unique, *nodes])




def _assign(target: cst.BaseAssignTargetExpression, value: cst.BaseExpression) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(target)], value)])


def _expression(call: cst.BaseExpression) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Expr(call)])


def _flatten(result) -> list[cst.BaseStatement]:
    if isinstance(result, cst.FlattenSentinel):
        return list(result.nodes)
    if isinstance(result, cst.RemovalSentinel):
        return []
    return [result]


def _call_of(statement) -> cst.Call:
    small = statement.body[0]
    return small.value


def _clip_limit(call: cst.Call, kind: str) -> cst.BaseExpression:
    keyword = "max_norm" if kind == "norm" else "clip_value"
    positional = [a.value for a in call.args if a.keyword is None]
    if len(positional) > 1:
        return positional[1]
    return next(a.value for a in call.args if a.keyword is not None and a.keyword.value == keyword)


def _parenthesized(expr: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(expr, (cst.Name, cst.Integer, cst.Float, cst.Attribute, cst.Call, cst.Subscript)):
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _calls_method(scope: cst.CSTNode, name: str) -> bool:
    body = scope.body.body if isinstance(scope, cst.FunctionDef) else getattr(scope, "body", ())
    if isinstance(body, cst.BaseSuite):
        body = body.body
    for statement in body:
        for call in names_of(statement).calls:
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == name:
                return True
    return False


def _is_set_train(statement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, cst.Call)
        and isinstance(statement.body[0].value.func, cst.Attribute)
        and statement.body[0].value.func.attr.value == "set_train"
    )


def _suffix(optimizer: cst.BaseExpression) -> str:
    last = code_of(optimizer).rsplit(".", 1)[-1]
    for prefix in ("optimizer", "optim", "opt"):
        if last.lower().startswith(prefix):
            last = last[len(prefix):]
            break
    last = last.strip("_").lower()
    return f"_{last}" if last.isidentifier() else ""


def _fresh(name: str, taken: set[str]) -> str:
    candidate, number = name, 2
    while candidate in taken:
        candidate, number = f"{name}{number}", number + 1
    taken.add(candidate)
    return candidate
