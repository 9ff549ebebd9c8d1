"""torch.optim.lr_scheduler -> mindspore.experimental.optim.lr_scheduler.

Same classes, signatures and step() protocol (they drive the torch-style
optimizers of mindspore.experimental.optim); tests/test_training_optim.py
checks the learning rate seen at every step against torch."""

from __future__ import annotations

from rewrite_rules.spec import ApiRule, AttributeRule, Example, Unconvertible, Unsupported

_SCHEDULERS = {
    "StepLR": "optimizer, step_size, gamma=0.1, last_epoch=-1",
    "MultiStepLR": "optimizer, milestones, gamma=0.1, last_epoch=-1",
    "ExponentialLR": "optimizer, gamma, last_epoch=-1",
    "LambdaLR": "optimizer, lr_lambda, last_epoch=-1",
    "MultiplicativeLR": "optimizer, lr_lambda, last_epoch=-1",
    "LinearLR": "optimizer, start_factor=0.3333333333333333, end_factor=1.0, total_iters=5, last_epoch=-1",
    "ConstantLR": "optimizer, factor=0.3333333333333333, total_iters=5, last_epoch=-1",
    "CosineAnnealingLR": "optimizer, T_max, eta_min=0.0, last_epoch=-1",
    "CosineAnnealingWarmRestarts": "optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1",
    "PolynomialLR": "optimizer, total_iters=5, power=1.0, last_epoch=-1",
    "SequentialLR": "optimizer, schedulers, milestones, last_epoch=-1",
    "ReduceLROnPlateau": "optimizer, mode='min', factor=0.1, patience=10, threshold=0.0001, threshold_mode='rel', "
                         "cooldown=0, min_lr=0, eps=1e-08",
    "CyclicLR": "optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode='triangular', gamma=1.0, "
                "scale_fn=None, scale_mode='cycle', cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, "
                "last_epoch=-1",
}

_MOMENTUM = Unsupported("MindSpore's CyclicLR does not cycle momentum")


def _cyclic(call, ctx):
    # torch cycles momentum unless told not to; MindSpore never does.
    if call.literal("cycle_momentum", True) is not False:
        raise Unconvertible("cycle_momentum=True (the torch default): MindSpore's CyclicLR does not cycle momentum; "
                            "pass cycle_momentum=False to convert")
    call.remove("cycle_momentum")


_EXAMPLES = {
    "StepLR": (
        Example("sched = torch.optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.5)",
                "sched = mindspore.experimental.optim.lr_scheduler.StepLR(opt, step_size=5, gamma=0.5)"),
    ),
    "LambdaLR": (
        Example("sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 10))",
                "sched = mindspore.experimental.optim.lr_scheduler.LambdaLR(\n"
                "    opt, lambda s: min(1.0, (s + 1) / 10)\n)"),
    ),
    "CyclicLR": (
        Example("sched = torch.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1)", marked="cycle_momentum"),
    ),
}


def _rule(name: str) -> ApiRule:
    extra = {}
    hook = None
    if name == "CyclicLR":
        extra = {"base_momentum": _MOMENTUM, "max_momentum": _MOMENTUM}
        hook = _cyclic
    return ApiRule(
        f"torch.optim.lr_scheduler.{name}",
        f"mindspore.experimental.optim.lr_scheduler.{name}",
        signature=_SCHEDULERS[name],
        args=extra,
        hook=hook,
        examples=_EXAMPLES.get(name, ()),
    )


RULES = [
    *(_rule(name) for name in _SCHEDULERS),
    AttributeRule("torch.optim.lr_scheduler.LRScheduler", "mindspore.experimental.optim.lr_scheduler.LRScheduler",
                  aliases=("torch.optim.lr_scheduler._LRScheduler",)),
    ApiRule("torch.optim.lr_scheduler.OneCycleLR", None,
            notes="OneCycleLR has no mindspore.experimental.optim.lr_scheduler counterpart; "
                  "use LambdaLR with the one-cycle formula",
            examples=(Example("s = torch.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=100)", marked="OneCycleLR"),)),
    ApiRule("torch.optim.lr_scheduler.ChainedScheduler", None,
            notes="ChainedScheduler has no MindSpore counterpart; step each scheduler in turn"),
]
