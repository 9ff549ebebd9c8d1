"""Finding torch training steps in a file and planning their MindSpore form.

A training step is, inside one block: ``loss.backward()`` followed by
``optimizer.step()`` (``optimizer.zero_grad()`` anywhere in the block). The
plan says which statements of the block compute the loss (they move into a
forward function), which run before or after the gradient call, which
statements between backward and step clip gradients, and what the forward
function takes and returns. Planning reads only the original tree; applying
the plan (``training_loop.py``) uses the rewritten statements.

Patterns that cannot be rewritten faithfully produce a ``StepFailure`` naming
the pattern; the statement gets a marker and keeps its torch form.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import libcst as cst

from rewrite_rules.tensor_methods_data import SHARED_TENSOR_METHODS, TORCH_ONLY_TENSOR_METHODS
from transpiler.engine import code_of, literal_value
from transpiler.structural.step_names import StatementNames, free_names, is_builtin, names_of

TENSOR_METHODS = TORCH_ONLY_TENSOR_METHODS | SHARED_TENSOR_METHODS
CLIP_NORM = frozenset({"torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_norm_"})
CLIP_VALUE = frozenset({"torch.nn.utils.clip_grad_value_", "torch.nn.utils.clip_grad.clip_grad_value_"})
BACKWARD_API = "torch.Tensor.backward"


@dataclass
class StepFailure:
    statement: cst.CSTNode  # where the marker goes
    api: str
    reason: str


@dataclass
class Clip:
    kind: str  # "norm" or "value"
    limit: cst.BaseExpression  # max_norm / clip_value (original expression)


@dataclass
class StepPlan:
    optimizer: cst.BaseExpression
    backward: int  # statement indices in the block
    step: int
    region_start: int
    loss: cst.BaseExpression  # the expression backward() was called on
    loss_name: str | None  # the name bound to the loss, when it is a name
    forward: list[int]  # own statements moved into the forward function
    recomputed: list[int]  # earlier statements recomputed (graph shared with an earlier step)
    before: list[int]  # region statements that run before the gradient call
    after: list[int]  # region statements that run after it
    between: list[int]  # statements between backward and step
    clips: dict[int, Clip] = field(default_factory=dict)
    params: list[str] = field(default_factory=list)
    aux: list[str] = field(default_factory=list)
    hoist: cst.CSTNode | None = None  # the loop the forward function is defined before
    forward_name: str = "forward_fn"
    grad_name: str = "grad_fn"


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
class BlockSite:
    owner: cst.CSTNode  # IndentedBlock or Module holding the statements
    statements: tuple
    loops: list[cst.CSTNode]  # enclosing loops in the same function, outermost first
    scope: Scope


# -- recognising the calls -------------------------------------------------------
def _single_call(statement: cst.CSTNode) -> tuple[cst.Call | None, cst.CSTNode | None]:
    """The call of a one-statement line ``f(...)`` or ``x = f(...)``."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None, None
    small = statement.body[0]
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        return small.value, small
    if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call):
        return small.value, small
    return None, None


def method_statement(statement: cst.CSTNode, name: str) -> cst.Call | None:
    call, small = _single_call(statement)
    if call is None or not isinstance(small, cst.Expr):
        return None
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == name:
        return call
    return None


class Kinds:
    """Which receivers are optimizers and schedulers: from their torch
    constructors in this file, else from their names."""

    def __init__(self, module: cst.Module, analysis):
        self.optimizers: dict[str, cst.Call] = {}
        self.schedulers: set[str] = set()
        for node in _assignments(module):
            value = node.value
            if not isinstance(value, cst.Call):
                continue
            qualified = analysis.qualified(value.func) or ""
            for target in node.targets:
                if not isinstance(target.target, (cst.Name, cst.Attribute)):
                    continue
                code = code_of(target.target)
                if qualified.startswith("torch.optim.lr_scheduler."):
                    self.schedulers.add(code)
                elif qualified.startswith("torch.optim."):
                    self.optimizers[code] = value

    def is_scheduler(self, expr: cst.BaseExpression) -> bool:
        code = code_of(expr)
        return code in self.schedulers or "sched" in code.rsplit(".", 1)[-1].lower()

    def is_optimizer(self, expr: cst.BaseExpression) -> bool:
        code = code_of(expr)
        if code in self.optimizers:
            return True
        if self.is_scheduler(expr):
            return False
        last = code.rsplit(".", 1)[-1].lower()
        return "optim" in last or last.startswith("opt")

    def trained_cells(self, optimizer: cst.BaseExpression) -> list[cst.BaseExpression]:
        """``model`` in ``torch.optim.X(model.parameters(), ...)``."""
        constructor = self.optimizers.get(code_of(optimizer))
        if constructor is None:
            return []
        found: dict[str, cst.BaseExpression] = {}
        for call in _calls(constructor):
            if isinstance(call.func, cst.Attribute) and call.func.attr.value == "parameters":
                found.setdefault(code_of(call.func.value), call.func.value)
        return list(found.values())


def _assignments(module: cst.Module):
    class _Finder(cst.CSTVisitor):
        def __init__(self):
            self.found = []

        def visit_Assign(self, node):
            self.found.append(node)

    finder = _Finder()
    module.visit(finder)
    return finder.found


def _calls(node: cst.CSTNode) -> list[cst.Call]:
    return names_of(node).calls


# -- walking the file --------------------------------------------------------------
def find_sites(module: cst.Module) -> list[BlockSite]:
    sites: list[BlockSite] = []
    _walk_block(module, module.body, [], Scope(module), sites)
    return sites


def _walk_block(owner, statements, loops, scope, sites) -> None:
    if any(method_statement(s, "backward") is not None for s in statements):
        sites.append(BlockSite(owner, tuple(statements), list(loops), scope))
    for statement in statements:
        if isinstance(statement, cst.FunctionDef):
            params = frozenset(p.name.value for p in _all_params(statement.params))
            _walk_suite(statement.body, [], Scope(statement, params), sites)
        elif isinstance(statement, cst.ClassDef):
            _walk_suite(statement.body, [], Scope(statement), sites)
        elif isinstance(statement, (cst.For, cst.While)):
            _walk_suite(statement.body, [*loops, statement], scope, sites)
            if statement.orelse is not None:
                _walk_suite(statement.orelse.body, loops, scope, sites)
        elif isinstance(statement, cst.If):
            _walk_suite(statement.body, loops, scope, sites)
            if statement.orelse is not None:
                _walk_block_or_if(statement.orelse, loops, scope, sites)
        elif isinstance(statement, cst.With):
            _walk_suite(statement.body, loops, scope, sites)
        elif isinstance(statement, cst.Try):
            _walk_suite(statement.body, loops, scope, sites)
            for handler in statement.handlers:
                _walk_suite(handler.body, loops, scope, sites)
            for extra in (statement.orelse, statement.finalbody):
                if extra is not None:
                    _walk_suite(extra.body, loops, scope, sites)


def _walk_block_or_if(orelse, loops, scope, sites) -> None:
    if isinstance(orelse, cst.If):
        _walk_suite(orelse.body, loops, scope, sites)
        if orelse.orelse is not None:
            _walk_block_or_if(orelse.orelse, loops, scope, sites)
    else:
        _walk_suite(orelse.body, loops, scope, sites)


def _walk_suite(suite, loops, scope, sites) -> None:
    if isinstance(suite, cst.IndentedBlock):
        _walk_block(suite, suite.body, loops, scope, sites)


def _all_params(params: cst.Parameters):
    result = [*params.posonly_params, *params.params, *params.kwonly_params]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            result.append(star)
    return result


# -- planning one block ----------------------------------------------------------
class Planner:
    def __init__(self, analysis, kinds: Kinds):
        self.analysis = analysis
        self.kinds = kinds

    def plan(self, site: BlockSite) -> tuple[list[StepPlan], list[StepFailure]]:
        statements = site.statements
        names = [names_of(s) for s in statements]
        pairs, failures = self._pairs(statements)
        if failures:
            return [], failures
        zero_grads = {
            i for i, s in enumerate(statements)
            if (call := method_statement(s, "zero_grad")) is not None and not call.args
        }
        plans: list[StepPlan] = []
        previous_step = -1
        for backward, step in pairs:
            optimizer = method_statement(statements[step], "step").func.value
            cells = {code_of(c) for c in self.kinds.trained_cells(optimizer)}
            # earlier statements are recomputed only when they run the Cells this step trains
            dependent = self._param_dependent(statements, names, cells)
            plan = self._plan_step(site, names, dependent, zero_grads, previous_step, backward, step)
            if isinstance(plan, StepFailure):
                failures = [plan]
                if plan.statement is not statements[backward]:
                    failures.append(StepFailure(statements[backward], BACKWARD_API,
                                                f"training step not rewritten: {plan.reason}"))
                return [], failures
            plans.append(plan)
            previous_step = step
        for plan in plans:
            others = {p for other in plans if other is not plan for p in other.params}
            plan.aux = self._aux(site, names, plan, others)
        return plans, []

    # which backward goes with which step --------------------------------------
    def _pairs(self, statements):
        pairs: list[tuple[int, int]] = []
        failures: list[StepFailure] = []
        pending: int | None = None
        for index, statement in enumerate(statements):
            backward = method_statement(statement, "backward")
            if backward is not None:
                problem = self._backward_problem(backward)
                if problem:
                    failures.append(StepFailure(statement, BACKWARD_API, problem))
                    continue
                if pending is not None:
                    failures.append(StepFailure(statement, BACKWARD_API, _ACCUMULATION_SEVERAL))
                pending = index
                continue
            step = method_statement(statement, "step")
            if step is not None and self.kinds.is_optimizer(step.func.value):
                if step.args:
                    failures.append(StepFailure(statement, "torch.optim.Optimizer.step",
                                                "optimizer.step(closure) (closure-driven optimizers such as LBFGS) "
                                                "cannot be rewritten automatically"))
                elif pending is not None:
                    pairs.append((pending, index))
                pending = None
        if pending is not None:
            failures.append(StepFailure(statements[pending], BACKWARD_API, _ACCUMULATION_NO_STEP))
        return pairs, failures

    def _backward_problem(self, call: cst.Call) -> str | None:
        receiver = call.func.value
        if isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute) and receiver.func.attr.value == "scale":
            return ("AMP GradScaler (scaler.scale(loss).backward()): MindSpore mixed precision uses "
                    "mindspore.amp loss scaling; rewrite the step by hand")
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
    def _plan_step(self, site, names, dependent, zero_grads, previous_step, backward, step):
        statements = site.statements
        backward_call = method_statement(statements[backward], "backward")
        optimizer = method_statement(statements[step], "step").func.value
        loss = backward_call.func.value
        loss_name = loss.value if isinstance(loss, cst.Name) else None
        region_start = previous_step + 1
        skip = zero_grads | {backward, step}
        needed = set(names_of(loss).reads)
        forward: list[int] = []
        recomputed: list[int] = []
        for index in range(backward - 1, -1, -1):
            if index in skip or method_statement(statements[index], "step") is not None:
                continue
            if method_statement(statements[index], "backward") is not None:
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
        for index in range(region_start, step + 1):
            if names[index].reads_grad:
                return StepFailure(statements[index], "torch.Tensor.grad",
                                   "parameter .grad is read or written (manual gradient code or hooks); "
                                   "rewrite the step by hand")
        for index in forward + recomputed:
            if names[index].escapes:
                return StepFailure(statements[index], BACKWARD_API,
                                   "control flow (return/break/continue) inside the forward pass of a training step")
        layout = self._order_region(statements, names, forward, region_start, backward, skip)
        if isinstance(layout, StepFailure):
            return layout
        before, after = layout
        between = [i for i in range(backward + 1, step) if i not in skip]
        clips = {}
        for index in between:
            clip = self._clip(statements[index])
            if isinstance(clip, StepFailure):
                return clip
            if clip is not None:
                clips[index] = clip
        hoist = site.loops[0] if site.loops else None
        if hoist is not None and _root_name(optimizer) in names_of(hoist).bound:
            hoist = None  # the optimizer is made inside the loop
        plan = StepPlan(optimizer, backward, step, region_start, loss, loss_name, forward, recomputed,
                        before, after, between, clips, hoist=hoist)
        plan.params = self._params(site, names, plan)
        return plan

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

    def _clip(self, statement) -> Clip | StepFailure | None:
        call, small = _single_call(statement)
        if call is None:
            return None
        qualified = self.analysis.qualified(call.func)
        if qualified not in CLIP_NORM | CLIP_VALUE:
            return None
        if isinstance(small, cst.Assign):
            return StepFailure(statement, qualified, "the total norm returned by gradient clipping is used; "
                                                     "compute it from the gradients by hand")
        positional = [a.value for a in call.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        if qualified in CLIP_NORM:
            limit = positional[1] if len(positional) > 1 else keywords.get("max_norm")
            norm_type = positional[2] if len(positional) > 2 else keywords.get("norm_type")
            if norm_type is not None and _literal(norm_type) not in (2, 2.0):
                return StepFailure(statement, qualified, "only the L2 norm (norm_type=2) maps to ops.clip_by_global_norm")
            kind = "norm"
        else:
            limit = positional[1] if len(positional) > 1 else keywords.get("clip_value")
            kind = "value"
        if limit is None:
            return StepFailure(statement, qualified, "clipping limit not found")
        return Clip(kind, limit)

    def _params(self, site, names, plan: StepPlan) -> list[str]:
        indices = sorted(plan.forward + plan.recomputed)
        body = [site.statements[i] for i in indices]
        free = free_names(body)
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
            and reads[name] > callees[name]
        ]

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
        return aux


def _root_name(expr: cst.BaseExpression) -> str | None:
    while isinstance(expr, (cst.Attribute, cst.Subscript)):
        expr = expr.value
    return expr.value if isinstance(expr, cst.Name) else None


def _literal(expr):
    try:
        return literal_value(expr)
    except (ValueError, SyntaxError):
        return None


_ACCUMULATION_SEVERAL = (
    "gradient accumulation (several backward() calls before optimizer.step()) cannot be rewritten "
    "automatically: sum the gradients returned by mindspore.value_and_grad by hand"
)
_ACCUMULATION_NO_STEP = (
    "backward() without optimizer.step() after it in the same block (gradient accumulation, or the step "
    "lives elsewhere) cannot be rewritten automatically: use mindspore.value_and_grad and sum gradients by hand"
)
_INTERLEAVED = (
    "statements interleaved with the forward pass overwrite its inputs; reorder them before converting"
)
