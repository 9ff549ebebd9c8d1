"""torch.optim optimizers -> mindspore.experimental.optim (torch-style ``lr=``,
``betas=``, param groups; they update weights on CPU, where mint.optim silently
does not). The training step itself (zero_grad/backward/step) is rewritten
structurally (transpiler/convert/structural/training_loop.py); the method rules here
mark what is left over outside a recognised step."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P, call_cases
from rewrite_rules.api import (CELL, LAYER, OPTIMIZER, ApiRule, Arg, AttributeRule, Drop, Example, MethodRule, Unconvertible,
                               Unsupported, receiver_origin)

_PERFORMANCE = Drop("implementation choice (foreach/fused kernels, CUDA graphs); no effect on the result")
_COMMON = {
    "foreach": _PERFORMANCE,
    "fused": _PERFORMANCE,
    "capturable": _PERFORMANCE,
    "differentiable": Unsupported("differentiable optimizer steps are not supported"),
}
_NO_MAXIMIZE = {"maximize": Unsupported("maximize= is not supported by this MindSpore optimizer")}
_NO_DECOUPLED = {"decoupled_weight_decay": Unsupported("decoupled_weight_decay: use AdamW instead")}


def _float_literal(expr, ctx):
    """Integer literals as floats (also inside a tuple such as ``betas=(0, 0.99)``):
    these MindSpore optimizers reject an int where torch accepts one."""
    if isinstance(expr, cst.Integer):
        return cst.Float(f"{expr.evaluated_value}.0")
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.expression, cst.Integer):
        return expr.with_changes(expression=_float_literal(expr.expression, ctx))
    if isinstance(expr, cst.Tuple):
        return expr.with_changes(elements=[e.with_changes(value=_float_literal(e.value, ctx)) for e in expr.elements])
    return expr


def _as_float(expr, ctx):
    """A float scalar: literals written as floats, anything else through float()."""
    if isinstance(expr, (cst.Integer, cst.Float)) or (
        isinstance(expr, cst.UnaryOperation) and isinstance(expr.expression, (cst.Integer, cst.Float))
    ):
        return _float_literal(expr, ctx)
    return cst.Call(cst.Name("float"), [cst.Arg(expr)])


_FLOAT_TUPLE = Arg(value=_float_literal)
_FLOAT = Arg(value=_as_float)

# name -> (torch signature, extra argument mapping)
_OPTIMIZERS = {
    "SGD": ("params, lr=0.001, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False, "
            "foreach=None, differentiable=False, fused=None", {"lr": Arg(explicit=True)}),
    "Adam": ("params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0, amsgrad=False, *, foreach=None, "
             "maximize=False, capturable=False, differentiable=False, fused=None, decoupled_weight_decay=False",
             _NO_DECOUPLED),
    "AdamW": ("params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.01, amsgrad=False, *, "
              "maximize=False, foreach=None, capturable=False, differentiable=False, fused=None", {}),
    "Adamax": ("params, lr=0.002, betas=(0.9, 0.999), eps=1e-08, weight_decay=0, foreach=None, *, maximize=False, "
               "differentiable=False, capturable=False", {"betas": _FLOAT_TUPLE}),
    "NAdam": ("params, lr=0.002, betas=(0.9, 0.999), eps=1e-08, weight_decay=0, momentum_decay=0.004, "
              "decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False, differentiable=False",
              {**_NO_MAXIMIZE, **_NO_DECOUPLED, "betas": _FLOAT_TUPLE}),
    "RAdam": ("params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0, decoupled_weight_decay=False, *, "
              "foreach=None, maximize=False, capturable=False, differentiable=False",
              {**_NO_MAXIMIZE, **_NO_DECOUPLED, "betas": _FLOAT_TUPLE}),
    "RMSprop": ("params, lr=0.01, alpha=0.99, eps=1e-08, weight_decay=0, momentum=0, centered=False, "
                "capturable=False, foreach=None, maximize=False, differentiable=False", {}),
    "Rprop": ("params, lr=0.01, etas=(0.5, 1.2), step_sizes=(1e-06, 50), *, capturable=False, foreach=None, "
              "maximize=False, differentiable=False", {}),
    "Adagrad": ("params, lr=0.01, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10, foreach=None, "
                "*, maximize=False, differentiable=False, fused=None", {}),
    "Adadelta": ("params, lr=1.0, rho=0.9, eps=1e-06, weight_decay=0, foreach=None, *, capturable=False, "
                 "maximize=False, differentiable=False", {"rho": _FLOAT}),
    "ASGD": ("params, lr=0.01, lambd=0.0001, alpha=0.75, t0=1000000.0, weight_decay=0, foreach=None, "
             "maximize=False, differentiable=False, capturable=False", {"lambd": _FLOAT, "t0": _FLOAT}),
}

_EXAMPLES = {
    "SGD": (
        Example("opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)",
                "opt = mindspore.experimental.optim.SGD(model.trainable_params(), lr=0.1, momentum=0.9)"),
        Example("opt = torch.optim.SGD(model.parameters())",
                "opt = mindspore.experimental.optim.SGD(model.trainable_params(), lr=0.001)"),
    ),
    "Adam": (
        Example("opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.5, 0.999))",
                "opt = mindspore.experimental.optim.AdamW(\n"
                "    model.trainable_params(), lr=1e-3, betas=(0.5, 0.999), weight_decay=0.0\n)"),
        Example("opt = torch.optim.Adam(model.parameters(), weight_decay=1e-4)",
                "opt = mindspore.experimental.optim.Adam(model.trainable_params(), weight_decay=1e-4)"),
        Example("opt = torch.optim.Adam(model.parameters(), eps=1e-3, weight_decay=1e-4)", marked="non-default eps"),
        Example("opt = torch.optim.Adam(model.parameters(), decoupled_weight_decay=True)", marked="AdamW"),
    ),
    "AdamW": (
        Example(
            'opt = torch.optim.AdamW([{"params": model.body.parameters()}, {"params": model.head.parameters(), '
            '"lr": 1e-3}], lr=1e-4, weight_decay=0.05, fused=True)',
            'opt = mindspore.experimental.optim.AdamW(\n    [\n        {"params": model.body.trainable_params()},\n'
            '        {"params": model.head.trainable_params(), "lr": 1e-3},\n    ],\n    lr=1e-4,\n'
            '    weight_decay=0.05,\n)',
        ),
    ),
}


_ADAM_NOTES = (
    "MindSpore's Adam adds eps to sqrt(v) before v's bias correction (eps * sqrt(1 - beta2^t), the Adam paper's "
    "epsilon-hat) and "
    "ignores amsgrad; its AdamW computes torch's formula. So Adam without weight decay becomes "
    "AdamW(weight_decay=0.0); with L2 weight decay it stays Adam (default eps only, and without amsgrad)"
)


def _adam(call, ctx):
    """Measured after six steps: eps=1e-4 moves the weights by 6e-3 under MindSpore's
    Adam, eps=0.1 by 0.18; amsgrad=True runs plain Adam there."""
    try:
        decay = call.literal("weight_decay")
    except ValueError:
        decay = None  # not a literal: may be L2 decay
    if decay == 0:
        call.target = "mindspore.experimental.optim.AdamW"
        call.set("weight_decay", "0.0")
        return
    try:
        eps, amsgrad = call.literal("eps"), call.literal("amsgrad")
    except ValueError:
        raise Unconvertible("Adam with weight decay and a computed eps or amsgrad: " + _ADAM_NOTES) from None
    if amsgrad is not False or eps != 1e-8:
        raise Unconvertible("Adam with weight decay and amsgrad or a non-default eps: " + _ADAM_NOTES)
    ctx.warn(call.source, "torch.optim.Adam",
             "with L2 weight decay MindSpore's Adam adds eps before the bias correction: updates of weights whose "
             "gradients are near eps=1e-8 differ from torch's")


# Execution cases: each optimizer trains w (3x2) and b (2,) for six steps on the
# same data in both frameworks (the training step is rewritten to
# value_and_grad + optimizer(grads)); the weights after the last step are compared.
_PARAMETERS = "w = nn.Parameter(w0.clone())\nb = nn.Parameter(b0.clone())\n"
_STEPS = (
    "for _ in range(6):\n"
    "    opt.zero_grad()\n"
    "    loss = ((x @ w + b - y) ** 2).mean()\n"
    "    loss.backward()\n"
    "    opt.step()\n"
    "result = (w, b)\n"
)
_TRAINING_INPUTS = {"w0": "randn(3, 2)", "b0": "randn(2)", "x": "randn(4, 3)", "y": "randn(4, 2)"}
_W_B = P("params", "[w, b]")


def _training_cases(constructor: str, params: list[P], **options) -> tuple[Example, ...]:
    """The call shapes of ``constructor`` (``"torch.optim.SGD({args})"``), each in the training run above."""
    return call_cases(f"opt = {constructor}\n" + _STEPS, params, _TRAINING_INPUTS, setup=_PARAMETERS, **options)


def _training_case(constructor: str, **options) -> Example:
    """One training run with ``opt = constructor`` (a complete call)."""
    return Example(_PARAMETERS + f"opt = {constructor}\n" + _STEPS, inputs=_TRAINING_INPUTS, **options)


def _maximize() -> P:
    return P("maximize", "True", default=True, kind="keyword")


_TRAINING = {
    "SGD": (
        *_training_cases("torch.optim.SGD({args})", [
            _W_B, P("lr", "0.1", default=True), P("momentum", "0.9", default=True),
            P("dampening", "0.1", default=True), P("weight_decay", "0.01", default=True)]),
        _training_case("torch.optim.SGD([w, b], lr=0.1, momentum=0.9, nesterov=True, maximize=True)", notes="nesterov"),
    ),
    "Adam": (
        *_training_cases("torch.optim.Adam({args})", [
            _W_B, P("lr", "0.05", default=True), P("betas", "(0.8, 0.99)", default=True),
            P("eps", "1e-4", default=True), _maximize()]),
        _training_case("torch.optim.Adam([w, b], lr=0.05, weight_decay=0, amsgrad=True)", notes="amsgrad"),
        _training_case("torch.optim.Adam([w, b], 0.05, weight_decay=0.01)", notes="L2_weight_decay"),
    ),
    "AdamW": _training_cases("torch.optim.AdamW({args})", [
        _W_B, P("lr", "0.05", default=True), P("betas", "(0.8, 0.99)", default=True), P("eps", "1e-6", default=True),
        P("weight_decay", "0.1", default=True), P("amsgrad", "True", default=True), _maximize()]),
    "Adamax": _training_cases("torch.optim.Adamax({args})", [
        _W_B, P("lr", "0.05", default=True), P("betas", "(0.5, 0.99)", default=True), P("eps", "1e-6", default=True),
        P("weight_decay", "0.01", default=True), _maximize()]) + (
        _training_case("torch.optim.Adamax([w, b], 0.05, (0, 0.99))", notes="integer_beta"),),
    "NAdam": _training_cases("torch.optim.NAdam({args})", [
        _W_B, P("lr", "0.05", default=True), P("betas", "(0.8, 0.99)", default=True), P("eps", "1e-6", default=True),
        P("weight_decay", "0.01", default=True), P("momentum_decay", "0.01", default=True)]),
    "RAdam": _training_cases("torch.optim.RAdam({args})", [
        _W_B, P("lr", "0.05", default=True), P("betas", "(0.8, 0.99)", default=True), P("eps", "1e-6", default=True),
        P("weight_decay", "0.01", default=True)]),
    "RMSprop": _training_cases("torch.optim.RMSprop({args})", [
        _W_B, P("lr", "0.05", default=True), P("alpha", "0.9", default=True), P("eps", "1e-6", default=True),
        P("weight_decay", "0.01", default=True), P("momentum", "0.5", default=True), P("centered", "True", default=True),
        _maximize()]),
    "Rprop": _training_cases("torch.optim.Rprop({args})", [
        _W_B, P("lr", "0.05", default=True), P("etas", "(0.4, 1.3)", default=True),
        P("step_sizes", "(1e-5, 1.0)", default=True), _maximize()]),
    "Adagrad": _training_cases("torch.optim.Adagrad({args})", [
        _W_B, P("lr", "0.1", default=True), P("lr_decay", "0.01", default=True), P("weight_decay", "0.01", default=True),
        P("initial_accumulator_value", "0.1", default=True), P("eps", "1e-8", default=True), _maximize()]),
    "Adadelta": _training_cases("torch.optim.Adadelta({args})", [
        _W_B, P("lr", "0.5", default=True), P("rho", "0.8", default=True), P("eps", "1e-5", default=True),
        P("weight_decay", "0.01", default=True), _maximize()]),
    "ASGD": _training_cases("torch.optim.ASGD({args})", [
        _W_B, P("lr", "0.05", default=True), P("lambd", "0.001", default=True), P("alpha", "0.7", default=True),
        P("t0", "2", default=True), P("weight_decay", "0.01", default=True), _maximize()]),
}


def _optimizer_rule(name: str) -> ApiRule:
    signature, args = _OPTIMIZERS[name]
    notes = "torch-style optimizer; called with the gradients: optimizer(grads)"
    return ApiRule(
        f"torch.optim.{name}",
        f"mindspore.experimental.optim.{name}",
        signature=signature,
        args={**_COMMON, **args},
        hook=_adam if name == "Adam" else None,
        aliases=(f"torch.optim.{name.lower()}.{name}",),
        notes=notes + ("; " + _ADAM_NOTES if name == "Adam" else ""),
        examples=_EXAMPLES.get(name, ()) + _TRAINING[name],
    )


def _receiver_kind(call, ctx) -> str | None:
    """What the receiver is, from where the file made it (never from its name)."""
    origin = receiver_origin(call)
    return origin.kind if origin is not None else None


def _step(call, ctx):
    """scheduler.step() is the same in MindSpore; a leftover optimizer.step()
    is outside any training step ms-migrate could rewrite; the step() of
    anything else (unknown: not made in this file) is left alone."""
    if _receiver_kind(call, ctx) == OPTIMIZER:
        raise Unconvertible(
            "optimizer.step() outside a recognised training step: MindSpore optimizers are called with the "
            "gradients, optimizer(grads), from mindspore.value_and_grad"
        )
    return call.call


def _zero_grad(call, ctx):
    if _receiver_kind(call, ctx) not in (OPTIMIZER, CELL, LAYER):
        return call.call  # not known to be a torch object: left alone
    raise Unconvertible(
        "zero_grad() outside a recognised training step: MindSpore computes fresh gradients each step, "
        "delete it once the step uses mindspore.value_and_grad"
    )


def _backward(call, ctx):
    raise Unconvertible(
        "backward() outside a recognised training step (zero_grad/forward/backward/step in one block): "
        "rewrite with mindspore.value_and_grad by hand"
    )


# marks every use (a method rule without hook or rename), so it is counted as marked, not converted
_GRADIENT_HOOKS = "gradient hooks cannot be converted automatically; MindSpore uses Cell.bprop or ops.HookBackward"


_CUSTOM_OPTIMIZER = (
    "MindSpore optimizers are called with the gradients (construct(grads)); a torch optimizer's step() "
    "reads p.grad, which MindSpore parameters do not have: port a custom optimizer by hand"
)


def _custom_optimizer(call, ctx):
    raise Unconvertible(_CUSTOM_OPTIMIZER)


def _clipped(clip: str) -> Example:
    """A training run whose step clips the gradients between backward() and step()."""
    steps = _STEPS.replace("    loss.backward()\n", f"    loss.backward()\n    {clip}\n")
    return Example(_PARAMETERS + "opt = torch.optim.SGD([w, b], lr=0.1)\n" + steps, inputs=_TRAINING_INPUTS,
                   notes="in_a_training_step")


_CLIP_NOTE = (
    "gradient clipping applies to the gradients of a training step: ms-migrate converts it inside a rewritten "
    "step (ops.clip_by_global_norm / ops.clip_by_value); here it is outside one"
)

RULES = [
    *(_optimizer_rule(name) for name in _OPTIMIZERS),
    # isinstance() and annotations convert; a subclass (a custom optimizer) or a call is marked
    ApiRule("torch.optim.Optimizer", "mindspore.experimental.optim.Optimizer", hook=_custom_optimizer,
            aliases=("torch.optim.optimizer.Optimizer",), notes=_CUSTOM_OPTIMIZER,
            examples=(
                Example("opt = torch.optim.SGD([nn.Parameter(x)], lr=0.1)\n"
                        "result = (isinstance(opt, torch.optim.Optimizer), isinstance(x, torch.optim.Optimizer))",
                        inputs={"x": "randn(2)"}),
                Example("class Plain(torch.optim.Optimizer):\n    pass", marked="base class"),
            )),
    ApiRule("torch.optim.LBFGS", None, notes="LBFGS (closure-driven) has no mindspore.experimental.optim counterpart",
            examples=(Example("opt = torch.optim.LBFGS(model.parameters())", marked="LBFGS"),)),
    ApiRule("torch.optim.SparseAdam", None, notes="SparseAdam has no mindspore.experimental.optim counterpart"),
    ApiRule("torch.nn.utils.clip_grad_norm_", None, notes=_CLIP_NOTE, aliases=("torch.nn.utils.clip_grad.clip_grad_norm_",),
            examples=(Example("torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)", marked="clip_by_global_norm"),
                      _clipped("torch.nn.utils.clip_grad_norm_([w, b], max_norm=0.5)"))),
    ApiRule("torch.nn.utils.clip_grad_value_", None, notes=_CLIP_NOTE,
            aliases=("torch.nn.utils.clip_grad.clip_grad_value_",),
            examples=(Example("torch.nn.utils.clip_grad_value_(model.parameters(), 0.1)", marked="clip_by_value"),
                      _clipped("torch.nn.utils.clip_grad_value_([w, b], clip_value=0.2)"))),
    # zero_grad/backward/step convert inside a training step (transpiler/convert/structural/training_loop.py):
    # their execution cases run such steps; outside one they are marked
    MethodRule("step", hook=_step, arity=(0, 1), receiver="any",
               examples=(Example("scheduler.step()", "scheduler.step()"),
                         Example("opt = torch.optim.SGD(ps, lr=0.1)\nopt.step()", marked="outside a recognised training step"),
                         Example(_PARAMETERS + "opt = torch.optim.SGD([w, b], lr=0.1)\n"
                                 "sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2)\n"
                                 + _STEPS.replace("    opt.step()\n", "    opt.step()\n    sched.step()\n"),
                                 inputs=_TRAINING_INPUTS, notes="optimizer_and_scheduler"))),
    MethodRule("zero_grad", hook=_zero_grad, arity=(0, 1), receiver="any",
               examples=(Example("opt = torch.optim.SGD(ps, lr=0.1)\nopt.zero_grad(set_to_none=True)", marked="zero_grad"),
                         _training_case("torch.optim.SGD([w, b], lr=0.1, momentum=0.5)",
                                       notes="in_a_training_step"))),
    MethodRule("backward", hook=_backward, arity=(0, 2),
               examples=(Example("y = torch.ones(2)\ny.sum().backward()", marked="without optimizer.step()"),
                         _training_case("torch.optim.Adagrad([w, b], lr=0.1)", notes="in_a_training_step"))),
    MethodRule("register_hook", arity=(1, 1), notes=_GRADIENT_HOOKS,
               examples=(Example("x = torch.ones(2)\nh = x.register_hook(lambda g: g * 2)", marked="gradient hooks"),)),
    *(MethodRule(name, arity=(1, 2), receiver="cell", notes=_GRADIENT_HOOKS,
                 examples=(Example(f"h = model.{name}(hook)", marked="gradient hooks"),))
      for name in ("register_full_backward_hook", "register_backward_hook", "register_full_backward_pre_hook")),
]
