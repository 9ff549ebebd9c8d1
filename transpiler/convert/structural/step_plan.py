"""Finding torch training steps in a file and planning their MindSpore form.

A training step is a ``backward()`` (``loss.backward()``, or
``scaler.scale(loss).backward()`` with AMP) and the ``optimizer.step()``
(or ``scaler.step(optimizer)``) that consumes its gradients. The step is
looked for after the backward in the same block, inside an ``if`` there (a
step taken every few iterations: gradient accumulation), or after the loop
that holds the backward (micro-steps: gradient accumulation). The plan says
which statements of the backward's block compute the loss (they move into a
forward function), which run before or after the gradient call, what the
forward function takes and returns, and which statements elsewhere change:
clipping, ``unscale_``, the step, ``scaler.update()`` and ``zero_grad()``.
Planning reads only the original tree; applying the plan
(``training_loop.py``) uses the rewritten statements.

Patterns that cannot be rewritten faithfully produce a ``StepFailure`` naming
the pattern; the statement gets a marker and keeps its torch form.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import libcst as cst

from rewrite_rules.tensor.methods_data import SHARED_TENSOR_METHODS, TORCH_ONLY_TENSOR_METHODS
from transpiler.convert.engine import code_of
from transpiler.convert.structural.provenance import CELL, LAYER, OPTIMIZER, WRAPPER, Provenance
from transpiler.convert.structural.step_calls import BACKWARD_API, Backward, Clip, Step, StepCalls, method_statement
from transpiler.convert.structural.step_names import StatementNames, free_names, is_builtin, names_of

TENSOR_METHODS = TORCH_ONLY_TENSOR_METHODS | SHARED_TENSOR_METHODS
_LOOPS = (cst.For, cst.While)


@dataclass
class StepFailure:
    statement: cst.CSTNode  # where the marker goes
    api: str
    reason: str


@dataclass
class StepPlan:
    optimizer: cst.BaseExpression
    backward: int  # index of the backward statement in its block
    step_statement: cst.CSTNode  # the statement holding the step (anywhere in the function)
    region_start: int
    loss: cst.BaseExpression  # what backward() differentiates (unscaled)
    loss_name: str | None  # the name (or ``self.attr``) bound to the loss
    forward: list[int]  # own statements moved into the forward function
    recomputed: list[int]  # earlier statements recomputed (graph shared with an earlier step)
    before: list[int]  # region statements that run before the gradient call
    after: list[int]  # region statements that run after it
    scaler: cst.BaseExpression | None = None  # GradScaler of scaler.scale(loss).backward()
    accumulate: bool = False  # gradients summed over several backward() calls before the step
    clips: dict[int, Clip] = field(default_factory=dict)  # id(statement) -> clip
    unscales: list[cst.CSTNode] = field(default_factory=list)  # scaler.unscale_(optimizer) statements
    updates: list[cst.CSTNode] = field(default_factory=list)  # scaler.update() statements
    zero_grads: list[cst.CSTNode] = field(default_factory=list)  # zero_grad() of this optimizer or its Cells
    never_zeroed: bool = False  # no zero_grad() anywhere in the file: torch sums the gradients of every step
    unscale_flag: str | None = None  # unscale_() only on some paths: scaler.step() unscales when it did not run
    step_scaler: cst.BaseExpression | None = None  # scaler in scaler.step(optimizer)
    params: list[str] = field(default_factory=list)
    aux: list[str] = field(default_factory=list)
    cells: list[cst.BaseExpression] = field(default_factory=list)  # the Cells the forward pass runs
    hoist: cst.CSTNode | None = None  # the loop the forward function is defined before
    function: cst.CSTNode | None = None  # the function (or module) holding the step
    # forward statements that are an ``if`` whose body ends the iteration (``continue``/``break``, glow's
    # data-dependent init at i == 0): that branch runs before the gradient call, the else branch is the forward's
    exits: list[int] = field(default_factory=list)
    forward_name: str = "forward_fn"
    grad_name: str = "grad_fn"
    grads_name: str = "grads"


@dataclass
class Scope:
    node: cst.CSTNode  # Module or FunctionDef
    params: frozenset[str] = frozenset()
    _reads: Counter | None = None
    _bound: set[str] | None = None

    def _collect(self):
        body = self.node.body.body if isinstance(self.node, cst.FunctionDef) else self.node.body
        reads: Counter = Counter()
        bound: set[str] = set(self.params)
        for statement in body:
            names = names_of(statement)
            reads.update(names.reads)
            bound |= names.bound
        self._reads, self._bound = reads, bound

    @property
    def reads(self) -> Counter:
        if self._reads is None:
            self._collect()
        return self._reads

    @property
    def bound(self) -> set[str]:
        if self._bound is None:
            self._collect()
        return self._bound


@dataclass
class Level:
    """One enclosing block of a block: its statements and the compound statement (at ``index``) that holds it."""

    statements: tuple
    index: int
    compound: cst.CSTNode


@dataclass
class BlockSite:
    owner: cst.CSTNode  # IndentedBlock or Module holding the statements
    statements: tuple
    loops: list[cst.CSTNode]  # enclosing loops in the same function, outermost first
    scope: Scope
    chain: list[Level] = field(default_factory=list)  # enclosing blocks in the function, innermost first
    order: dict[int, int] = field(default_factory=dict)  # id(statement) -> position in the function


# -- walking the file --------------------------------------------------------------
class _Function:
    """Statements of one function (or the module body) in document order."""

    def __init__(self):
        self.order: dict[int, int] = {}
        self.statements: list[cst.CSTNode] = []
        self.parents: dict[int, cst.CSTNode] = {}

    def add(self, statement, parent) -> None:
        self.order[id(statement)] = len(self.statements)
        self.statements.append(statement)
        if parent is not None:
            self.parents[id(statement)] = parent


def find_sites(module: cst.Module) -> tuple[list[BlockSite], dict[int, _Function]]:
    """Blocks holding a ``.backward()`` statement; the statement order of every function."""
    sites: list[BlockSite] = []
    functions: dict[int, _Function] = {}
    top = _Function()
    functions[id(module)] = top
    _walk_block(module, module.body, [], Scope(module), sites, [], top, None, functions)
    return sites, functions


def _walk_block(owner, statements, loops, scope, sites, chain, function, parent, functions) -> None:
    if any(method_statement(s, "backward") is not None for s in statements):
        sites.append(BlockSite(owner, tuple(statements), list(loops), scope, list(chain), function.order))
    statements = tuple(statements)
    for index, statement in enumerate(statements):
        function.add(statement, parent)  # document order: a statement, then what it holds
        level = [Level(statements, index, statement), *chain]
        if isinstance(statement, cst.FunctionDef):
            params = frozenset(p.name.value for p in _all_params(statement.params))
            inner = _Function()
            functions[id(statement)] = inner
            _walk_suite(statement.body, [], Scope(statement, params), sites, [], inner, statement, functions)
        elif isinstance(statement, cst.ClassDef):
            _walk_suite(statement.body, [], Scope(statement), sites, [], function, statement, functions)
        elif isinstance(statement, _LOOPS):
            _walk_suite(statement.body, [*loops, statement], scope, sites, level, function, statement, functions)
            if statement.orelse is not None:
                _walk_suite(statement.orelse.body, loops, scope, sites, level, function, statement, functions)
        elif isinstance(statement, cst.If):
            _walk_suite(statement.body, loops, scope, sites, level, function, statement, functions)
            orelse = statement.orelse
            while orelse is not None:
                _walk_suite(orelse.body, loops, scope, sites, level, function, statement, functions)
                orelse = orelse.orelse if isinstance(orelse, cst.If) else None
        elif isinstance(statement, cst.With):
            _walk_suite(statement.body, loops, scope, sites, level, function, statement, functions)
        elif isinstance(statement, cst.Try):
            _walk_suite(statement.body, loops, scope, sites, level, function, statement, functions)
            for handler in statement.handlers:
                _walk_suite(handler.body, loops, scope, sites, level, function, statement, functions)
            for extra in (statement.orelse, statement.finalbody):
                if extra is not None:
                    _walk_suite(extra.body, loops, scope, sites, level, function, statement, functions)


def _walk_suite(suite, loops, scope, sites, chain, function, parent, functions) -> None:
    if isinstance(suite, cst.IndentedBlock):
        _walk_block(suite, suite.body, loops, scope, sites, chain, function, parent, functions)


def _all_params(params: cst.Parameters):
    result = [*params.posonly_params, *params.params, *params.kwonly_params]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            result.append(star)
    return result


@dataclass
class _Pairing:
    backward: int
    step: Step
    statement: cst.CSTNode  # the statement holding the step
    accumulate: bool


# -- planning one block ----------------------------------------------------------
class Planner:
    def __init__(self, analysis, provenance: Provenance, functions: dict[int, _Function]):
        self.analysis = analysis
        self.provenance = provenance
        self.calls = StepCalls(analysis, provenance)
        self.functions = functions

    def plan(self, site: BlockSite) -> tuple[list[StepPlan], list[StepFailure]]:
        statements = site.statements
        names = [self._with_method_bindings(names_of(s), site) for s in statements]
        pairs, failures = self._pairs(site)
        if failures:
            return [], failures
        zero_grads = {i for i, s in enumerate(statements) if self.calls.zero_grad(s) is not None}
        plans: list[StepPlan] = []
        previous_step = -1
        for pairing in pairs:
            cells = {code_of(c) for c in self.trained_cells(pairing.step.optimizer)}
            # earlier statements are recomputed only when they run the Cells this step trains
            dependent = self._param_dependent(statements, names, cells)
            plan = self._plan_step(site, names, dependent, zero_grads, previous_step, pairing)
            if isinstance(plan, StepFailure):
                failures = [plan]
                if plan.statement is not statements[pairing.backward]:
                    failures.append(StepFailure(statements[pairing.backward], BACKWARD_API,
                                                f"training step not rewritten: {plan.reason}"))
                return [], failures
            plans.append(plan)
            if pairing.statement in statements:
                previous_step = statements.index(pairing.statement)
        for plan in plans:
            others = {p for other in plans if other is not plan for p in other.params}
            plan.aux = self._aux(site, names, plan, others)
        return plans, []

    def _with_method_bindings(self, names: StatementNames, site: BlockSite) -> StatementNames:
        """A trainer's step spread over methods: ``self.training_step(batch)`` binds the
        ``self.`` attributes the method assigns (``self.loss``)."""
        for call in names.calls:
            func = call.func
            if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"):
                continue
            method = self.provenance.method(site.scope.node, func.attr.value)
            if method is None:
                continue
            for name in names_of(method.body).bound_order:
                if name.startswith("self.") and name not in names.bound:
                    names.bound.add(name)
                    names.bound_order.append(name)
        return names

    def trained_cells(self, optimizer: cst.BaseExpression) -> list[cst.BaseExpression]:
        """``model`` in ``torch.optim.X(model.parameters(), ...)``, where the optimizer was made."""
        origin = self.provenance.origin(optimizer)
        if origin is None or origin.kind != OPTIMIZER or origin.call is None:
            return []
        found: dict[str, cst.BaseExpression] = {}
        for call in names_of(origin.call).calls:
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "parameters":
                found.setdefault(code_of(call.func.value), call.func.value)
        return list(found.values())

    # which backward goes with which step --------------------------------------
    def _pairs(self, site: BlockSite):
        statements = site.statements
        pairs: list[_Pairing] = []
        failures: list[StepFailure] = []
        pending: int | None = None
        for index, statement in enumerate(statements):
            backward = self.calls.backward(statement)
            if backward is not None:
                problem = self._backward_problem(backward)
                if problem:
                    failures.append(StepFailure(statement, BACKWARD_API, problem))
                    continue
                if pending is not None:
                    failures.append(StepFailure(statement, BACKWARD_API, _ACCUMULATION_SEVERAL))
                pending = index
                continue
            plain_step = method_statement(statement, "step")
            if plain_step is not None and plain_step.args and self.calls.is_optimizer(plain_step.func.value):
                failures.append(StepFailure(statement, "torch.optim.Optimizer.step",
                                            "optimizer.step(closure) (closure-driven optimizers such as LBFGS) "
                                            "cannot be rewritten automatically"))
                pending = None
                continue
            step = self.calls.step(statement)
            if step is not None:
                if pending is not None:
                    pairs.append(_Pairing(pending, step, statement, False))
                pending = None
                continue
            if pending is not None and plain_step is not None and not plain_step.args:
                failures.append(StepFailure(statements[pending], BACKWARD_API, _unknown_optimizer(plain_step)))
                pending = None
                continue
            if pending is not None:
                nested = self._nested_step(statement)
                if nested is not None:
                    pairs.append(_Pairing(pending, nested[0], nested[1], True))  # stepped every few iterations
                    pending = None
        if pending is not None:
            outer = self._outer_step(site)
            if isinstance(outer, StepFailure):
                failures.append(StepFailure(statements[pending], BACKWARD_API, outer.reason))
            else:
                step, statement, crossed_loop = outer
                pairs.append(_Pairing(pending, step, statement, crossed_loop))
        return pairs, failures

    def _nested_step(self, statement) -> tuple[Step, cst.CSTNode] | None:
        """A step inside an ``if`` (or ``with``) statement: ``if (i + 1) % k == 0: optimizer.step()``."""
        if not isinstance(statement, (cst.If, cst.With)):
            return None
        blocks = [statement.body]
        if isinstance(statement, cst.If):
            orelse = statement.orelse
            while orelse is not None:
                blocks.append(orelse.body)
                orelse = orelse.orelse if isinstance(orelse, cst.If) else None
        for block in blocks:
            if not isinstance(block, cst.IndentedBlock):
                continue
            for inner in block.body:
                step = self.calls.step(inner)
                if step is not None:
                    return step, inner
                nested = self._nested_step(inner)
                if nested is not None:
                    return nested
        return None

    def _outer_step(self, site: BlockSite):
        """The step after the loop (or ``with``) holding the backward: micro-steps of gradient accumulation."""
        crossed_loop = False
        for level in site.chain:
            compound = level.compound
            if isinstance(compound, _LOOPS):
                crossed_loop = True
            elif not isinstance(compound, cst.With):
                break  # backward inside an if/try branch: the loss and the step may differ per branch
            for statement in level.statements[level.index + 1:]:
                if self.calls.backward(statement) is not None:
                    return StepFailure(statement, BACKWARD_API, _ACCUMULATION_NO_STEP)
                step = self.calls.step(statement)
                if step is not None:
                    return step, statement, crossed_loop
                nested = self._nested_step(statement)
                if nested is not None:
                    return nested[0], nested[1], True
        return StepFailure(site.statements[0], BACKWARD_API, _ACCUMULATION_NO_STEP)

    def _backward_problem(self, backward: Backward) -> str | None:
        call = backward.call
        receiver = call.func.value
        if backward.scaler is None and isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) \
                and receiver.func.attr.value == "scale":
            return ("AMP GradScaler (scaler.scale(loss).backward()): the scaler is not made in this file "
                    "(torch.cuda.amp.GradScaler); rewrite the step by hand with mindspore.amp loss scaling")
        keywords = {a.keyword.value for a in call.args if a.keyword is not None}
        if keywords & {"retain_graph", "create_graph"} or len(call.args) > 1:
            return ("backward(retain_graph/create_graph) keeps the autograd graph for another backward pass; "
                    "MindSpore computes gradients functionally: rewrite with mindspore.grad by hand")
        if call.args:
            return "backward() with explicit gradient/inputs arguments cannot be rewritten automatically"
        return None

    # which statements depend on trained parameters ---------------------------
    def _calls_model(self, names: StatementNames) -> bool:
        for call in names.calls:
            func = call.func
            if self.analysis.qualified(func) is not None:
                continue  # a torch API
            if isinstance(func, cst.Name):
                if is_builtin(func.value) or func.value in self.analysis.imports:
                    continue
                return True
            if isinstance(func, cst.Attribute):
                root = func
                while isinstance(root, cst.Attribute):
                    root = root.value
                if isinstance(root, cst.Name) and root.value in self.analysis.imports:
                    continue
                if func.attr.value in TENSOR_METHODS:
                    continue
                return True
        return False

    def _calls_cells(self, names: StatementNames, cells: set[str]) -> bool:
        for call in names.calls:
            code = code_of(call.func)
            if any(code == cell or code.startswith(cell + ".") for cell in cells):
                return True
        return False

    def _param_dependent(self, statements, names, cells: set[str] | None = None) -> list[bool]:
        """Per statement: does its value depend on the trained Cells (on any
        Cell when the optimizer's Cells are unknown)?"""
        dependent: set[str] = set()
        result = []
        for statement, info in zip(statements, names):
            seed = self._calls_cells(info, cells) if cells else self._calls_model(info)
            flag = seed or bool(dependent.intersection(info.reads))
            if flag:
                dependent |= info.bound
            else:
                dependent -= info.bound
            result.append(flag)
        return result

    # one step -------------------------------------------------------------------
    def _plan_step(self, site, names, dependent, zero_grads, previous_step, pairing: _Pairing):
        statements = site.statements
        backward = pairing.backward
        backward_call = self.calls.backward(statements[backward])
        loss = backward_call.loss
        loss_name = names_of(loss).reads[0] if _is_plain_name(loss) else None
        region_start = previous_step + 1
        made = [i for i in range(region_start, backward) if root_name(pairing.step.optimizer) in names[i].bound]
        if made:  # the optimizer (and the model it takes) is made in this block: the step starts after it
            region_start = made[-1] + 1
        step_index = statements.index(pairing.statement) if pairing.statement in statements else None
        skip = zero_grads | {backward} | ({step_index} if step_index is not None else set())
        needed = set(names_of(loss).reads)
        forward: list[int] = []
        recomputed: list[int] = []
        for index in range(backward - 1, -1, -1):
            if index in skip or self.calls.step(statements[index]) is not None:
                continue
            if self.calls.backward(statements[index]) is not None:
                continue
            info = names[index]
            if not needed.intersection(info.bound):
                continue
            if index >= region_start:
                forward.append(index)
            elif dependent[index]:
                recomputed.append(index)
            else:
                needed -= info.bound
                continue
            needed = (needed - info.bound) | set(info.reads)
        forward.sort()
        recomputed.sort()
        if not forward:
            return StepFailure(statements[backward], BACKWARD_API,
                               "the loss is not computed in the same block as backward(); rewrite the step by hand")
        if loss_name is not None and not any(loss_name in names[i].bound for i in forward):
            return StepFailure(statements[backward], BACKWARD_API,
                               "the loss is not computed in the same block as backward(); rewrite the step by hand")
        for index in range(region_start, backward + 1):
            if names[index].reads_grad:
                return StepFailure(statements[index], "torch.Tensor.grad",
                                   "parameter .grad is read or written (manual gradient code or hooks); "
                                   "rewrite the step by hand")
        exits = []
        for index in forward + recomputed:
            if names[index].escapes:
                if index in forward and _exit_branch(statements[index]):
                    exits.append(index)
                    continue
                return StepFailure(statements[index], BACKWARD_API,
                                   "control flow (return/break/continue) inside the forward pass of a training step")
        # the forward's leading statements that need no parameter (xb, yb = get_batch('train')) run before the
        # gradient call: drawing a batch inside it had the gradient tape record every slice (nanoGPT-style bigram)
        first_dependent = next((i for i in forward if dependent[i] or i in exits), None)
        if first_dependent is not None:
            position = forward.index(first_dependent)
            while position and self._fills_constant(statements[forward[position - 1]], names, backward):
                position -= 1  # torch.zeros(...) of a first hidden state: compiled with the step, not a launch a step
            forward = forward[position:]
        if exits:
            # what the exiting branch may read runs before it: the forward's inputs that need no parameter
            forward = [i for i in forward if i in exits or i > max(exits) or dependent[i]]
            for index in exits:
                if self._reads_forward_before(statements[index], names, forward, index):
                    return StepFailure(statements[index], BACKWARD_API, "control flow (return/break/continue) "
                                       "inside the forward pass of a training step, after values it computes")
        layout = self._order_region(statements, names, forward, region_start, backward, skip)
        if isinstance(layout, StepFailure):
            return layout
        before, after = layout
        step = pairing.step
        function = site.scope.node
        hoist = site.loops[0] if site.loops else None
        if hoist is not None and root_name(step.optimizer) in names_of(hoist).bound:
            hoist = None  # the optimizer is made inside the loop
        if pairing.accumulate and hoist is None:
            return StepFailure(statements[backward], BACKWARD_API, _ACCUMULATION_NO_LOOP)
        plan = StepPlan(step.optimizer, backward, pairing.statement, region_start, loss, loss_name, forward,
                        recomputed, before, after, scaler=backward_call.scaler, accumulate=pairing.accumulate,
                        step_scaler=step.scaler, hoist=hoist, function=function, exits=exits)
        problem = self._surroundings(site, plan)
        if isinstance(problem, StepFailure):
            return problem
        if not plan.zero_grads and hoist is not None and not self._zeroed_anywhere():
            plan.accumulate = plan.never_zeroed = True
        plan.params = self._params(site, names, plan)
        plan.cells = self._forward_cells(site, plan)
        return plan

    def _surroundings(self, site: BlockSite, plan: StepPlan) -> StepFailure | None:
        """Clipping and unscale_ between the backward and the step, the scale update after the step,
        zero_grad() of this optimizer: wherever they sit in the function."""
        order = site.order
        start = order[id(site.statements[plan.backward])]
        end = order[id(plan.step_statement)]
        function = self._function_of(site)
        optimizer_code = code_of(plan.optimizer)
        # optimizer.zero_grad() and model.zero_grad() on a Cell the optimizer trains clear the same gradients
        zeroed = {optimizer_code, *(code_of(cell) for cell in self.trained_cells(plan.optimizer))}
        scaler_code = code_of(plan.step_scaler) if plan.step_scaler is not None else None
        for statement in function.statements:
            position = order[id(statement)]
            if start < position < end:
                if names_of(statement).reads_grad:
                    return StepFailure(statement, "torch.Tensor.grad",
                                       "parameter .grad is read or written (manual gradient code or hooks); "
                                       "rewrite the step by hand")
                clip = self.calls.clip(statement)
                if isinstance(clip, str):
                    return StepFailure(statement, self.calls.clip_api(statement), clip)
                if clip is not None:
                    plan.clips[id(statement)] = clip
                unscale = self.calls.unscale(statement)
                if unscale is not None and code_of(unscale[1]) == optimizer_code:
                    plan.unscales.append(statement)
            if position > end and scaler_code is not None:
                update = self.calls.update(statement)
                if update is not None and code_of(update.func.value) == scaler_code and not update.args:
                    plan.updates.append(statement)
            zero_grad = self.calls.zero_grad(statement)
            if zero_grad is not None and code_of(zero_grad.func.value) in zeroed:
                plan.zero_grads.append(statement)
        step_block = function.parents.get(id(plan.step_statement))
        if plan.unscales and all(function.parents.get(id(u)) is not step_block for u in plan.unscales):
            plan.unscale_flag = "grads_unscaled"  # named with the other names by training_loop
        if plan.step_scaler is not None and plan.scaler is None:
            return StepFailure(plan.step_statement, "torch.amp.GradScaler.step",
                               "scaler.step(optimizer) after an unscaled loss.backward(): the gradients were never "
                               "scaled; rewrite the step by hand")
        return None

    def _zeroed_anywhere(self) -> bool:
        """Some zero_grad() in the file (another method may clear the gradients between steps)."""
        return any(self.calls.zero_grad(statement) is not None
                   for function in self.functions.values() for statement in function.statements)

    def _function_of(self, site: BlockSite) -> _Function:
        return self.functions[id(site.scope.node)]

    def _forward_cells(self, site, plan: StepPlan) -> list[cst.BaseExpression]:
        """The networks the forward pass calls (from where they were made), in order."""
        found: dict[str, cst.BaseExpression] = {}
        for index in sorted(plan.forward + plan.recomputed):
            for call in names_of(site.statements[index]).calls:
                if self.is_network(call.func):
                    found.setdefault(code_of(call.func), call.func)
        return list(found.values())

    def is_network(self, expr: cst.BaseExpression) -> bool:
        """One of the file's Cells, or a torch layer that is not a loss (losses may convert to functions)."""
        origin = self.provenance.origin(expr)
        while origin is not None and origin.kind == WRAPPER:  # nn.DataParallel(model) runs the model
            origin = origin.inner
        if origin is None:
            return False
        return origin.kind == CELL or (origin.kind == LAYER and not origin.qualified.endswith("Loss"))

    @staticmethod
    def _reads_forward_before(statement: cst.If, names, forward, index: int) -> bool:
        """The test or the exiting branch reads what an earlier forward statement binds:
        it cannot run before the forward function."""
        bound = set().union(*(names[i].bound for i in forward if i < index))
        reads = set(names_of(statement.test).reads) | set(free_names(list(statement.body.body)))
        return bool(bound & reads)

    def _order_region(self, statements, names, forward, region_start, backward, skip):
        """Non-forward statements of the region: inputs of the forward pass run
        before the gradient call, the rest (logging, bookkeeping) after it."""
        first = forward[0]
        before = [i for i in range(region_start, first) if i not in skip]
        after: list[int] = []
        forward_reads = {i: set(names[i].reads) for i in forward}
        forward_bound = set().union(*(names[i].bound for i in forward))
        for index in range(first + 1, backward):
            if index in skip or index in forward:
                continue
            info = names[index]
            later_reads = set().union(*(forward_reads[i] for i in forward if i > index))
            earlier_reads = set().union(*(forward_reads[i] for i in forward if i < index))
            if info.bound & later_reads:
                if info.bound & (earlier_reads | forward_bound):
                    return StepFailure(statements[index], BACKWARD_API, _INTERLEAVED)
                before.append(index)
            else:
                later_bound = set().union(*(names[i].bound for i in forward if i > index))
                if later_bound & set(info.reads):
                    return StepFailure(statements[index], BACKWARD_API, _INTERLEAVED)
                after.append(index)
        return before, after

    def _params(self, site, names, plan: StepPlan) -> list[str]:
        indices = sorted(plan.forward + plan.recomputed)
        body = [s for i in indices for s in forward_statements(site.statements[i], i in plan.exits)]
        free = free_names(body)
        names = list(names)
        for i in plan.exits:  # the else branch alone is the forward's
            names[i] = names_of(cst.IndentedBlock(forward_statements(site.statements[i], True)))
        bound_here = set().union(*(names[i].bound for i in indices))
        if site.loops:
            local = names_of(site.loops[0]).bound
        else:
            local = set(site.scope.params) - {"self", "cls"}
            for index in range(plan.backward):
                local |= names[index].bound
        reads = Counter(n for i in indices for n in names[i].reads)
        callees = Counter()
        for i in indices:
            callees.update(names[i].callees)
        return [
            name for name in free
            if (name in local or name in bound_here)
            and name not in ("self", "cls")
            and "." not in name  # self.x is read through self, never passed
            and reads[name] > callees[name]
        ]

    def _fills_constant(self, statement, names, backward: int) -> bool:
        """``hidden = torch.zeros(1, batch_size, n_hidden)``: one name bound to a tensor of a fixed value,
        read only by the forward pass (nothing after the backward reads it)."""
        if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
                and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1
                and isinstance(statement.body[0].targets[0].target, cst.Name)
                and isinstance(statement.body[0].value, cst.Call)):
            return False
        if self.analysis.qualified(statement.body[0].value.func) not in _FILLS:
            return False
        name = statement.body[0].targets[0].target.value
        return not any(name in info.reads for info in names[backward + 1:])

    def _aux(self, site, names, plan: StepPlan, other_params: set[str]) -> list[str]:
        inside = Counter(n for i in plan.forward for n in names[i].reads)
        outside = site.scope.reads - inside
        aux: list[str] = []
        for index in plan.forward:
            for name in names[index].bound_order:
                if name == plan.loss_name or name in aux:
                    continue
                if outside[name] > 0 or name in plan.params or name in other_params:
                    aux.append(name)
        if plan.scaler is not None and plan.loss_name is not None and plan.loss_name not in aux:
            aux.insert(0, plan.loss_name)  # the differentiated output is the scaled loss
        return aux


_FILLS = frozenset({"torch.zeros", "torch.ones", "torch.full", "torch.eye"})


def _is_plain_name(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Name):
        return True
    return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self"


def root_name(expr: cst.BaseExpression) -> str | None:
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


def _unknown_optimizer(step: cst.Call) -> str:
    name = code_of(step.func.value)
    return (f"cannot tell that {name} is a torch optimizer: it is not made in this file (a torch.optim constructor, "
            f"or a function of this file returning one, or an argument of a call in this file); annotate it "
            f"({name}: torch.optim.Optimizer) to convert the step")


_ACCUMULATION_SEVERAL = (
    "several backward() calls before optimizer.step() in one block cannot be rewritten automatically: "
    "sum the gradients returned by mindspore.value_and_grad by hand"
)
_ACCUMULATION_NO_STEP = (
    "backward() without optimizer.step() after it (in the same block, an if after it, or after the loop "
    "holding it) cannot be rewritten automatically: use mindspore.value_and_grad and sum gradients by hand"
)
_ACCUMULATION_NO_LOOP = (
    "gradients accumulated over several backward() calls need a loop around the step to keep the sum in; "
    "rewrite the step by hand"
)
_INTERLEAVED = (
    "statements interleaved with the forward pass overwrite its inputs; reorder them before converting"
)


def _exit_branch(statement) -> bool:
    """``if cond: ...; continue`` (or ``break``; ``else: ...`` without exits): the
    body ends the iteration, and nothing else in the statement leaves it."""
    if not isinstance(statement, cst.If) or not _ends_iteration(statement.body):
        return False
    orelse = statement.orelse
    if orelse is None:
        return True
    return isinstance(orelse, cst.Else) and not names_of(orelse.body).escapes


def _ends_iteration(block) -> bool:
    *rest, last = block.body
    if any(names_of(s).escapes for s in rest):
        return False
    if isinstance(last, cst.SimpleStatementLine):
        *front, final = last.body
        return isinstance(final, (cst.Continue, cst.Break)) and \
            not any(isinstance(small, (cst.Return, cst.Continue, cst.Break)) for small in front)
    if isinstance(last, cst.With):
        return _ends_iteration(last.body)
    return False


def forward_statements(statement, exits: bool) -> list:
    """The statements a forward statement puts in the forward function: itself,
    or the else branch of an ``if`` that ends the iteration (see StepPlan.exits)."""
    if not exits:
        return [statement]
    return list(statement.orelse.body.body) if statement.orelse is not None else []
