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

torch keeps gradients in the parameters between ``zero_grad()`` calls; when
several ``backward()`` calls feed one step (micro-steps, or a step taken every
few iterations) the MindSpore step sums them explicitly:

    (loss, logits), micro_grads = grad_fn(x, y)
    grads = micro_grads if grads is None else tuple(g + m for g, m in zip(grads, micro_grads))
    ...
    optimizer(grads)
    grads = None                          # optimizer.zero_grad() (or model.zero_grad())

With no ``zero_grad()`` anywhere in the file, torch sums the gradients of
every step, and so does the converted loop (the sum is never reset).

Clipping, ``scaler.unscale_``/``step``/``update`` (AMP, see ``amp.py``) and
``zero_grad()`` are rewritten where they stand, in the same function.
Planning (``step_plan``) reads the original tree when the traversal starts;
this module records the rewritten statements of the affected blocks as the
traversal leaves them and reassembles those blocks.
"""

from __future__ import annotations


import libcst as cst

from transpiler.convert.diagnostics import Outcome, Severity
from transpiler.convert.engine import code_of, keyword_arg
from transpiler.convert.formatting import format_statement
from transpiler.convert.markers import add_markers
from transpiler.convert.structural import amp, data_parallel, step_factories
from transpiler.convert.structural.fresh_names import fresh_name
from transpiler.convert.structural.provenance import provenance_of, remember_module
from transpiler.convert.structural.step_calls import BACKWARD_API, single_call
from transpiler.convert.structural.step_names import names_of
from transpiler.convert.structural import runtime_settings
from transpiler.convert.structural.step_plan import BlockSite, Planner, StepFailure, StepPlan, find_sites, forward_statements

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
        self.factories: dict[int, step_factories.Factory] = {}  # id(plan) -> its step's factory (--jit)
        self.fused: dict[int, str] = {}  # id(plan) -> the compiled train step holding the optimizer (--jit)
        self.module_preludes: dict[int, list[cst.BaseStatement]] = {}  # id(function) -> factories before it
        self.replacements: dict[int, object] = {}  # id(original statement) -> rewrite(result)
        self.planner: Planner | None = None
        self.reduction: str | None = None  # data_parallel.PLAIN / CONDITIONAL: the file wraps its model in DDP

    # -- planning, before the traversal ------------------------------------------
    def plan(self, module: cst.Module) -> None:
        remember_module(self.ctx, module)
        sites, functions = find_sites(module)
        if not sites:
            return
        provenance = provenance_of(self.ctx, module)
        self.planner = Planner(self.ctx.analysis, provenance, functions)
        self.reduction = data_parallel.reduction_of(self.ctx.analysis, module)
        self.parents = {key: parent for function in functions.values() for key, parent in function.parents.items()}
        all_plans: list[StepPlan] = []
        for site in sites:
            plans, failures = self.planner.plan(site)
            for failure in failures:
                self.failures.setdefault(id(failure.statement), []).append(failure)
                backward = self.planner.calls.backward(failure.statement)
                if backward is not None:
                    self.rewriter.handled.add(id(backward.call))  # the specific marker replaces the generic one
            if plans:
                self._register(site, plans)
                all_plans.extend(plans)
        self._name_functions(all_plans)
        if self.ctx.jit_steps and not self.ctx.project_pynative_only:
            self._plan_factories(sites, module)

    def _plan_factories(self, sites, module: cst.Module) -> None:
        """--jit: a step made at every call of its function is compiled once per object
        (step_factories); a step whose optimizer call follows its backward at once runs the
        optimizer inside the compiled step (``_fuses``)."""
        taken = set(self.ctx.analysis.bound_names)
        touches_lr = _touches_learning_rate(module)
        for site, plans in self.blocks.values():
            for plan in plans:
                compiled = plan.hoist is not None or (not site.loops and isinstance(plan.function, cst.Module))
                if not compiled:
                    found = step_factories.split(self.planner, site, plan, module)
                    if found is None:
                        continue
                    plan.params = found[1]
                fused = not touches_lr and self._fuses(site, plan) and not self._handed_on(plan.optimizer, module)
                if fused:
                    self.fused[id(plan)] = fresh_name("train_step", taken)
                if not compiled:
                    owner = plan.function.name.value
                    name = fresh_name(f"make_{owner}_step" if fused else f"{owner}_{plan.grad_name}", taken)
                    self.factories[id(plan)] = step_factories.Factory(name, found[0], plan.function)

    def _fuses(self, site: BlockSite, plan: StepPlan) -> bool:
        """The optimizer call can join the compiled step, as the migration guide's Trainer writes
        it (``@mindspore.jit def train_step(...): loss, grads = grad_fn(...); optimizer(grads)``):
        ``optimizer.step()`` right after ``loss.backward()`` with nothing between them to move
        (no clipping, loss scaling, gradient sum or reduction), and what runs after the gradient
        call runs no network and reads no trained network (it would see the updated parameters). Measured with MindSpore's
        queue thread no longer spinning (runtime_settings): nlp-tutorial's NNLM, TextRNN and
        TextCNN took 5.6-6.6 s inside against 8.5-9.9 s with the optimizer outside, 2,000 steps."""
        statements = site.statements
        if plan.step_scaler is not None or plan.clips or plan.unscales or plan.accumulate or plan.never_zeroed:
            return False
        if self.reduction is not None or plan.backward + 1 >= len(statements):
            return False
        if statements[plan.backward + 1] is not plan.step_statement or single_call(plan.step_statement)[0].args:
            return False
        trained = {code_of(cell) for cell in self.planner.trained_cells(plan.optimizer)}
        for index in plan.after:
            names = names_of(statements[index])
            if trained & set(names.reads):  # print(model.fc.weight.sum()): the weights before the update
                return False
            for call in names.calls:
                if self.planner.is_network(call.func) or (
                        isinstance(call.func, cst.Attribute) and call.func.attr.value in _PARAMETER_READS):
                    return False
        return True

    def _handed_on(self, optimizer: cst.BaseExpression, module: cst.Module) -> bool:
        """The optimizer is passed to a function of another file (``adjust_learning_rate(optimizer,
        epoch)`` in utils.py), which may write its learning rate: a float written into
        ``param_groups`` is not seen by a compiled step holding the optimizer (measured: the step
        kept the old rate), while the optimizer called outside it reads it."""
        text = code_of(optimizer)
        provenance = self.planner.provenance
        found = []

        class Calls(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                if any(code_of(arg.value) == text for arg in node.args) and provenance.function_called(node) is None:
                    found.append(node)

        module.visit(Calls())
        return bool(found)

    def _register(self, site: BlockSite, plans: list[StepPlan]) -> None:
        self.blocks[id(site.owner)] = (site, plans)
        self.tracked.update(id(s) for s in site.statements)
        handled = self.rewriter.handled
        for plan in plans:
            backward = site.statements[plan.backward]
            handled.add(id(single_call(backward)[0]))
            self._replace(plan.step_statement, plan, self._step)
            for statement in plan.zero_grads:
                self._replace(statement, plan, self._zero_grad)
            for statement in plan.unscales:
                self._replace(statement, plan, self._unscale)
            for statement in plan.updates:
                self._replace(statement, plan, self._update)
            for key in plan.clips:
                statement = next(s for s in self._statements_of(plan) if id(s) == key)
                self._replace(statement, plan, self._clip)
                self.ctx.consume(single_call(statement)[0].func)
            if plan.hoist is not None:
                self.hoisted.setdefault(id(plan.hoist), []).append(plan)

    def _statements_of(self, plan: StepPlan):
        return self.planner.functions[id(plan.function)].statements

    def _replace(self, statement, plan: StepPlan, rewrite) -> None:
        self.replacements[id(statement)] = (plan, rewrite)
        self.rewriter.handled.add(id(single_call(statement)[0]))
        self._make_visited(statement)

    def _make_visited(self, statement) -> None:
        """The traversal skips statements with nothing to convert: visit this one and its enclosing statements."""
        interesting = self.ctx.analysis.interesting
        node = statement
        while node is not None:
            interesting.add(id(node))
            node = self.parents.get(id(node))

    def _name_functions(self, plans: list[StepPlan]) -> None:
        taken = set(self.ctx.analysis.bound_names)
        accumulating = [p for p in plans if p.accumulate]
        grads = fresh_name("grads", set(taken))
        for plan in plans:
            suffix = "" if len(plans) == 1 else _suffix(plan.optimizer)
            plan.forward_name = fresh_name(f"forward_fn{suffix}", taken)
            plan.grad_name = fresh_name(f"grad_fn{suffix}", taken)
            plan.grads_name = grads
            if plan.accumulate and len(accumulating) > 1:
                plan.grads_name = fresh_name(f"grads{suffix}", taken)
        self.micro_grads_name = fresh_name("micro_grads", taken)
        self.finite_name = fresh_name("grads_finite", taken)
        self.reducer_name = fresh_name("grad_reducer", taken)
        unscaled = fresh_name("grads_unscaled", taken)
        for plan in plans:
            if plan.unscale_flag is not None:
                plan.unscale_flag = unscaled

    # -- during the traversal --------------------------------------------------
    def leave(self, original: cst.CSTNode, result):
        key = id(original)
        if key in self.failures:
            result = self._mark(original, result, self.failures.pop(key))
        if key in self.replacements:
            plan, rewrite = self.replacements.pop(key)
            result = rewrite(original, result, plan)
            self.rewriter.changed()
        if key in self.tracked:
            self.results[key] = result
        if key in self.blocks:
            result = self._rebuild(original, result, *self.blocks[key])
        if key in self.hoisted and key in self.preludes:
            result = self._hoist(result, self.preludes.pop(key))
        if key in self.module_preludes:
            result = cst.FlattenSentinel([*self.module_preludes.pop(key), *_flatten(result)])
        return result

    def _mark(self, original, result, failures: list[StepFailure]):
        texts = []
        for failure in failures:
            text = f"{failure.api}: {failure.reason}"
            self.ctx.report(original, failure.api, Severity.MARKER, text, Outcome.MARKED)
            texts.append(text)
        return add_markers(result, texts)

    # -- statements rewritten where they stand ---------------------------------------
    def _depth(self) -> int:
        return self.rewriter.depth

    def _format(self, statement, original) -> cst.SimpleStatementLine:
        formatted = format_statement(statement, self._depth(), self.rewriter.module)
        lines = original.leading_lines if hasattr(original, "leading_lines") else ()
        return formatted.with_changes(leading_lines=lines)

    def _step(self, original, result, plan: StepPlan):
        if id(plan) in self.fused:
            self.ctx.converted(original, "torch.optim.Optimizer.step",
                               f"optimizer.step() -> optimizer(grads) inside the compiled {self.fused[id(plan)]}")
            return self.rewriter.placeholders.make(result)
        grads = cst.Name(plan.grads_name)
        update = _expression(cst.Call(plan.optimizer.deep_clone(), [cst.Arg(grads)]))
        if plan.step_scaler is None:
            self.ctx.converted(original, "torch.optim.Optimizer.step", "optimizer.step() -> optimizer(grads)" + (
                "; no zero_grad() in the file: the gradients are summed over every step, as torch does"
                if plan.never_zeroed else ""))
            statements = [update]
            if plan.accumulate and not plan.zero_grads and not plan.never_zeroed:
                # zero_grad() is elsewhere in the file (another method): the next step starts a new sum
                statements.append(_assign(cst.Name(plan.grads_name), cst.Name("None")))
            return self._statements(statements, original)
        self.ctx.converted(original, "torch.amp.GradScaler.step",
                           "scaler.step(optimizer) -> optimizer(grads) when mindspore.amp.all_finite(grads)")
        statements = []
        if not plan.unscales:
            statements.append(self._unscale_statement(plan))
        elif plan.unscale_flag is not None:  # torch's scaler.step() unscales gradients nothing unscaled
            not_yet = cst.UnaryOperation(cst.Not(), cst.Name(plan.unscale_flag))
            statements.append(cst.If(test=not_yet, body=cst.IndentedBlock([self._unscale_statement(plan)])))
        finite = cst.Name(self.finite_name)
        check = cst.Call(self.ctx.ref("mindspore.amp.all_finite"), [cst.Arg(grads)])
        statements.append(_assign(finite, check))
        statements.append(cst.If(test=cst.Name(self.finite_name), body=cst.IndentedBlock([update])))
        return self._statements(statements, original)

    def _statements(self, statements, original):
        nodes = []
        for index, statement in enumerate(statements):
            if isinstance(statement, cst.SimpleStatementLine):
                statement = format_statement(statement, self._depth(), self.rewriter.module)
            if index == 0 and hasattr(original, "leading_lines"):
                statement = statement.with_changes(leading_lines=original.leading_lines)
            nodes.append(statement)
        return cst.FlattenSentinel(nodes) if len(nodes) > 1 else nodes[0]

    def _zero_grad(self, original, result, plan: StepPlan):
        if plan.accumulate:
            self.ctx.converted(original, "torch.optim.Optimizer.zero_grad",
                               "zero_grad() -> the summed gradients start again")
            return self._format(_assign(cst.Name(plan.grads_name), cst.Name("None")), original)
        self.ctx.converted(original, "torch.optim.Optimizer.zero_grad",
                           "zero_grad() removed: MindSpore computes fresh gradients every step")
        return self.rewriter.placeholders.make(result)

    def _unscale_statement(self, plan: StepPlan) -> cst.SimpleStatementLine:
        grads = cst.Name(plan.grads_name)
        unscale = cst.Call(cst.Attribute(plan.step_scaler.deep_clone(), cst.Name("unscale")), [cst.Arg(grads)])
        return _assign(cst.Name(plan.grads_name), unscale)

    def _unscale(self, original, result, plan: StepPlan):
        self.ctx.converted(original, "torch.amp.GradScaler.unscale_", "scaler.unscale_(optimizer) -> "
                                                                       "grads = scaler.unscale(grads)")
        unscale = self._format(self._unscale_statement(plan), original)
        if plan.unscale_flag is None:
            return unscale
        flag = format_statement(_assign(cst.Name(plan.unscale_flag), cst.Name("True")), self._depth(),
                                self.rewriter.module)
        return cst.FlattenSentinel([unscale, flag])

    def _update(self, original, result, plan: StepPlan):
        self.ctx.converted(original, "torch.amp.GradScaler.update",
                           "scaler.update() -> scaler.adjust(grads_finite): the loss scale follows the finite check")
        adjust = cst.Call(cst.Attribute(plan.step_scaler.deep_clone(), cst.Name("adjust")),
                          [cst.Arg(cst.Name(self.finite_name))])
        return self._format(_expression(adjust), original)

    def _clip(self, original, result, plan: StepPlan):
        clip = plan.clips[id(original)]
        limit = _clip_limit(single_call(_flatten(result)[0])[0], clip.kind)
        grads = cst.Name(plan.grads_name)
        if clip.kind == "norm":
            call = cst.Call(self.ctx.ref("mindspore.ops.clip_by_global_norm"), [cst.Arg(grads), cst.Arg(limit)])
            api, message = "torch.nn.utils.clip_grad_norm_", "-> ops.clip_by_global_norm on the gradients"
        else:
            low = cst.UnaryOperation(cst.Minus(), _parenthesized(limit))
            call = cst.Call(self.ctx.ref("mindspore.ops.clip_by_value"), [cst.Arg(grads), cst.Arg(low), cst.Arg(limit)])
            api, message = "torch.nn.utils.clip_grad_value_", "-> ops.clip_by_value on the gradients"
        self.ctx.converted(original, api, f"{api} {message}")
        return self._format(_assign(cst.Name(plan.grads_name), call), original)

    # -- reassembling a block --------------------------------------------------------
    def _rebuild(self, original, result, site: BlockSite, plans: list[StepPlan]):
        statements = site.statements
        calls = self.planner.calls
        zero_grads = {i for i, s in enumerate(statements) if calls.zero_grad(s) is not None}
        placeholders = self.rewriter.placeholders
        depth = self.rewriter.depth + (1 if isinstance(original, cst.IndentedBlock) else 0)
        body: list[cst.BaseStatement] = []

        def emit(index: int) -> None:
            body.extend(_flatten(self.results[id(statements[index])]))

        position = 0
        for plan in plans:
            while position < plan.region_start:
                emit(position)
                position += 1
            for index in range(plan.region_start, plan.backward):
                if index in zero_grads:
                    emit(index)  # rewritten where it stands; its comments move on
            for index in plan.before:
                emit(index)
            for index in plan.exits:  # the branch that ends the iteration, before the step
                body.extend(s.with_changes(orelse=None) if isinstance(s, cst.If) else s
                            for s in _flatten(self.results[id(statements[index])]))
            definitions = self._definitions(site, plan, depth)
            if plan.hoist is None:
                body.extend(definitions)
            else:
                self.preludes.setdefault(id(plan.hoist), []).extend(definitions)
            body.append(placeholders.make(self.results[id(statements[plan.backward])]))
            body.extend(self._gradient_call(site, plan, depth))
            for index in plan.after:
                emit(index)
            self.ctx.converted(statements[plan.backward], BACKWARD_API,
                               f"training step -> {plan.forward_name} + mindspore.value_and_grad + optimizer(grads)")
            runtime_settings.ask(self.ctx, compiled=plan.forward_name in self.ctx.jit_functions)
            position = plan.backward + 1
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
                if index in plan.exits and isinstance(statement, cst.If):
                    inner.extend(forward_statements(statement, True))  # the else branch
                    continue
                inner.append(statement.deep_clone() if index in plan.recomputed else statement)
        inner = self.rewriter.placeholders.compact(inner)
        outputs = [self._loss_output(site, plan), *(_name_expression(n) for n in plan.aux)]
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
        grad_call = cst.Call(self.ctx.ref("mindspore.value_and_grad"), args)
        # convert --jit: the step runs as one compiled graph. As the migration guide's Trainer writes
        # it, ``@mindspore.jit def train_step`` calling grad_fn and the optimizer, where the optimizer
        # call follows the backward at once (``_fuses``); else grad_fn = mindspore.jit(
        # mindspore.value_and_grad(...)) with the optimizer outside. Measured on CPU
        # (benchmarks/README.md): a step several times faster than PyNative after seconds of
        # compilation. Off by default: the forward function must then compile in graph mode. Only
        # where the step is made once: defined before the loop, in the module's own body, or, for a
        # step function called once a batch (``def train(model, loss, optimizer, x, y)``), by a
        # cached factory closed over the objects (step_factories; made in the function, it compiled
        # a new graph at every call: a softmax regression's 1800 steps ran over 3 minutes, measured).
        factory = self.factories.get(id(plan))
        step_name = self.fused.get(id(plan))
        if self.ctx.jit_steps and self.ctx.project_pynative_only:
            self.ctx.warn(site.statements[plan.backward], BACKWARD_API,
                          "convert --jit: the step is left uncompiled: graph mode cannot compile "
                          f"{'; '.join(sorted(self.ctx.project_pynative_only))}, which this file reaches; "
                          "the step runs in PyNative")
        elif self.ctx.jit_steps:
            if plan.hoist is not None or (not site.loops and isinstance(plan.function, cst.Module)) or factory:
                if step_name is None:
                    grad_call = cst.Call(self.ctx.ref("mindspore.jit"), [cst.Arg(grad_call)])
                self.ctx.jit_functions.add(plan.forward_name)
            else:
                self.ctx.warn(site.statements[plan.backward], BACKWARD_API,
                              "convert --jit: this step's gradient function is made at every call of "
                              "its function, from objects made there or not known to be networks, losses "
                              "or optimizers; compiled, each call would compile again: left uncompiled "
                              "(define forward_fn and grad_fn once, outside the function, then wrap "
                              "grad_fn in mindspore.jit)")
        setup = [self._formatted(statement, depth)
                 for statement in (*self._set_train(site, plan), *self._mixed_precision(site, plan))]
        grad = _assign(cst.Name(plan.grad_name), grad_call)
        made = [function, grad] if step_name is None else [function, grad, self._train_step(site, plan, step_name)]
        if factory is None:
            definitions = [*setup, *(format_statement(m, depth, self.rewriter.module)
                                     if isinstance(m, cst.SimpleStatementLine) else m for m in made)]
        else:  # the factory returns the compiled step (or gradient function)
            returned = [cst.Return(cst.Name(step_name))] if step_name is not None else [cst.Return(grad_call)]
            body = [*(made if step_name is not None else [function]), cst.SimpleStatementLine(returned)]
            body = [format_statement(b, 1, self.rewriter.module) if isinstance(b, cst.SimpleStatementLine) else b
                    for b in body]
            definition = step_factories.definition(factory, body, self.ctx.ref("functools.cache"))
            self.module_preludes.setdefault(id(plan.function), []).append(definition)
            local = step_name if step_name is not None else plan.grad_name
            definitions = [*setup, format_statement(step_factories.made(factory, local), depth, self.rewriter.module)]
        if self.reduction is not None:
            reducer = data_parallel.reducer_definition(self.ctx, self.reducer_name, plan.optimizer, self.reduction)
            definitions.append(format_statement(reducer, depth, self.rewriter.module))
        if plan.accumulate:
            definitions.append(_assign(cst.Name(plan.grads_name), cst.Name("None")))
        return definitions

    def _formatted(self, statement, depth: int):
        if isinstance(statement, cst.If):  # black formats the lines of its body
            body = [self._formatted(inner, depth + 1) for inner in statement.body.body]
            return statement.with_changes(body=statement.body.with_changes(body=body))
        return format_statement(statement, depth, self.rewriter.module)

    def _loss_output(self, site, plan: StepPlan) -> cst.BaseExpression:
        backward = _flatten(self.results[id(site.statements[plan.backward])])[0]
        receiver = single_call(backward)[0].func.value  # loss, or scaler.scale(loss)
        if plan.loss_name is not None and plan.scaler is None:
            return _name_expression(plan.loss_name)
        return receiver

    def _train_step(self, site, plan: StepPlan, name: str) -> cst.FunctionDef:
        """``@mindspore.jit def train_step(x, y): loss, grads = grad_fn(x, y); optimizer(grads); return loss``"""
        values = self._values(site, plan)
        target = cst.Tuple([cst.Element(values), cst.Element(cst.Name(plan.grads_name))], **_NO_PARENS)
        call = cst.Call(cst.Name(plan.grad_name), [cst.Arg(cst.Name(p)) for p in plan.params])
        update = _expression(cst.Call(plan.optimizer.deep_clone(), [cst.Arg(cst.Name(plan.grads_name))]))
        returned = values.with_changes(lpar=[], rpar=[]) if isinstance(values, cst.Tuple) else values
        body = [_assign(target, call), update, cst.SimpleStatementLine([cst.Return(returned.deep_clone())])]
        return cst.FunctionDef(
            name=cst.Name(name),
            params=cst.Parameters([cst.Param(cst.Name(p)) for p in plan.params]),
            body=cst.IndentedBlock(body),
            decorators=[cst.Decorator(self.ctx.ref("mindspore.jit"))],
            leading_lines=[cst.EmptyLine(indent=False)],
        )

    def _values(self, site, plan: StepPlan) -> cst.BaseExpression:
        """What the gradient call gives besides the gradients: the loss (and the auxiliary values)."""
        if plan.loss_name is not None and plan.scaler is None:
            first = _name_expression(plan.loss_name)
        elif plan.scaler is not None:
            first = cst.Name("scaled_loss" if "scaled_loss" not in site.scope.bound else "_")
        else:
            first = cst.Name("loss" if "loss" not in site.scope.bound else "loss_value")
        return cst.Tuple([cst.Element(e) for e in [first, *map(_name_expression, plan.aux)]]) if plan.aux else first

    def _gradient_call(self, site, plan: StepPlan, depth: int) -> list[cst.SimpleStatementLine]:
        values = self._values(site, plan)
        step_name = self.fused.get(id(plan))
        if step_name is not None:  # the compiled step updates the parameters too
            call = cst.Call(cst.Name(step_name), [cst.Arg(cst.Name(p)) for p in plan.params])
            return [format_statement(_assign(values, call), depth, self.rewriter.module)]
        grads = self.micro_grads_name if plan.accumulate else plan.grads_name
        target = cst.Tuple([cst.Element(values), cst.Element(cst.Name(grads))], **_NO_PARENS)
        call = cst.Call(cst.Name(plan.grad_name), [cst.Arg(cst.Name(p)) for p in plan.params])
        lines = [format_statement(_assign(target, call), depth, self.rewriter.module)]
        if self.reduction is not None:  # DistributedDataParallel averages the gradients over the ranks
            lines.append(format_statement(data_parallel.reduce_statement(self.reducer_name, grads), depth,
                                          self.rewriter.module))
        if plan.accumulate:
            lines.append(format_statement(_accumulate(plan.grads_name, self.micro_grads_name), depth,
                                          self.rewriter.module))
        if plan.unscale_flag is not None:  # fresh (scaled) gradients
            lines.append(format_statement(_assign(cst.Name(plan.unscale_flag), cst.Name("False")), depth,
                                          self.rewriter.module))
        return lines

    def _set_train(self, site, plan: StepPlan) -> list[cst.BaseStatement]:
        """A fresh MindSpore Cell is in eval mode, a fresh torch Module trains."""
        if _calls_method(site.scope.node, "train"):
            return []
        statements = []
        cells = self.planner.trained_cells(plan.optimizer) or [c for c in plan.cells if _is_variable(c)]
        for cell in cells:
            if not self._visible(site, cell):
                continue
            call = cst.Call(cst.Attribute(cell.deep_clone(), cst.Name("set_train")), [cst.Arg(cst.Name("True"))])
            statements.append(_expression(call))
        if not statements:
            self.ctx.warn(site.statements[plan.backward], "torch.nn.Module.train",
                          "MindSpore Cells start in eval mode: call set_train(True) on the trained network")
        return statements

    def _visible(self, site, cell: cst.BaseExpression) -> bool:
        root = cell
        while isinstance(root, cst.Attribute):
            root = root.value
        visible = site.scope.bound | self.ctx.analysis.bound_names
        return isinstance(root, cst.Name) and (root.value in visible or root.value == "self")

    def _mixed_precision(self, site, plan: StepPlan) -> list[cst.BaseStatement]:
        """Mixed precision on the networks an autocast context wraps in the forward pass."""
        provenance = self.planner.provenance
        statements = []
        for index in plan.forward:
            for item in _with_items(site.statements[index]):
                settings = amp.autocast_of(item.item, self.ctx.analysis, provenance)
                if settings is None or amp.is_off(settings):
                    continue
                cells = [cell for cell in self._cells_inside(site.statements[index]) if _is_variable(cell)]
                if not cells:
                    self.ctx.warn(item.item, "torch.autocast",
                                  "no network of this file runs inside the autocast context: the step runs in "
                                  "float32; set mindspore.amp.auto_mixed_precision on the network by hand")
                for cell in cells:
                    convert = lambda expr: amp.convert_dtype(expr, self.ctx)  # noqa: E731
                    statements.append(amp.mixed_precision(cell, settings, self.ctx, convert))
                    self.ctx.converted(item.item, "torch.autocast",
                                       f"autocast -> mindspore.amp.auto_mixed_precision on {code_of(cell)}")
        return statements

    def _cells_inside(self, statement) -> list[cst.BaseExpression]:
        found: dict[str, cst.BaseExpression] = {}
        for call in names_of(statement).calls:
            if self.planner.is_network(call.func):
                found.setdefault(code_of(call.func), call.func)
        return list(found.values())

    def _hoist(self, loop_result, prelude: list[cst.BaseStatement]):
        seen: set[str] = set()
        unique = []
        for statement in prelude:
            key = code_of(statement) if _is_setup(statement) or _mixed_precision_block(statement) else str(id(statement))
            if key not in seen:
                seen.add(key)
                unique.append(statement)
        nodes = list(loop_result.nodes) if isinstance(loop_result, cst.FlattenSentinel) else [loop_result]
        first = nodes[0]
        unique[0] = unique[0].with_changes(leading_lines=first.leading_lines)
        nodes[0] = first.with_changes(leading_lines=[])
        return cst.FlattenSentinel([*unique, *nodes])


# calls after the gradient call that read the parameters: they must run before the update
_PARAMETER_READS = frozenset({"parameters", "named_parameters", "state_dict", "trainable_params", "get_parameters"})


def _touches_learning_rate(module: cst.Module) -> bool:
    """The file sets learning rates as it trains (``param_groups``, an lr scheduler): a compiled
    step holding the optimizer would not be shown to follow them, so the optimizer stays outside."""
    found = []

    class Reads(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            if node.attr.value in ("param_groups", "lr_scheduler"):
                found.append(node)

        def visit_Name(self, node: cst.Name) -> None:
            if node.value == "lr_scheduler":
                found.append(node)

    module.visit(Reads())
    return bool(found)


def _accumulate(total: str, micro: str) -> cst.SimpleStatementLine:
    """``grads = micro_grads if grads is None else tuple(g + m for g, m in zip(grads, micro_grads))``"""
    pairs = cst.GeneratorExp(
        cst.BinaryOperation(cst.Name("g"), cst.Add(), cst.Name("m")),
        cst.CompFor(
            target=cst.Tuple([cst.Element(cst.Name("g")), cst.Element(cst.Name("m"))], **_NO_PARENS),
            iter=cst.Call(cst.Name("zip"), [cst.Arg(cst.Name(total)), cst.Arg(cst.Name(micro))]),
        ),
        **_NO_PARENS,
    )
    summed = cst.Call(cst.Name("tuple"), [cst.Arg(pairs)])
    is_none = cst.Comparison(cst.Name(total), [cst.ComparisonTarget(cst.Is(), cst.Name("None"))])
    return _assign(cst.Name(total), cst.IfExp(test=is_none, body=cst.Name(micro), orelse=summed))


def _name_expression(name: str) -> cst.BaseExpression:
    if "." in name:
        return cst.parse_expression(name)
    return cst.Name(name)


def _is_variable(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) or (isinstance(expr, cst.Attribute) and _is_variable(expr.value))


def _with_items(statement):
    if isinstance(statement, cst.With):
        return statement.items
    return ()


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


def _is_setup(statement) -> bool:
    """set_train(True) / auto_mixed_precision lines: emitted once per loop even when several steps need them."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    small = statement.body[0]
    value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
    if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Attribute):
        return False
    return value.func.attr.value in ("set_train", "auto_mixed_precision")


def _mixed_precision_block(statement) -> bool:
    return isinstance(statement, cst.If) and "auto_mixed_precision" in code_of(statement)


def _suffix(optimizer: cst.BaseExpression) -> str:
    last = code_of(optimizer).rsplit(".", 1)[-1]
    for prefix in ("optimizer", "optim", "opt"):
        if last.lower().startswith(prefix):
            last = last[len(prefix):]
            break
    last = last.strip("_").lower()
    return f"_{last}" if last.isidentifier() else ""

