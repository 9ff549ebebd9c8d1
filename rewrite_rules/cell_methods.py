"""nn.Module methods -> nn.Cell methods."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.spec import Example, MethodRule, Unconvertible
from transpiler.engine import code_of, keyword_arg
from transpiler.structural.provenance import OPTIMIZER, SCHEDULER, origin_of


def _train(call, ctx):
    mode = call.positional[0] if call.positional else (call.keyword("mode") or cst.Name("True"))
    return call.rename("set_train", [cst.Arg(mode)])


def _eval(call, ctx):
    return call.rename("set_train", [cst.Arg(cst.Name("False"))])


def _receiver_kind(call) -> str | None:
    """What the receiver is, from where the file made it (never from its name)."""
    origin = origin_of(call.ctx, call.source.func.value if call.source is not None else None)
    return origin.kind if origin is not None else None


def _is_optimizer(call) -> bool:
    return _receiver_kind(call) == OPTIMIZER


def _not_scheduler(call):
    if _receiver_kind(call) == SCHEDULER:
        raise Unconvertible("MindSpore's lr schedulers have no state_dict()/load_state_dict(); "
                            "carry last_epoch and the learning rates by hand")


def _state_dict(call, ctx):
    # An optimizer is a Cell in MindSpore: its parameters_dict() holds the moment
    # buffers and the step count (and the weights they belong to).
    _not_scheduler(call)
    if call.args:
        raise Unconvertible("state_dict() arguments are not supported")
    return call.rename("parameters_dict", [])


def _load_state_dict(call, ctx):
    _not_scheduler(call)
    if _is_optimizer(call):
        ctx.warn(call.source or call.call, "load_state_dict",
                 "restores the optimizer's moments, step count and weights, not its param-group learning rates")
    args = [cst.Arg(call.receiver), cst.Arg(call.positional[0] if call.positional else call.keyword("state_dict"))]
    strict = call.keyword("strict") if len(call.positional) < 2 else call.positional[1]
    if strict is not None:
        args.append(keyword_arg("strict_load", strict))
    return cst.Call(ctx.ref("mindspore.load_param_into_net"), args)




def _modules(call, ctx):
    return cst.parse_expression(
        f"(cell for _, cell in {code_of(call.receiver)}.cells_and_names())"
    )


def _named_children(call, ctx):
    return cst.Call(
        cst.Attribute(call.rename("name_cells", []), cst.Name("items")), []
    )


def _cell(name: str, **kw) -> MethodRule:
    return MethodRule(name, receiver="cell", **kw)


RULES = [
    _cell("parameters", rename="trainable_params", arity=(0, 1),
          examples=(Example("ps = model.parameters()", "ps = model.trainable_params()"),)),
    _cell("named_parameters", rename="parameters_and_names", arity=(0, 2)),
    _cell("children", rename="cells", arity=(0, 0)),
    _cell("named_children", hook=_named_children, arity=(0, 0)),
    _cell("modules", hook=_modules, arity=(0, 0)),
    _cell("named_modules", rename="cells_and_names", arity=(0, 0)),
    _cell("train", hook=_train, arity=(0, 1),
          examples=(Example("model.train()", "model.set_train(True)"),)),
    _cell("eval", hook=_eval, arity=(0, 0), examples=(Example("model.eval()", "model.set_train(False)"),)),
    _cell("state_dict", hook=_state_dict, arity=(0, 0),
          examples=(Example("sd = model.state_dict()", "sd = model.parameters_dict()"),
                    Example("sd = optimizer.state_dict()", "sd = optimizer.parameters_dict()"),
                    Example("scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 5)\nsd = scheduler.state_dict()",
                            marked="no state_dict()"))),
    _cell(
        "load_state_dict",
        hook=_load_state_dict,
        arity=(0, 2),
        examples=(Example("model.load_state_dict(sd)", "mindspore.load_param_into_net(model, sd)"),
                  Example("optimizer.load_state_dict(sd)", "mindspore.load_param_into_net(optimizer, sd)"),
                  Example("scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 5)\nscheduler.load_state_dict(sd)",
                          marked="no state_dict()")),
    ),
]
