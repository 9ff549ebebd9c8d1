"""nn.Module methods -> nn.Cell methods."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.spec import Example, MethodRule, Unconvertible
from transpiler.engine import code_of, keyword_arg


def _train(call, ctx):
    mode = call.positional[0] if call.positional else (call.keyword("mode") or cst.Name("True"))
    return call.rename("set_train", [cst.Arg(mode)])


def _eval(call, ctx):
    return call.rename("set_train", [cst.Arg(cst.Name("False"))])


def _is_optimizer(call) -> bool:
    code = code_of(call.receiver)
    return call.ctx.known_kinds.get(code) == "optimizer" or "optim" in code.lower()


def _not_scheduler(call):
    code = code_of(call.receiver)
    if call.ctx.known_kinds.get(code) == "scheduler" or "sched" in code.lower():
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




def _named_parameters(call, ctx):
    """parameters_and_names() also yields the non-trainable parameters (BatchNorm's
    moving statistics, buffers in torch: measured 6 items for torch's 4); keep the
    trainable ones, as parameters() -> trainable_params() does."""
    item = cst.Name("item")
    trainable = cst.Attribute(cst.Subscript(item, [cst.SubscriptElement(cst.Index(cst.Integer("1")))]),
                              cst.Name("requires_grad"))
    return cst.GeneratorExp(
        item,
        cst.CompFor(item, call.rename("parameters_and_names"), ifs=[cst.CompIf(trainable)]),
    )


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


# Execution cases: a two-layer network (weights copied from torch after it is
# built), or one with BatchNorm and Dropout for the train/eval modes.
_NET = (
    "class Net(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n"
    "        self.body = nn.Linear(3, 4)\n        self.head = nn.Linear(4, 2)\n\n"
    "    def forward(self, x):\n        return self.head(torch.relu(self.body(x)))\n\n\n"
    "net = Net()\n"
)
_NORM = (
    "class Norm(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n"
    "        self.fc = nn.Linear(3, 4)\n        self.bn = nn.BatchNorm1d(4)\n        self.drop = nn.Dropout(0.5)\n\n"
    "    def forward(self, x):\n        return self.drop(self.bn(self.fc(x)))\n\n\n"
    "net = Norm()\n"
)
_X = {"x": "randn(5, 3)"}


def _on_net(statements: str, net: str = _NET, **options) -> Example:
    return Example(net + statements, inputs=_X, **options)


RULES = [
    _cell("parameters", rename="trainable_params", arity=(0, 1),
          examples=(Example("ps = model.parameters()", "ps = model.trainable_params()"),
                    _on_net("result = [p for p in net.parameters()]"),
                    # BatchNorm's running statistics are buffers in torch, non-trainable parameters in MindSpore
                    _on_net("result = [p.shape for p in net.parameters()]", _NORM, notes="batchnorm"))),
    _cell("named_parameters", hook=_named_parameters, arity=(0, 2),
          notes="the trainable parameters with their names, as parameters() -> trainable_params(): a parameter "
                "frozen with requires_grad=False is left out (torch lists it)",
          examples=(_on_net("result = [(name, p) for name, p in net.named_parameters()]"),
                    _on_net("result = [name for name, _ in net.named_parameters('top')]", notes="prefix"),
                    _on_net("result = len(list(net.named_parameters()))", _NORM, notes="batchnorm"))),
    _cell("children", rename="cells", arity=(0, 0),
          examples=(_on_net("layers = list(net.children())\nresult = (len(layers), layers[1](torch.relu(layers[0](x))))"),)),
    _cell("named_children", hook=_named_children, arity=(0, 0),
          examples=(_on_net("result = [name for name, _ in net.named_children()]"),)),
    _cell("modules", hook=_modules, arity=(0, 0),
          examples=(_on_net("result = [m(x) for m in net.modules() if m is net]\ncount = len(list(net.modules()))",
                            results=("result", "count")),)),
    _cell("named_modules", rename="cells_and_names", arity=(0, 0),
          examples=(_on_net("result = [name for name, _ in net.named_modules()]"),)),
    _cell("train", hook=_train, arity=(0, 1),
          examples=(Example("model.train()", "model.set_train(True)"),
                    # batch statistics in training mode; the running statistics it updated, in eval mode
                    _on_net("net.train()\nresult = net.bn(net.fc(x))\nnet.eval()\nafter = net.bn(net.fc(x))", _NORM,
                            results=("result", "after")),
                    _on_net("net.train(False)\nresult = net(x)", _NORM, notes="mode_false"))),
    _cell("eval", hook=_eval, arity=(0, 0),
          examples=(Example("model.eval()", "model.set_train(False)"),
                    _on_net("net.train()\nnet.eval()\nresult = net(x)", _NORM))),
    _cell("state_dict", hook=_state_dict, arity=(0, 0),
          examples=(Example("sd = model.state_dict()", "sd = model.parameters_dict()"),
                    Example("sd = optimizer.state_dict()", "sd = optimizer.parameters_dict()"),
                    Example("sd = scheduler.state_dict()", marked="no state_dict()"),
                    _on_net("sd = net.state_dict()\nresult = [(key, sd[key]) for key in sorted(sd)]"))),
    _cell(
        "load_state_dict",
        hook=_load_state_dict,
        arity=(0, 2),
        examples=(Example("model.load_state_dict(sd)", "mindspore.load_param_into_net(model, sd)"),
                  Example("optimizer.load_state_dict(sd)", "mindspore.load_param_into_net(optimizer, sd)"),
                  Example("scheduler.load_state_dict(sd)", marked="no state_dict()"),
                  _on_net("other = Net()\nkeys = other.load_state_dict(net.state_dict())\nresult = (other(x), keys)"),
                  _on_net("other = Net()\nother.load_state_dict(net.state_dict(), strict=False)\nresult = other(x)",
                          notes="strict")),
    ),
]
