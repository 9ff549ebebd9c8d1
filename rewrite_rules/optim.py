"""torch.optim optimizers -> mindspore.experimental.optim (torch-style ``lr=``,
``betas=``, param groups; they update weights on CPU, where mint.optim silently
does not). The training step itself (zero_grad/backward/step) is rewritten
structurally (transpiler/structural/training_loop.py); the method rules here
mark what is left over outside a recognised step."""

from __future__ import annotations

from rewrite_rules.spec import ApiRule, Arg, AttributeRule, Drop, Example, MethodRule, Unconvertible, Unsupported
from transpiler.structural.provenance import CELL, LAYER, OPTIMIZER, origin_of

_PERFORMANCE = Drop("implementation choice (foreach/fused kernels, CUDA graphs); no effect on the result")
_COMMON = {
    "foreach": _PERFORMANCE,
    "fused": _PERFORMANCE,
    "capturable": _PERFORMANCE,
    "differentiable": Unsupported("differentiable optimizer steps are not supported"),
}
_NO_MAXIMIZE = {"maximize": Unsupported("maximize= is not supported by this MindSpore optimizer")}
_NO_DECOUPLED = {"decoupled_weight_decay": Unsupported("decoupled_weight_decay: use AdamW instead")}

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
               "differentiable=False, capturable=False", {}),
    "NAdam": ("params, lr=0.002, betas=(0.9, 0.999), eps=1e-08, weight_decay=0, momentum_decay=0.004, "
              "decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False, differentiable=False",
              {**_NO_MAXIMIZE, **_NO_DECOUPLED}),
    "RAdam": ("params, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0, decoupled_weight_decay=False, *, "
              "foreach=None, maximize=False, capturable=False, differentiable=False", {**_NO_MAXIMIZE, **_NO_DECOUPLED}),
    "RMSprop": ("params, lr=0.01, alpha=0.99, eps=1e-08, weight_decay=0, momentum=0, centered=False, "
                "capturable=False, foreach=None, maximize=False, differentiable=False", {}),
    "Rprop": ("params, lr=0.01, etas=(0.5, 1.2), step_sizes=(1e-06, 50), *, capturable=False, foreach=None, "
              "maximize=False, differentiable=False", {}),
    "Adagrad": ("params, lr=0.01, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10, foreach=None, "
                "*, maximize=False, differentiable=False, fused=None", {}),
    "Adadelta": ("params, lr=1.0, rho=0.9, eps=1e-06, weight_decay=0, foreach=None, *, capturable=False, "
                 "maximize=False, differentiable=False", {}),
    "ASGD": ("params, lr=0.01, lambd=0.0001, alpha=0.75, t0=1000000.0, weight_decay=0, foreach=None, "
             "maximize=False, differentiable=False, capturable=False", {}),
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
                "opt = mindspore.experimental.optim.Adam(\n    model.trainable_params(), lr=1e-3, betas=(0.5, 0.999)\n)"),
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


def _optimizer_rule(name: str) -> ApiRule:
    signature, args = _OPTIMIZERS[name]
    return ApiRule(
        f"torch.optim.{name}",
        f"mindspore.experimental.optim.{name}",
        signature=signature,
        args={**_COMMON, **args},
        aliases=(f"torch.optim.{name.lower()}.{name}",),
        notes="torch-style optimizer; called with the gradients: optimizer(grads)",
        examples=_EXAMPLES.get(name, ()),
    )


def _receiver_kind(call, ctx) -> str | None:
    """What the receiver is, from where the file made it (never from its name)."""
    origin = origin_of(ctx, call.source.func.value if call.source is not None else None)
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


def _gradient_hook(call, ctx):
    raise Unconvertible("gradient hooks cannot be converted automatically; MindSpore uses Cell.bprop or ops.HookBackward")


_CLIP_NOTE = (
    "gradient clipping applies to the gradients of a training step: ms-migrate converts it inside a rewritten "
    "step (ops.clip_by_global_norm / ops.clip_by_value); here it is outside one"
)

RULES = [
    *(_optimizer_rule(name) for name in _OPTIMIZERS),
    AttributeRule("torch.optim.Optimizer", "mindspore.experimental.optim.Optimizer",
                  aliases=("torch.optim.optimizer.Optimizer",)),
    ApiRule("torch.optim.LBFGS", None, notes="LBFGS (closure-driven) has no mindspore.experimental.optim counterpart",
            examples=(Example("opt = torch.optim.LBFGS(model.parameters())", marked="LBFGS"),)),
    ApiRule("torch.optim.SparseAdam", None, notes="SparseAdam has no mindspore.experimental.optim counterpart"),
    ApiRule("torch.nn.utils.clip_grad_norm_", None, notes=_CLIP_NOTE, aliases=("torch.nn.utils.clip_grad.clip_grad_norm_",),
            examples=(Example("torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)", marked="clip_by_global_norm"),)),
    ApiRule("torch.nn.utils.clip_grad_value_", None, notes=_CLIP_NOTE,
            aliases=("torch.nn.utils.clip_grad.clip_grad_value_",)),
    MethodRule("step", hook=_step, arity=(0, 1), receiver="any",
               examples=(Example("scheduler.step()", "scheduler.step()"),
                         Example("opt = torch.optim.SGD(ps, lr=0.1)\nopt.step()", marked="outside a recognised training step"))),
    MethodRule("zero_grad", hook=_zero_grad, arity=(0, 1), receiver="any",
               examples=(Example("opt = torch.optim.SGD(ps, lr=0.1)\nopt.zero_grad(set_to_none=True)", marked="zero_grad"),)),
    MethodRule("backward", hook=_backward, arity=(0, 2),
               examples=(Example("y = torch.ones(2)\ny.sum().backward()", marked="without optimizer.step()"),)),
    MethodRule("register_hook", hook=_gradient_hook, arity=(1, 1),
               examples=(Example("x = torch.ones(2)\nh = x.register_hook(lambda g: g * 2)", marked="gradient hooks"),)),
    *(MethodRule(name, hook=_gradient_hook, arity=(1, 2), receiver="cell")
      for name in ("register_full_backward_hook", "register_backward_hook", "register_full_backward_pre_hook")),
]
