"""torch.optim.lr_scheduler -> mindspore.experimental.optim.lr_scheduler.

Same classes, signatures and step() protocol (they drive the torch-style
optimizers of mindspore.experimental.optim); tests/training/test_training_optim.py
checks the learning rate seen at every step against torch."""

from __future__ import annotations

from rewrite_rules.cases import P, call_cases
from rewrite_rules.api import ApiRule, AttributeRule, Example, Unconvertible, Unsupported

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
    try:
        cycle_momentum = call.literal("cycle_momentum", True)
    except ValueError:
        raise Unconvertible("cycle_momentum is computed: MindSpore's CyclicLR does not cycle momentum; "
                            "pass cycle_momentum=False to convert") from None
    if cycle_momentum is not False:
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
        Example("sched = torch.optim.lr_scheduler.CyclicLR(opt, 0.01, 0.1, cycle_momentum=cycle)",
                marked="cycle_momentum is computed"),
    ),
}

# Execution cases: w is trained for ten steps by SGD (lr 0.1) under the
# scheduler in both frameworks; the learning rate after every step and the
# final weights are compared.
_OPTIMIZER = "w = nn.Parameter(w0.clone())\nopt = torch.optim.SGD([w], lr=0.1, momentum=0.9)\n"
_INPUTS = {"w0": "randn(3)", "x": "randn(3)"}


def _steps(step: str = "sched.step()", record: str = 'opt.param_groups[0]["lr"]', steps: int = 10) -> str:
    return (
        "lrs = []\n"
        f"for i in range({steps}):\n"
        "    opt.zero_grad()\n"
        "    loss = ((w - x) ** 2).sum()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
        f"    {step}\n"
        f"    lrs.append(float({record}))\n"
        "result = (w, lrs)\n"
    )


def _schedule_cases(name: str, params: list[P], setup: str = "", constructor_end: str = "",
                    **steps) -> tuple[Example, ...]:
    """The call shapes of the scheduler's constructor, each in the training run above."""
    return call_cases(f"sched = torch.optim.lr_scheduler.{name}({{args}}{constructor_end})\n" + _steps(**steps),
                      [P("optimizer", "opt"), *params], _INPUTS, setup=_OPTIMIZER + setup)


def _schedule_case(constructor: str, notes: str, setup: str = "", **steps) -> Example:
    return Example(_OPTIMIZER + setup + f"sched = {constructor}\n" + _steps(**steps), inputs=_INPUTS, notes=notes)


_L = "torch.optim.lr_scheduler."
_RUNS = {
    "StepLR": _schedule_cases("StepLR", [P("step_size", "3"), P("gamma", "0.5", default=True)]),
    "MultiStepLR": _schedule_cases("MultiStepLR", [P("milestones", "[2, 5]"), P("gamma", "0.5", default=True)]),
    "ExponentialLR": _schedule_cases("ExponentialLR", [P("gamma", "0.8")], record="sched.get_last_lr()[0]"),
    "LambdaLR": _schedule_cases("LambdaLR", [P("lr_lambda", "lambda e: 1 / (e + 1)")]),
    "MultiplicativeLR": _schedule_cases("MultiplicativeLR", [P("lr_lambda", "lambda e: 0.9 if e < 5 else 0.5")]),
    "LinearLR": _schedule_cases("LinearLR", [
        P("start_factor", "0.25", default=True), P("end_factor", "0.75", default=True),
        P("total_iters", "4", default=True)]),
    "ConstantLR": _schedule_cases("ConstantLR", [P("factor", "0.5", default=True), P("total_iters", "3", default=True)],
                                  record="sched.get_last_lr()[0]"),
    "CosineAnnealingLR": _schedule_cases("CosineAnnealingLR", [P("T_max", "4"), P("eta_min", "0.01", default=True)]),
    "CosineAnnealingWarmRestarts": (
        *_schedule_cases("CosineAnnealingWarmRestarts", [
            P("T_0", "3"), P("T_mult", "2", default=True), P("eta_min", "0.01", default=True)]),
        _schedule_case(f"{_L}CosineAnnealingWarmRestarts(opt, T_0=3, eta_min=0.01)", "fractional_epochs",
                       step="sched.step(i + 0.5)"),
    ),
    "PolynomialLR": _schedule_cases("PolynomialLR", [
        P("total_iters", "6", default=True), P("power", "2.0", default=True)]),
    "SequentialLR": _schedule_cases(
        "SequentialLR", [P("schedulers", "[warm, decay]"), P("milestones", "[3]")],
        setup=f"warm = {_L}LinearLR(opt, start_factor=0.1, total_iters=3)\ndecay = {_L}ExponentialLR(opt, 0.8)\n"),
    "ReduceLROnPlateau": (
        *_schedule_cases("ReduceLROnPlateau", [
            P("mode", "'max'", default=True), P("factor", "0.5", default=True), P("patience", "1", default=True),
            P("threshold", "0.01", default=True), P("threshold_mode", "'abs'", default=True),
            P("cooldown", "1", default=True), P("min_lr", "0.02", default=True)], step="sched.step(loss)", steps=14),
        _schedule_case(f"{_L}ReduceLROnPlateau(opt, patience=2, eps=0.01)", "plain_number_metric",
                       step="sched.step(1.0)", steps=14),
    ),
    "CyclicLR": _schedule_cases("CyclicLR", [
        P("base_lr", "0.01"), P("max_lr", "0.1"), P("step_size_up", "2", default=True),
        P("step_size_down", "3", default=True), P("mode", "'exp_range'", default=True),
        P("gamma", "0.9", default=True)], constructor_end=", cycle_momentum=False"),
}

_WARMUP = (
    "class Warmup(torch.optim.lr_scheduler.LRScheduler):\n"
    "    def get_lr(self):\n"
    "        return [base * min(1.0, (self.last_epoch + 1) / 4) for base in self.base_lrs]\n\n\n"
)


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
        examples=_EXAMPLES.get(name, ()) + _RUNS[name],
    )


RULES = [
    *(_rule(name) for name in _SCHEDULERS),
    AttributeRule("torch.optim.lr_scheduler.LRScheduler", "mindspore.experimental.optim.lr_scheduler.LRScheduler",
                  aliases=("torch.optim.lr_scheduler._LRScheduler",),
                  examples=(_schedule_case("Warmup(opt)", "subclass", setup=_WARMUP),
                            Example("opt = torch.optim.SGD([nn.Parameter(x)], lr=0.1)\n"
                                    "sched = torch.optim.lr_scheduler.StepLR(opt, 2)\n"
                                    "result = (isinstance(sched, torch.optim.lr_scheduler.LRScheduler), "
                                    "isinstance(opt, torch.optim.lr_scheduler._LRScheduler))",
                                    inputs={"x": "randn(2)"}))),
    ApiRule("torch.optim.lr_scheduler.OneCycleLR", None,
            notes="OneCycleLR has no mindspore.experimental.optim.lr_scheduler counterpart; "
                  "use LambdaLR with the one-cycle formula",
            examples=(Example("s = torch.optim.lr_scheduler.OneCycleLR(opt, 0.1, total_steps=100)", marked="OneCycleLR"),)),
    ApiRule("torch.optim.lr_scheduler.ChainedScheduler", None,
            notes="ChainedScheduler has no MindSpore counterpart; step each scheduler in turn"),
]
