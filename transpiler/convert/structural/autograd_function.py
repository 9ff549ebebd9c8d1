"""Custom autograd Functions become Cells with a ``bprop``.

    class ScaledSwish(torch.autograd.Function):     class ScaledSwish(nn.Cell):
        @staticmethod                                   def construct(self, x, beta):
        def forward(ctx, x, beta):                          return x * ops.sigmoid(x * beta)
            ctx.save_for_backward(x)
            ctx.beta = beta                             def bprop(self, x, beta, out, grad):
            return x * torch.sigmoid(x * beta)              s = ops.sigmoid(x * beta)
                                                            return grad * (s + ...), None
        @staticmethod
        def backward(ctx, grad):                    y = ScaledSwish()(x, 1.5)
            (x,) = ctx.saved_tensors
            s = torch.sigmoid(x * ctx.beta)
            return grad * (s + ...), None

    y = ScaledSwish.apply(x, 1.5)

MindSpore calls a Cell's ``bprop`` with the inputs, the output and the output's
gradient, so what ``forward`` saves of its inputs and output, and the inputs it
keeps on ``ctx``, are read from bprop's arguments (``out`` for the output): no
state on the Cell, which a construct compiled in graph mode could not set for
its bprop (measured: ``mindspore.jit`` runs such a bprop, and fails on one
reading ``self.beta`` set in construct). Anything else forward keeps on ``ctx``
(a tensor it computed) is kept on ``self``: bprop runs for the instance whose
construct ran (measured on CPU, PyNative: gradients equal the hand-written ones;
a None gradient counts as zero, as in torch). ``apply`` calls an instance.

MindSpore's bprop computes the gradient of every input, so
``ctx.needs_input_grad`` reads True (``if ctx.needs_input_grad[0]:`` keeps its
body); it always passes zeros for the gradient of an unused output, which is
what torch's ``None`` gradients mean (``ctx.set_materialize_grads`` is dropped);
``@once_differentiable`` is dropped (first-order gradients are the same);
``ctx.mark_non_differentiable(idx)`` is dropped when ``idx`` is an output
returned by name whose gradient backward never reads (a VQ-VAE's code indices:
torch gives it no gradient, MindSpore gives one that bprop ignores). What the
pattern cannot carry (``mark_dirty``, a non-differentiable output whose
gradient backward reads) is marked. torch 2's ``forward(x)`` with
``setup_context(ctx, inputs, output)`` is one forward first: forward's body,
its result as ``output``, then setup_context's body.

``*args`` on either side (x-transformers' ``forward(ctx, *tensors)`` and
``backward(ctx, *grads)``) gives ``bprop(self, *args)``, whose first line unpacks
what the body reads (``tensors, out, grads = args[:-2], args[-2], args[-1]``);
``*grads`` is the output's gradient when forward returns a tuple, and
``dout if isinstance(dout, tuple) else (dout,)`` when that is not known. Such a
bprop runs in PyNative mode; mindspore.jit compiles only a bprop with one
parameter per input (measured), which the conversion reports. ``@classmethod``
forward/backward are called by torch as the staticmethods are (one that reads
its class is marked); ``t.requires_grad_()`` in forward goes (torch runs forward
without recording: it changes no value). MindSpore gives a bprop ``None`` for
an input that is a function or a Cell (measured), so an input that backward
calls (``ctx.fn = fn``, ``ctx.fn(grad)``), or that forward calls or runs what it
holds (``for block in blocks: x = block(x)``), stays on ``self``.

Gradient checkpointing written as a Function (improved-diffusion's and
consistency_models' ``CheckpointFunction``: ``forward`` runs a function it is
given under ``torch.no_grad()``, ``backward`` runs it again and takes
``torch.autograd.grad`` of it) is MindSpore's recompute: the class becomes a
Cell whose ``construct`` runs the function under ``mindspore.recompute``, and
the backward goes (MindSpore's autodiff recomputes the activations and gives
the same gradients, for the inputs and for the parameters the function uses)::

    class CheckpointFunction(th.autograd.Function):
        @staticmethod
        def forward(ctx, run_function, length, *args):
            ctx.run_function = run_function
            ctx.input_tensors = list(args[:length])
            ctx.input_params = list(args[length:])
            with th.no_grad():
                output_tensors = ctx.run_function(*ctx.input_tensors)
            return output_tensors

        @staticmethod
        def backward(ctx, *output_grads):
            ...  # re-runs ctx.run_function, th.autograd.grad(...)

    class CheckpointFunction(nn.Cell):
        def construct(self, run_function, length, *args):
            input_tensors = list(args[:length])
            output_tensors = mindspore.recompute(
                run_function, *input_tensors, use_reentrant=False, early_stop=False
            )
            return output_tensors

What ``forward`` kept on ``ctx`` for itself becomes a local variable; what it
kept only for ``backward`` goes with the backward.

``use_reentrant=False``: MindSpore's reentrant recompute takes only a Cell, the
other any callable (a bound method such as ResBlock's ``self._forward``);
``early_stop=False``: see rewrite_rules/runtime/checkpoint.py.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.spec import Unconvertible
from transpiler.convert.bindings import LocalBindings
from transpiler.convert.diagnostics import Severity
from transpiler.convert.engine import keyword_arg
from transpiler.convert.names import chain_parts

FUNCTION_BASES = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
_AUTOGRAD_GRAD = frozenset({"torch.autograd.grad", "torch.autograd.functional.vjp"})
_CTX_UNSUPPORTED = ("mark_non_differentiable", "mark_dirty")
_CTX_DROPPED = ("set_materialize_grads",)  # statements with no effect on a bprop's values
_CTX_CALLS = ("save_for_backward", "mark_non_differentiable", "set_materialize_grads", "mark_dirty",
              "save_for_forward")


def function_base(node: cst.ClassDef, analysis) -> cst.Arg | None:
    """The ``torch.autograd.Function`` base of a class, if it has one.

    The backward of a gradient-checkpoint Function goes away in the conversion
    (see ``recomputed_function``): it is taken out of the statements the rewrite
    visits, so that what it alone uses (``torch.autograd.grad``) is not marked."""
    for base in node.bases:
        if analysis.qualified(base.value) in FUNCTION_BASES:
            function = recomputed_function(node, analysis)
            if function is not None:
                methods = _methods(node)
                analysis.interesting.discard(id(methods["backward"]))
                for line in _lines_for_backward(methods["forward"], function):
                    analysis.interesting.discard(id(line))
            methods = _methods(node)
            if "forward" in methods:
                for line in _lines(methods["forward"].body):
                    if len(line.body) == 1 and _requires_grad_call(line.body[0]):
                        analysis.interesting.discard(id(line))  # dropped in construct (see _DropRequiresGrad)
            return base
    return None


def _requires_grad_call(statement: cst.BaseSmallStatement) -> bool:
    """``t.requires_grad_()`` (or with a literal True/False): in a Function's forward, which
    torch runs without recording, it changes no value the Function gives."""
    if not (isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call)):
        return False
    call = statement.value
    return isinstance(call.func, cst.Attribute) and call.func.attr.value == "requires_grad_" \
        and len(call.args) <= 1 and all(a.keyword is None or a.keyword.value == "requires_grad" for a in call.args) \
        and all(_is_name(a.value, "True") or _is_name(a.value, "False") for a in call.args)


def _lines_for_backward(forward: cst.FunctionDef, function: str) -> list[cst.SimpleStatementLine]:
    """The statements of a checkpoint Function's forward that only keep things for
    backward (``ctx.gpu_autocast_kwargs = {...}``, ``ctx.save_for_backward(...)``):
    they go with the backward."""
    ctx_name = _params(forward)[0]
    stored = _stored_as(forward.body, ctx_name, function)
    attributes = _CtxAttributes(ctx_name)
    forward.body.visit(attributes)
    kept_for_forward = attributes.read - stored
    found = []
    for line in _lines(forward.body):
        if len(line.body) != 1:
            continue
        statement = line.body[0]
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
            attribute = _ctx_attribute(statement.targets[0].target, ctx_name)
            if attribute is not None and attribute not in kept_for_forward:
                found.append(line)
        elif isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call) \
                and _ctx_attribute(statement.value.func, ctx_name) in _CTX_CALLS:
            found.append(line)
    return found


def function_classes(module: cst.Module, analysis) -> set[str]:
    """The autograd Function classes a file defines at its top level: ``Fn.apply(...)``
    calls an instance of the Cell even where it comes before the class (improved-diffusion's
    ``checkpoint`` above ``CheckpointFunction``). One the conversion marks is left as
    torch's, and without torch its stand-in says so when it is made."""
    return {s.name.value for s in module.body if isinstance(s, cst.ClassDef) and any(
        analysis.qualified(b.value) in FUNCTION_BASES for b in s.bases)}


def stateless_functions(module: cst.Module, analysis) -> set[str]:
    """The Function classes of ``function_classes`` whose Cell keeps nothing on ``self``:
    what forward keeps on ctx all comes to bprop as its arguments (see ``_Kept``)."""
    names = set()
    for node in module.body:
        if isinstance(node, cst.ClassDef) and node.name.value in function_classes(module, analysis) \
                and not _keeps_state(node, analysis):
            names.add(node.name.value)
    return names


def _keeps_state(node: cst.ClassDef, analysis) -> bool:
    try:
        node = _without_classmethods(node)
    except Unconvertible:
        return True
    methods = _methods(node)
    forward, backward = methods.get("forward"), methods.get("backward")
    if forward is None or backward is None or "setup_context" in methods or recomputed_function(node, analysis):
        return True
    if not _params(forward) or not _params(backward):
        return True
    kept, ctx_name = _kept_as_arguments(forward, backward, "out"), _params(forward)[0]
    for statement in _simple_statements(forward.body):
        if isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call) \
                and _ctx_attribute(statement.value.func, ctx_name) == "save_for_backward" and kept.saved is None:
            return True
    visitor = _CtxAssignments(ctx_name)
    forward.body.visit(visitor)
    return bool(visitor.attributes - set(kept.attributes))


class _CtxAssignments(cst.CSTVisitor):
    """The ctx attributes a body assigns (``ctx.a = ...``, ``ctx.a, ctx.b = ...``)."""

    def __init__(self, ctx_name: str):
        self.ctx_name, self.attributes = ctx_name, set()

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        targets = node.target.elements if isinstance(node.target, (cst.Tuple, cst.List)) else [node.target]
        for target in targets:
            target = target.value if isinstance(target, cst.BaseElement) else target
            attribute = _ctx_attribute(target, self.ctx_name)
            if attribute is not None:
                self.attributes.add(attribute)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        attribute = _ctx_attribute(node.target, self.ctx_name)
        if attribute is not None:
            self.attributes.add(attribute)


def apply_as_value(cls: cst.BaseExpression, stateless: bool) -> cst.BaseExpression:
    """``Fn.apply`` read as a value (``fn = Fn.apply``): an instance of the Cell, called as
    apply is; one whose construct keeps tensors on ``self`` for its bprop gets an instance
    per call (``lambda *args: Fn()(*args)``): one instance called twice before the backward
    gives the first call's bprop the second call's tensors (measured: wrong gradients)."""
    if stateless:
        return cst.Call(cls)
    args = cst.Name("args")
    return cst.Lambda(cst.Parameters(star_arg=cst.Param(args)),
                      cst.Call(cst.Call(cls), [cst.Arg(args, star="*")]))


def convert_function_class(ctx, node: cst.ClassDef, base: cst.Arg) -> cst.ClassDef:
    """The Cell form of an autograd Function class; raises Unconvertible."""
    node = _without_classmethods(node)
    methods = _methods(node)
    merged_output = None  # the name forward's result gets when setup_context is merged into it
    if "setup_context" in methods and "forward" in methods:
        node, merged_output = _with_setup_merged(node, methods["forward"], methods["setup_context"])
        methods = _methods(node)
    forward, backward = methods.get("forward"), methods.get("backward")
    if forward is None or backward is None:
        raise Unconvertible("an autograd Function without both forward and backward")
    function = recomputed_function(node, ctx.analysis)
    if function is not None:
        return _recompute_cell(ctx, node, base, forward, backward, function)
    inputs, star_in = _params(forward), _star(forward)
    renamed = _without_input_names(backward, set(inputs[1:]) | {star_in})
    if renamed is not backward:
        node = node.with_changes(body=node.body.with_changes(
            body=[renamed if s is backward else s for s in node.body.body]))
        backward = renamed
    grads, star_grads = _params(backward), _star(backward)
    if _takes_keywords(forward) or _takes_keywords(backward):
        raise Unconvertible("forward/backward take **kwargs or keyword-only parameters: a bprop is given its "
                            "inputs by position; convert by hand")
    if len(inputs) < 1 or len(grads) < 1 or (len(grads) < 2 and star_grads is None):
        raise Unconvertible("forward/backward take no ctx: convert by hand")
    # ctx becomes self: another `self` (a parameter, or the enclosing method's) would be taken over
    pairs = ((inputs[0], forward), (grads[0], backward))
    if any(ctx != "self" and "self" in _names(function) for ctx, function in pairs):
        raise Unconvertible("forward/backward use a name self besides ctx: rename it, then convert")
    taken = set(inputs) | {star_in, star_grads} | _names(backward.body)
    out = next(n for n in ("out", "_out", "__out") if n not in taken)
    kept = _kept_as_arguments(forward, backward, out)
    dropped = _CTX_DROPPED + (("mark_non_differentiable",) if _unread_gradients(forward, backward) else ())
    count = None if star_in is not None else len(inputs) - 1  # the number of inputs, when the signature says it
    body = []
    for statement in node.body.body:
        if statement is forward:
            construct = _construct(statement, inputs[0], count, kept, dropped)
            if merged_output is not None:
                construct = construct.with_changes(body=construct.body.visit(_FoldReturn(merged_output)))
            statement = _format_changed(ctx, forward, construct)
        elif statement is backward:
            signature = _Signature(inputs[1:], star_in, grads[1:], star_grads, _returns_tuple(forward))
            statement = _format_changed(ctx, backward, _bprop(statement, grads[0], signature, out, kept))
        body.append(statement)
    shared = _state_from_construct(body)
    if shared:
        ctx.report(node.name, "torch.autograd.Function", Severity.WARNING,
                   f"{node.name.value}'s bprop reads {', '.join('self.' + a for a in shared)}, set in construct: "
                   "this runs in PyNative mode only; graph mode (mindspore.jit, convert --jit) compiles the bprop "
                   "apart from the construct and fails on the attribute (measured: pyGAT's SpecialSpmmFunction)")
    if star_in is not None:
        ctx.report(node.name, "torch.autograd.Function", Severity.WARNING,
                   f"{node.name.value}'s forward takes *{star_in}: its bprop takes *args too, which runs in "
                   "PyNative mode; mindspore.jit (GRAPH_MODE) compiles only a bprop with one parameter per input")
    cell = ctx.ref("mindspore.nn.Cell")
    bases = [b.with_changes(value=cell) if b is base else b for b in node.bases]
    node = node.with_changes(bases=bases, body=node.body.with_changes(body=body))
    if shared:  # the report says so too; the comment stands where a reader of the code looks
        node = node.with_changes(leading_lines=[*node.leading_lines, cst.EmptyLine(comment=cst.Comment(
            f"# graph mode cannot compile this Cell's bprop: it reads {', '.join('self.' + a for a in shared)}, "
            "set in construct (PyNative trains through it)"))])
    return node


def _state_from_construct(body: list[cst.CSTNode]) -> list[str]:
    """The ``self.`` attributes construct assigns and bprop reads (what forward kept on ctx
    that bprop's arguments do not give)."""
    methods = {s.name.value: s for s in body if isinstance(s, cst.FunctionDef)}
    if "construct" not in methods or "bprop" not in methods:
        return []
    assigned = {t.target.attr.value for s in _simple_statements(methods["construct"].body)
                if isinstance(s, cst.Assign) for t in s.targets
                if isinstance(t.target, cst.Attribute) and _is_name(t.target.value, "self")}
    read: list[str] = []

    class Reads(cst.CSTVisitor):
        def visit_Attribute(self, node: cst.Attribute) -> None:
            if _is_name(node.value, "self") and node.attr.value in assigned and node.attr.value not in read:
                read.append(node.attr.value)

    methods["bprop"].body.visit(Reads())
    return read


def _with_setup_merged(node: cst.ClassDef, forward: cst.FunctionDef, setup: cst.FunctionDef):
    """``forward(x, ...)`` and ``setup_context(ctx, inputs, output)`` (torch 2's style) as
    one ``forward(ctx, x, ...)``: forward's body, its result as ``output``, the
    setup's body, ``return output``."""
    setup_params = _params(setup)
    if len(setup_params) != 3 or _takes_more(forward) or _takes_more(setup) \
            or not isinstance(forward.body, cst.IndentedBlock) or not isinstance(setup.body, cst.IndentedBlock):
        raise Unconvertible("setup_context style autograd Function with *args: merge setup_context into forward "
                            "by hand")
    ctx_name, inputs_name, output_name = setup_params
    params = _params(forward)
    returns = [s for s in _simple_statements(forward.body) if isinstance(s, cst.Return)]
    last = forward.body.body[-1]
    if len(returns) != 1 or returns[0].value is None or not (
            isinstance(last, cst.SimpleStatementLine) and last.body[-1] is returns[0]):
        raise Unconvertible("setup_context style autograd Function whose forward does not end in its one return: "
                            "merge setup_context into forward by hand")
    if {ctx_name, inputs_name, output_name} & (_names(forward) | set(params)):
        raise Unconvertible("setup_context's parameter names are used in forward: merge it into forward by hand")
    statements = list(forward.body.body[:-1])
    leading = last.body[:-1]
    if leading:
        statements.append(last.with_changes(body=list(leading)))
    value = returns[0].value
    setup_body = list(setup.body.body)
    if isinstance(value, cst.Name) and value.value not in _names(setup):
        # return result: setup_context's output is forward's result
        setup_body = [s.visit(_Rename(output_name, value.value)) for s in setup_body]
        output_name = value.value
    else:
        statements.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(output_name))], value)]))
    first = setup_body[0]
    if isinstance(first, cst.SimpleStatementLine) and len(first.body) == 1 and _unpacks(first.body[0], inputs_name,
                                                                                        params):
        setup_body = setup_body[1:]  # x, alpha = inputs: forward's own parameters
    if inputs_name in _names(setup.body.with_changes(body=setup_body)):
        values = cst.Tuple([cst.Element(cst.Name(n)) for n in params])
        statements.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(inputs_name))], values)]))
    statements.extend(setup_body)
    statements.append(cst.SimpleStatementLine([cst.Return(cst.Name(output_name))]))
    merged = forward.with_changes(
        params=forward.params.with_changes(params=[cst.Param(cst.Name(ctx_name)), *forward.params.params]),
        body=forward.body.with_changes(body=statements),
    )
    body = [merged if s is forward else s for s in node.body.body if s is not setup]
    made = output_name if output_name == setup_params[2] else None  # forward's own name stays as written
    return node.with_changes(body=node.body.with_changes(body=body)), made


def _without_input_names(backward: cst.FunctionDef, inputs: set) -> cst.FunctionDef:
    """backward with its gradient parameters that share a name with one of forward's
    inputs renamed: bprop takes both, and in backward the name is the gradient."""
    taken = inputs | set(_params(backward)) | {_star(backward)} | _names(backward.body)
    for name in [*_params(backward)[1:], _star(backward)]:
        if name is not None and name in inputs:
            new = _fresh((f"grad_{name}", f"d_{name}", f"_grad_{name}"), taken)
            taken.add(new)
            backward = backward.visit(_Rename(name, new))
    return backward


class _Rename(cst.CSTTransformer):
    def __init__(self, old: str, new: str):
        super().__init__()
        self.old, self.new = old, new

    def leave_Attribute(self, original_node, updated_node):
        return updated_node.with_changes(attr=original_node.attr)  # a.output is no name

    def leave_Arg(self, original_node, updated_node):
        return updated_node.with_changes(keyword=original_node.keyword)  # f(output=...) names a parameter

    def leave_Name(self, original_node, updated_node):
        return updated_node.with_changes(value=self.new) if updated_node.value == self.old else updated_node


class _FoldReturn(cst.CSTTransformer):
    """``output = expr`` then ``return output``, ``output`` read nowhere else: ``return expr``."""

    def __init__(self, name: str):
        super().__init__()
        self.name = name

    def leave_IndentedBlock(self, original_node, updated_node):
        body = list(updated_node.body)
        if len(body) < 2 or not all(isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 for s in body[-2:]):
            return updated_node
        assign, ret = body[-2].body[0], body[-1].body[0]
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and _is_name(assign.targets[0].target,
                self.name) and isinstance(ret, cst.Return) and _is_name(ret.value, self.name)):
            return updated_node
        if self.name in _names(updated_node.with_changes(body=body[:-2])) or self.name in _names(assign.value):
            return updated_node
        folded = body[-1].with_changes(body=[ret.with_changes(value=assign.value)],
                                       leading_lines=body[-2].leading_lines)
        return updated_node.with_changes(body=[*body[:-2], folded])

    def visit_FunctionDef(self, node) -> bool:
        return False


def _unpacks(statement: cst.BaseSmallStatement, name: str, params: list[str]) -> bool:
    """``a, b = name`` with ``a, b`` the parameters ``params``."""
    if not (isinstance(statement, cst.Assign) and len(statement.targets) == 1 and _is_name(statement.value, name)):
        return False
    target = statement.targets[0].target
    return isinstance(target, (cst.Tuple, cst.List)) and [
        e.value.value if isinstance(e.value, cst.Name) and not isinstance(e, cst.StarredElement) else None
        for e in target.elements] == params


def _methods(node: cst.ClassDef) -> dict[str, cst.FunctionDef]:
    if not isinstance(node.body, cst.IndentedBlock):
        return {}
    return {s.name.value: s for s in node.body.body if isinstance(s, cst.FunctionDef)}


def _format_changed(ctx, before: cst.FunctionDef, after: cst.FunctionDef) -> cst.FunctionDef:
    """Black formats the simple statements of ``after`` that are not those of ``before``."""
    kept = {id(line) for line in _lines(before)}
    for line in _lines(after):
        if id(line) not in kept:
            ctx.to_format.add(line)
    return after


def _lines(node: cst.CSTNode) -> list[cst.SimpleStatementLine]:
    found: list[cst.SimpleStatementLine] = []

    class Lines(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, line: cst.SimpleStatementLine) -> bool:
            found.append(line)
            return False

    node.visit(Lines())
    return found


def _params(function: cst.FunctionDef) -> list[str]:
    return [p.name.value for p in function.params.params]


def _takes_more(function: cst.FunctionDef) -> bool:
    """``*args``, ``**kwargs`` or keyword-only parameters: bprop's signature cannot follow them."""
    params = function.params
    return isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None or bool(params.kwonly_params) \
        or bool(params.posonly_params)


def _takes_keywords(function: cst.FunctionDef) -> bool:
    """``**kwargs``, keyword-only or positional-only parameters."""
    params = function.params
    return params.star_kwarg is not None or bool(params.kwonly_params) or bool(params.posonly_params)


def _star(function: cst.FunctionDef) -> str | None:
    """The name of ``*args``, if the function takes it."""
    star = function.params.star_arg
    return star.name.value if isinstance(star, cst.Param) else None


def _without_classmethods(node: cst.ClassDef) -> cst.ClassDef:
    """``@classmethod def forward(cls, ctx, ...)`` as the staticmethod torch calls the same
    way: ``forward(ctx, ...)``. One that reads its class is marked."""
    methods = _methods(node)
    replaced = {}
    for name in ("forward", "backward", "setup_context"):
        function = methods.get(name)
        if function is None or not any(chain_parts(d.decorator) == ["classmethod"] for d in function.decorators):
            continue
        params = function.params.params
        if not params:
            raise Unconvertible(f"classmethod {name} without a class parameter: convert by hand")
        cls = params[0].name.value
        if cls in _names(function.body):
            raise Unconvertible(f"classmethod {name} reads its class {cls}: convert by hand")
        decorators = [d.with_changes(decorator=cst.Name("staticmethod"))
                      if chain_parts(d.decorator) == ["classmethod"] else d for d in function.decorators]
        replaced[id(function)] = function.with_changes(
            decorators=decorators, params=function.params.with_changes(params=params[1:]))
    if not replaced:
        return node
    return node.with_changes(body=node.body.with_changes(body=[replaced.get(id(s), s) for s in node.body.body]))


def _returns_tuple(forward: cst.FunctionDef) -> bool:
    """Every ``return`` of forward gives a tuple: a tuple display, ``tuple(...)``, or a name
    forward binds only to those."""
    returns = [s for s in _simple_statements(forward.body) if isinstance(s, cst.Return)]
    if not returns:
        return False
    assigned: dict[str, list[cst.BaseExpression]] = {}
    for statement in _simple_statements(forward.body):
        if isinstance(statement, cst.Assign):
            for target in statement.targets:
                if isinstance(target.target, cst.Name):
                    assigned.setdefault(target.target.value, []).append(statement.value)
    counts = _assignment_counts(forward.body)

    def is_tuple(value) -> bool:
        return isinstance(value, cst.Tuple) or (isinstance(value, cst.Call) and _is_name(value.func, "tuple"))

    for statement in returns:
        value = statement.value
        if is_tuple(value):
            continue
        if isinstance(value, cst.Name) and value.value in assigned \
                and counts.get(value.value) == len(assigned[value.value]) \
                and all(is_tuple(v) for v in assigned[value.value]):
            continue
        return False
    return True


class _OneBody(cst.CSTTransformer):
    """A transformer of one function's body, not of the functions or lambdas in it
    (they have their own names); a block it leaves empty holds ``pass``."""

    def leave_IndentedBlock(self, original_node, updated_node):
        if not updated_node.body:
            return updated_node.with_changes(body=[cst.SimpleStatementLine([cst.Pass()])])
        return updated_node

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False


class _DropRequiresGrad(_OneBody):
    """forward's ``t.requires_grad_()`` statements go (see ``_requires_grad_call``), and a
    ``for t in ts:`` loop that held nothing else."""

    def leave_For(self, original_node, updated_node):
        body = original_node.body
        if isinstance(body, cst.IndentedBlock) and original_node.orelse is None \
                and isinstance(original_node.iter, cst.Name) and all(
                    isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and _requires_grad_call(s.body[0])
                    for s in body.body):
            return cst.RemoveFromParent()
        return updated_node

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if len(original_node.body) == 1 and _requires_grad_call(original_node.body[0]):
            return cst.RemoveFromParent()
        return updated_node


def _construct(forward: cst.FunctionDef, ctx_name: str, inputs: int | None, kept: "_Kept",
               dropped) -> cst.FunctionDef:
    body = forward.body.visit(_DropRequiresGrad())
    body = body.visit(_CtxToSelf(ctx_name, inputs, kept, dropped)).visit(_AlwaysTrue())
    params = forward.params.params
    return forward.with_changes(
        name=cst.Name("construct"),
        decorators=_without_staticmethod(forward),
        params=forward.params.with_changes(params=[params[0].with_changes(name=cst.Name("self")), *params[1:]]),
        body=body,
    )


class _Signature:
    """What bprop is given: forward's inputs (and ``*star_in``), the output's gradients
    as backward names them (and ``*star_grads``); ``output_tuple``: forward returns a tuple."""

    def __init__(self, inputs, star_in, grads, star_grads, output_tuple):
        self.inputs, self.star_in, self.grads, self.star_grads = inputs, star_in, grads, star_grads
        self.output_tuple = output_tuple


def _fresh(names, taken) -> str:
    return next(n for n in names if n not in taken)


def _assign_line(targets: list[str], values: list[cst.BaseExpression]) -> cst.SimpleStatementLine:
    if len(targets) == 1:
        target, value = cst.Name(targets[0]), values[0]
    else:
        target = cst.Tuple([cst.Element(cst.Name(t)) for t in targets], lpar=[], rpar=[])
        value = cst.Tuple([cst.Element(v) for v in values], lpar=[], rpar=[])
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(target)], value)])


def _item(name: str, index) -> cst.Subscript:
    """``name[index]``, or ``name[start:stop]`` for a (start, stop) pair."""
    if isinstance(index, tuple):
        start, stop = (None if i is None or i == 0 and n == 0 else _integer(i) for n, i in enumerate(index))
        element = cst.SubscriptElement(cst.Slice(lower=start, upper=stop))
    else:
        element = cst.SubscriptElement(cst.Index(_integer(index)))
    return cst.Subscript(cst.Name(name), [element])


def _integer(value: int) -> cst.BaseExpression:
    return cst.Integer(str(value)) if value >= 0 else cst.UnaryOperation(cst.Minus(), cst.Integer(str(-value)))


def _bprop(backward: cst.FunctionDef, ctx_name: str, signature: _Signature, out: str,
           kept: "_Kept") -> cst.FunctionDef:
    inputs, grads = signature.inputs, signature.grads
    count = None if signature.star_in is not None else len(inputs)
    body = backward.body.visit(_CtxToSelf(ctx_name, count, kept)).visit(_AlwaysTrue())
    if kept.saved is not None or kept.attributes:
        body = body.visit(_PlainAssignments())
    taken = set(inputs) | set(grads) | {signature.star_in, signature.star_grads, out} | _names(body)
    unpack = []
    if signature.star_grads is None and len(grads) == 1:
        dout = grads[0]
    elif signature.star_grads is None:
        dout = _fresh(("dout", "_dout", "__dout"), taken)
        targets = cst.Tuple([cst.Element(cst.Name(g)) for g in grads], lpar=[], rpar=[])
        unpack = [cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(targets)], cst.Name(dout))])]
    elif not grads and signature.output_tuple:
        dout = signature.star_grads  # a tuple output's gradient is a tuple
    elif not grads:
        # one gradient, or a tuple of them: torch's *grads is a tuple either way
        dout = _fresh(("dout", "_dout", "__dout"), taken)
        one = cst.Tuple([cst.Element(cst.Name(dout))])
        is_tuple = cst.Call(cst.Name("isinstance"), [cst.Arg(cst.Name(dout)), cst.Arg(cst.Name("tuple"))])
        unpack = [_assign_line([signature.star_grads], [cst.IfExp(is_tuple, cst.Name(dout), one)])]
    elif signature.output_tuple:
        dout = _fresh(("dout", "_dout", "__dout"), taken)
        values = [_item(dout, i) for i in range(len(grads))] + [_item(dout, (len(grads), None))]
        unpack = [_assign_line([*grads, signature.star_grads], values)]
    else:
        raise Unconvertible("backward takes named gradients and *args of a forward that may return one tensor: "
                            "convert by hand")
    body = body.visit(_ReturnTuple(count, signature.star_grads))
    if signature.star_in is None:
        params = [cst.Param(cst.Name(n)) for n in ("self", *inputs, out, dout)]
    else:
        args = _fresh(("args", "_args", "__args"), taken | {dout})
        n = len(inputs)
        values = [_item(args, i) for i in range(n)] + [_item(args, (n, -2)), _item(args, -2), _item(args, -1)]
        read = _names(body.with_changes(body=[*unpack, *body.body])) if isinstance(body, cst.IndentedBlock) \
            else _names(body)
        used = [(t, v) for t, v in zip([*inputs, signature.star_in, out, dout], values) if t in read]
        if used:  # what the body reads of bprop's arguments
            unpack = [_assign_line([t for t, _ in used], [v for _, v in used]), *unpack]
        params = [cst.Param(cst.Name("self"))]
    if isinstance(body, cst.IndentedBlock):
        body = body.with_changes(body=[*unpack, *body.body])
    elif unpack:
        raise Unconvertible("a one-line backward that needs its gradients unpacked: convert by hand")
    parameters = cst.Parameters(params=params)
    if signature.star_in is not None:
        parameters = parameters.with_changes(star_arg=cst.Param(cst.Name(args)))
    return backward.with_changes(
        name=cst.Name("bprop"),
        decorators=_without_staticmethod(backward),
        params=parameters,
        body=body,
    )


def _without_staticmethod(function: cst.FunctionDef) -> list[cst.Decorator]:
    """The decorators but ``@staticmethod`` and ``@once_differentiable`` (which
    only forbids a second derivative through the backward: first-order
    gradients are the same without it)."""
    kept = []
    for decorator in function.decorators:
        parts = chain_parts(decorator.decorator)
        if parts == ["staticmethod"] or (parts is not None and parts[-1] == "once_differentiable"):
            continue
        kept.append(decorator)
    return kept


# -- what forward keeps that bprop is given anyway ---------------------------------

class _Kept:
    """What ``forward`` keeps on ctx that MindSpore passes to ``bprop`` anyway:
    ``saved``, the expressions ``ctx.saved_tensors`` stands for (inputs, and the
    output as ``out``), or None; ``attributes``, ``ctx.A`` -> the input it holds.
    Read from bprop's arguments, they need no state on the Cell (which a
    construct compiled in graph mode cannot set for its bprop)."""

    def __init__(self, saved: list[str] | None = None, attributes: dict[str, str] | None = None):
        self.saved = saved
        self.attributes = attributes or {}


def _unread_gradients(forward: cst.FunctionDef, backward: cst.FunctionDef) -> bool:
    """Every output ``ctx.mark_non_differentiable`` names is returned by name (``return
    out, idx``) and backward never reads its gradient: torch gives it none (zeros) and
    MindSpore's bprop, given one, ignores it; the call can go."""
    ctx_name = _params(forward)[0]
    marked = [s.value for s in _simple_statements(forward.body) if isinstance(s, cst.Expr)
              and isinstance(s.value, cst.Call) and _ctx_attribute(s.value.func, ctx_name) == "mark_non_differentiable"]
    if not marked:
        return False
    names = [a.value for call in marked for a in call.args]
    if not all(isinstance(n, cst.Name) for n in names):
        return False
    grads, read = _params(backward)[1:], _names(backward.body)
    for statement in _simple_statements(forward.body):
        if not isinstance(statement, cst.Return) or statement.value is None:
            continue
        value = statement.value
        outputs = [e.value for e in value.elements] if isinstance(value, cst.Tuple) else [value]
        for name in names:
            positions = [i for i, o in enumerate(outputs) if _is_name(o, name.value)]
            if not positions or len(grads) != len(outputs):
                return False
            if any(grads[i] in read for i in positions):
                return False
    return True


def _kept_as_arguments(forward: cst.FunctionDef, backward: cst.FunctionDef, out: str) -> _Kept:
    ctx_name, inputs, star = _params(forward)[0], _params(forward)[1:], _star(forward)
    rebound = _bound_names(forward.body)
    free = [name for name in inputs if name not in rebound]
    star_free = [star] if star is not None and star not in rebound else []  # bprop is given it too
    saves, assigned = [], {}
    for statement in _simple_statements(forward.body):
        if isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call) \
                and _ctx_attribute(statement.value.func, ctx_name) == "save_for_backward":
            saves.append(statement.value)
        elif isinstance(statement, cst.Assign) and len(statement.targets) == 1:
            attribute = _ctx_attribute(statement.targets[0].target, ctx_name)
            if attribute is not None:
                assigned.setdefault(attribute, []).append(statement.value)
    returned = _returned_name(forward, rebound)
    saved = None
    if len(saves) == 1 and all(not a.star and isinstance(a.value, cst.Name) for a in saves[0].args):
        names = [a.value.value for a in saves[0].args]
        if all(n in free or n == returned for n in names):
            saved = [n if n in free else out for n in names]
    attributes = {a: values[0].value for a, values in assigned.items()
                  if len(values) == 1 and isinstance(values[0], cst.Name) and values[0].value in free + star_free}
    backward_ctx = _params(backward)[0] if _params(backward) else None
    # MindSpore gives a bprop None for an input that is a function or a Cell (measured): what
    # backward calls stays on the Cell
    called = {_ctx_attribute(c.func, backward_ctx) for c in _calls(backward.body)} if backward_ctx else set()
    callables = _called_inputs(forward.body, free + star_free)
    attributes = {a: name for a, name in attributes.items() if a not in called and name not in callables}
    # backward must not rebind what these names are in bprop (the unpacking of saved_tensors aside)
    bound = _bound_names(backward.body, skip_unpacking_of=backward_ctx)
    targets = set(attributes.values()) | set(saved or ())
    if bound & targets or _assigns_ctx(backward.body, backward_ctx):
        return _Kept()
    return _Kept(saved, attributes)


def _called_inputs(body: cst.CSTNode, inputs: list[str]) -> set[str]:
    """The inputs forward calls: ``fn(...)``, ``fns[i](...)``, or, iterating them,
    what they hold (``for block in blocks: x = block(x)``): functions and Cells."""
    found: set[str] = set()

    def input_of(node) -> str | None:
        if isinstance(node, cst.Subscript):
            node = node.value
        return node.value if isinstance(node, cst.Name) and node.value in inputs else None

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            name = input_of(node.func)
            if name is not None:
                found.add(name)

        def visit_For(self, node: cst.For) -> None:
            name = input_of(node.iter)
            if name is not None and isinstance(node.target, cst.Name) \
                    and any(_is_name(c.func, node.target.value) for c in _calls(node.body)):
                found.add(name)

    body.visit(Calls())
    return found


def _returned_name(forward: cst.FunctionDef, rebound: set[str]) -> str | None:
    """``r`` when forward's one return is ``return r`` and ``r`` is assigned once."""
    returns = [s for s in _simple_statements(forward.body) if isinstance(s, cst.Return)]
    if len(returns) != 1 or not isinstance(returns[0].value, cst.Name):
        return None
    name = returns[0].value.value
    counts = _assignment_counts(forward.body)
    return name if counts.get(name) == 1 else None


def _simple_statements(body: cst.CSTNode) -> list[cst.BaseSmallStatement]:
    found: list[cst.BaseSmallStatement] = []

    class Small(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, line) -> bool:
            found.extend(line.body)
            return False

        def visit_SimpleStatementSuite(self, suite) -> bool:
            found.extend(suite.body)
            return False

        def visit_FunctionDef(self, node) -> bool:
            return False

        def visit_ClassDef(self, node) -> bool:
            return False

    body.visit(Small())
    return found


class _Bindings(LocalBindings):
    """How often each name is bound in a function body (``del`` counts); with
    ``skip_unpacking_of``, not the names unpacked from that ctx's ``saved_tensors``."""

    def __init__(self, skip_unpacking_of: str | None = None):
        super().__init__()
        self.counts: dict[str, int] = {}
        self.skip = skip_unpacking_of

    def bind(self, name: str, definition) -> None:
        self.counts[name] = self.counts.get(name, 0) + 1

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.skip is None or not _saved_tensors_read(node.value, self.skip):
            super().visit_Assign(node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self.bind_target(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self.bind_target(node.target)


def _bound_names(body: cst.CSTNode, skip_unpacking_of: str | None = None) -> set[str]:
    bindings = _Bindings(skip_unpacking_of)
    body.visit(bindings)
    return set(bindings.counts)


def _assignment_counts(body: cst.CSTNode) -> dict[str, int]:
    bindings = _Bindings()
    body.visit(bindings)
    return bindings.counts


def _saved_tensors_read(value: cst.CSTNode, ctx_name: str) -> bool:
    """``ctx.saved_tensors`` or ``ctx.saved_tensors[i]``."""
    if isinstance(value, cst.Subscript):
        value = value.value
    return _ctx_attribute(value, ctx_name) in ("saved_tensors", "saved_variables")


def _assigns_ctx(body: cst.CSTNode, ctx_name: str | None) -> bool:
    return ctx_name is not None and any(
        isinstance(s, cst.Assign) and any(_ctx_attribute(t.target, ctx_name) for t in s.targets)
        for s in _simple_statements(body))


class _PlainAssignments(_OneBody):
    """What reading bprop's arguments left: ``x, = (x,)`` goes, ``a, b = (x, out)`` is
    ``a, b = x, out``, ``(x,)[0]`` is ``x``."""

    def leave_Subscript(self, original_node, updated_node):
        if isinstance(updated_node.value, cst.Tuple) and len(updated_node.slice) == 1:
            index = updated_node.slice[0].slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer):
                position = int(index.value.value)
                if position < len(updated_node.value.elements):
                    return updated_node.value.elements[position].value
        return updated_node

    def leave_Assign(self, original_node, updated_node):
        if len(updated_node.targets) != 1:
            return updated_node
        target, value = updated_node.targets[0].target, updated_node.value
        if isinstance(target, cst.Name) and isinstance(value, cst.Name) and target.value == value.value:
            return cst.RemoveFromParent()
        if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, cst.Tuple)):
            return updated_node
        names = [e.value for e in target.elements]
        values = [e.value for e in value.elements]
        if len(names) != len(values) or any(isinstance(e, cst.StarredElement) for e in (*target.elements,
                                                                                         *value.elements)):
            return updated_node
        if all(isinstance(n, cst.Name) and isinstance(v, cst.Name) and n.value == v.value
               for n, v in zip(names, values)):
            return cst.RemoveFromParent()
        if len(names) == 1:
            return updated_node.with_changes(targets=[cst.AssignTarget(names[0])], value=values[0])
        return updated_node.with_changes(
            targets=[cst.AssignTarget(target.with_changes(lpar=[], rpar=[]))],
            value=value.with_changes(lpar=[], rpar=[]))

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if not updated_node.body:
            return cst.RemoveFromParent()
        return updated_node


# -- gradient checkpointing written as a Function ---------------------------------

def recomputed_function(node: cst.ClassDef, analysis) -> str | None:
    """The parameter of ``forward`` holding the function a gradient-checkpoint
    Function runs, if ``node`` is one: ``forward(ctx, fn, ...)`` calls ``fn``
    (directly or as ``ctx.A`` after ``ctx.A = fn``), and ``backward`` calls it
    again (``ctx.A(...)``) and takes ``torch.autograd.grad`` of what it gives.
    Such a backward is the gradient of the forward's function: MindSpore's own
    autodiff gives it."""
    methods = _methods(node)
    forward, backward = methods.get("forward"), methods.get("backward")
    if forward is None or backward is None or not isinstance(forward.body, cst.IndentedBlock):
        return None
    params, backward_params = _params(forward), _params(backward)
    if len(params) < 2 or not backward_params or _default_or_star(forward, 2):
        return None
    ctx_name, function = params[0], params[1]
    stored = _stored_as(forward.body, ctx_name, function)
    forward_calls = _calls(forward.body)
    if not stored or not any(_callee(c, ctx_name, stored) or _is_name(c.func, function) for c in forward_calls):
        return None
    backward_calls = _calls(backward.body)
    if not any(_callee(c, backward_params[0], stored) for c in backward_calls):
        return None
    if not any(_resolve(c.func, analysis) in _AUTOGRAD_GRAD for c in backward_calls):
        return None
    return function


def _recompute_cell(ctx, node, base, forward, backward, function: str) -> cst.ClassDef:
    ctx_name = _params(forward)[0]
    if ctx_name != "self" and "self" in _names(forward):
        raise Unconvertible("forward uses a name self besides ctx: rename it, then convert")
    stored = _stored_as(forward.body, ctx_name, function)
    attributes = _CtxAttributes(ctx_name)
    forward.body.visit(attributes)
    locals_ = attributes.read - stored
    unset = locals_ - attributes.assigned
    if unset:
        raise Unconvertible(f"forward reads ctx.{sorted(unset)[0]}, which it does not set: convert by hand")
    taken = _names(forward) - {ctx_name}
    clash = sorted(name for name in locals_ if name in taken)
    if clash:
        raise Unconvertible(f"ctx.{clash[0]} would become a local variable {clash[0]}, a name forward already uses")
    recompute = ctx.ref("mindspore.recompute")
    body = forward.body.visit(_RecomputeForward(ctx_name, function, stored, locals_, recompute))
    params = forward.params.params
    construct = _format_changed(ctx, forward, forward.with_changes(
        name=cst.Name("construct"),
        decorators=_without_staticmethod(forward),
        params=forward.params.with_changes(params=[params[0].with_changes(name=cst.Name("self")), *params[1:]]),
        body=body,
    ))
    statements = [construct if s is forward else s for s in node.body.body if s is not backward]
    cell = ctx.ref("mindspore.nn.Cell")
    bases = [b.with_changes(value=cell) if b is base else b for b in node.bases]
    ctx.report(node.name, "torch.autograd.Function", Severity.INFO,
               f"{node.name.value} is gradient checkpointing: its construct runs {function} under "
               "mindspore.recompute, which recomputes the activations in the backward pass and gives the same "
               "values and gradients; the hand-written backward (torch.autograd.grad of the recomputed "
               "function) is MindSpore's autodiff and is dropped")
    return node.with_changes(bases=bases, body=node.body.with_changes(body=statements))


def _default_or_star(function: cst.FunctionDef, count: int) -> bool:
    """One of the first ``count`` parameters has a default, or there are fewer."""
    params = function.params.params
    return len(params) < count or any(p.default is not None for p in params[:count])


def _is_name(node: cst.CSTNode, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _ctx_attribute(node: cst.CSTNode, ctx_name: str) -> str | None:
    """``A`` for ``ctx.A``."""
    if isinstance(node, cst.Attribute) and _is_name(node.value, ctx_name):
        return node.attr.value
    return None


def _stored_as(body: cst.CSTNode, ctx_name: str, function: str) -> set[str]:
    """The ctx attributes ``forward`` sets to the function (``ctx.run_function = run_function``)."""
    stored: set[str] = set()

    class Stores(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            if len(node.targets) == 1 and _is_name(node.value, function):
                attribute = _ctx_attribute(node.targets[0].target, ctx_name)
                if attribute is not None:
                    stored.add(attribute)

    body.visit(Stores())
    return stored


def _calls(body: cst.CSTNode) -> list[cst.Call]:
    found: list[cst.Call] = []

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            found.append(node)

    body.visit(Calls())
    return found


def _callee(call: cst.Call, ctx_name: str, stored: set[str]) -> bool:
    return _ctx_attribute(call.func, ctx_name) in stored


def _resolve(func: cst.CSTNode, analysis) -> str | None:
    """The qualified name a callee refers to, through the file's imports."""
    qualified = analysis.qualified(func)
    if qualified is not None:
        return qualified
    parts = chain_parts(func)
    binding = analysis.imports.get(parts[0]) if parts else None
    return ".".join([binding.qualified, *parts[1:]]) if binding is not None else None


class _CtxAttributes(cst.CSTVisitor):
    """The ctx attributes a forward sets (``ctx.A = ...``) and reads."""

    def __init__(self, ctx_name: str):
        super().__init__()
        self.ctx_name = ctx_name
        self.assigned: set[str] = set()
        self.read: set[str] = set()
        self._targets: set[int] = set()

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        attribute = _ctx_attribute(node.target, self.ctx_name)
        if attribute is not None:
            self.assigned.add(attribute)
            self._targets.add(id(node.target))

    def visit_Call(self, node: cst.Call) -> None:
        if _ctx_attribute(node.func, self.ctx_name) in _CTX_CALLS:
            self._targets.add(id(node.func))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        attribute = _ctx_attribute(node, self.ctx_name)
        if attribute is not None and id(node) not in self._targets:
            self.read.add(attribute)


class _RecomputeForward(_OneBody):
    """A checkpoint Function's forward as a construct: ``ctx.A = fn`` goes
    (``ctx.A`` is ``fn``), what forward keeps on ctx for itself is a local
    variable, what it keeps for backward goes, and ``fn(...)`` runs under
    ``mindspore.recompute``."""

    def __init__(self, ctx_name: str, function: str, stored: set[str], locals_: set[str], recompute):
        super().__init__()
        self.ctx_name, self.function, self.stored, self.locals = ctx_name, function, stored, locals_
        self.recompute = recompute

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if not updated_node.body:
            return cst.RemoveFromParent()
        return updated_node

    def leave_Assign(self, original_node, updated_node):
        if len(original_node.targets) == 1:
            attribute = _ctx_attribute(original_node.targets[0].target, self.ctx_name)
            if attribute is not None and attribute not in self.locals:
                return cst.RemoveFromParent()  # the function itself, or kept for backward alone
        return updated_node

    def leave_Expr(self, original_node, updated_node):
        call = original_node.value
        if isinstance(call, cst.Call) and _ctx_attribute(call.func, self.ctx_name) in _CTX_CALLS:
            return cst.RemoveFromParent()  # save_for_backward and the like: for backward alone
        return updated_node

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return not _is_name(node.value, self.ctx_name)

    def leave_Attribute(self, original_node, updated_node):
        attribute = _ctx_attribute(updated_node, self.ctx_name)
        if attribute in self.stored:
            return cst.Name(self.function)
        if attribute in self.locals:
            return cst.Name(attribute)
        return updated_node

    def leave_Name(self, original_node, updated_node):
        if updated_node.value == self.ctx_name:
            raise Unconvertible("ctx is passed on or stored: convert by hand")
        return updated_node

    def leave_Call(self, original_node, updated_node):
        if _is_name(updated_node.func, self.function):
            return updated_node.with_changes(
                func=self.recompute,
                args=[cst.Arg(cst.Name(self.function)), *updated_node.args,
                      keyword_arg("use_reentrant", cst.Name("False")), keyword_arg("early_stop", cst.Name("False"))],
            )
        return updated_node


def _names(node: cst.CSTNode) -> set[str]:
    """The names used in ``node`` (not the attribute names of ``a.b``)."""
    found: set[str] = set()

    class Names(cst.CSTVisitor):
        def visit_Name(self, name: cst.Name) -> None:
            found.add(name.value)

        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            attribute.value.visit(self)
            return False

    node.visit(Names())
    return found


class _CtxToSelf(_OneBody):
    """``ctx.x`` -> ``self.x``; ``ctx.save_for_backward(a, b)`` -> ``self.saved_tensors = (a, b)``;
    ``ctx.needs_input_grad`` -> True for each input (a bprop gives every input's gradient);
    ``ctx.set_materialize_grads(...)`` goes (MindSpore passes zeros, which is what None means)."""

    def __init__(self, ctx_name: str, inputs: int, kept: _Kept | None = None, dropped=_CTX_DROPPED):
        super().__init__()
        self.ctx_name = ctx_name
        self.inputs = inputs
        self.kept = kept or _Kept()
        self.dropped = dropped

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return not _is_name(node.value, self.ctx_name)

    def leave_Attribute(self, original_node, updated_node):
        attribute = _ctx_attribute(updated_node, self.ctx_name)
        if attribute is None:
            return updated_node
        if attribute in self.kept.attributes:
            return cst.Name(self.kept.attributes[attribute])  # an input: bprop is given it
        if attribute in ("saved_tensors", "saved_variables") and self.kept.saved is not None:
            return cst.Tuple([cst.Element(cst.Name(n)) for n in self.kept.saved])
        if attribute in self.dropped:
            raise Unconvertible(f"ctx.{attribute} used other than as a statement: convert by hand")
        if attribute == "mark_non_differentiable":
            raise Unconvertible("ctx.mark_non_differentiable: backward reads the gradient of an output torch "
                                "gives none, or the output is not returned by name: convert by hand")
        if attribute in _CTX_UNSUPPORTED:
            raise Unconvertible(f"ctx.{attribute} has no MindSpore bprop counterpart")
        if attribute == "needs_input_grad":
            if self.inputs is None:
                raise Unconvertible("ctx.needs_input_grad of a forward taking *args: convert by hand")
            return cst.Tuple([cst.Element(cst.Name("True")) for _ in range(self.inputs)])
        if attribute == "saved_variables":
            return updated_node.with_changes(value=cst.Name("self"), attr=cst.Name("saved_tensors"))
        return updated_node.with_changes(value=cst.Name("self"))

    def leave_Subscript(self, original_node, updated_node):
        # ctx.needs_input_grad[0] -> True
        if _ctx_attribute(original_node.value, self.ctx_name) == "needs_input_grad" and len(updated_node.slice) == 1:
            index = updated_node.slice[0].slice
            if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer):
                return cst.Name("True")
        return updated_node

    def leave_Name(self, original_node, updated_node):
        if updated_node.value == self.ctx_name:
            raise Unconvertible("ctx is passed on or stored: convert by hand")
        return updated_node

    def visit_Expr(self, node: cst.Expr) -> bool:
        return not (isinstance(node.value, cst.Call) and _ctx_attribute(node.value.func, self.ctx_name) in self.dropped)

    def leave_Assign(self, original_node, updated_node):
        if len(original_node.targets) == 1:
            attribute = _ctx_attribute(original_node.targets[0].target, self.ctx_name)
            if attribute is not None and attribute in self.kept.attributes:
                return cst.RemoveFromParent()  # ctx.alpha = alpha: bprop is given alpha
        return updated_node

    def leave_Expr(self, original_node, updated_node):
        call = updated_node.value
        if isinstance(call, cst.Call) and _ctx_attribute(call.func, self.ctx_name) in self.dropped:
            return cst.RemoveFromParent()
        if isinstance(original_node.value, cst.Call) and self.kept.saved is not None \
                and _ctx_attribute(original_node.value.func, self.ctx_name) == "save_for_backward":
            return cst.RemoveFromParent()  # bprop is given the inputs and the output
        if isinstance(call, cst.Call) and _ctx_attribute(call.func, "self") == "save_for_backward":
            saved = cst.Tuple([cst.StarredElement(a.value) if a.star == "*" else cst.Element(a.value)
                               for a in call.args])
            target = cst.AssignTarget(cst.Attribute(cst.Name("self"), cst.Name("saved_tensors")))
            return cst.Assign([target], saved)
        return updated_node

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if not updated_node.body:
            return cst.RemoveFromParent()
        return updated_node


class _AlwaysTrue(cst.CSTTransformer):
    """What ``ctx.needs_input_grad[i]`` left: ``if True:`` keeps its body,
    ``c and True`` is ``c``."""

    def __init__(self):
        super().__init__()
        self.elifs: set[int] = set()

    def visit_If(self, node: cst.If) -> None:
        if isinstance(node.orelse, cst.If):
            self.elifs.add(id(node.orelse))

    def leave_BooleanOperation(self, original_node, updated_node):
        if isinstance(updated_node.operator, cst.And):
            if _is_name(updated_node.left, "True"):
                return updated_node.right
            if _is_name(updated_node.right, "True"):
                return updated_node.left
        return updated_node

    def leave_If(self, original_node, updated_node):
        if id(original_node) in self.elifs or not _is_name(updated_node.test, "True"):
            return updated_node
        body = updated_node.body
        if isinstance(body, cst.IndentedBlock):
            statements = list(body.body)
        else:
            statements = [cst.SimpleStatementLine(list(body.body))]
        first = statements[0]
        statements[0] = first.with_changes(leading_lines=[*updated_node.leading_lines, *first.leading_lines])
        return cst.FlattenSentinel(statements)

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False


class _ReturnTuple(cst.CSTTransformer):
    """bprop returns one gradient per input, always as a tuple."""

    def __init__(self, inputs: int | None, star_grads: str | None = None):
        super().__init__()
        self.inputs = inputs  # None: forward takes *args
        self.star_grads = star_grads  # backward's *grads: a tuple

    def _is_tuple(self, value: cst.BaseExpression) -> bool:
        """A tuple display, ``tuple(...)``, backward's ``*grads``, or ``+`` of one of them."""
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
            return self._is_tuple(value.left) or self._is_tuple(value.right)
        return isinstance(value, cst.Tuple) or _is_name(value, self.star_grads or "") \
            or (isinstance(value, cst.Call) and _is_name(value.func, "tuple"))

    def leave_Return(self, original_node, updated_node):
        value = updated_node.value
        if value is None or self._is_tuple(value):
            return updated_node
        if self.inputs is None:
            raise Unconvertible("the backward of a forward taking *args returns what may be one tensor: return a "
                                "tuple, then convert")
        if self.inputs == 1:
            return updated_node.with_changes(value=cst.Tuple([cst.Element(value)]))
        return updated_node.with_changes(value=cst.Call(cst.Name("tuple"), [cst.Arg(value)]))

    def visit_FunctionDef(self, node) -> bool:
        return False

    def visit_Lambda(self, node) -> bool:
        return False
