"""nn.Module methods -> nn.Cell methods."""

from __future__ import annotations

import libcst as cst

from dataclasses import replace

from rewrite_rules.cases import P, call_cases
from rewrite_rules.api import (OPTIMIZER, SCALER, SCHEDULER, Drop, Example, MethodRule, Unconvertible, Unsupported, code_of,
                               define, in_forward, keyword_arg, receiver_origin)
from rewrite_rules.tensor.binding import atom, expr, literal, method


def _train(call, ctx):
    mode = call.positional[0] if call.positional else (call.keyword("mode") or cst.Name("True"))
    return call.rename("set_train", [cst.Arg(mode)])


def _eval(call, ctx):
    return call.rename("set_train", [cst.Arg(cst.Name("False"))])


def _receiver_kind(call) -> str | None:
    """What the receiver is, from where the file made it (never from its name)."""
    origin = receiver_origin(call)
    return origin.kind if origin is not None else None


def _is_optimizer(call) -> bool:
    return _receiver_kind(call) == OPTIMIZER


_SAVE_SCHEDULER = '''
def {name}(scheduler):
    """torch's LRScheduler.state_dict() (written by ms-migrate)."""
    # a MindSpore scheduler's state is Parameters: the epoch count (ReduceLROnPlateau's
    # best and counters too) and the learning rates it set, which are the optimizer's
    state = {{key: value for key, value in vars(scheduler).items() if isinstance(value, PARAMETER)}}
    state.update({{f"last_lr.{{index}}": lr for index, lr in enumerate(scheduler._last_lr)}})
    return state
'''

_LOAD_SCHEDULER = '''
def {name}(scheduler, state):
    """torch's LRScheduler.load_state_dict() (written by ms-migrate)."""
    # this sets the optimizer's learning rates too (in torch its load_state_dict does)
    for key, value in state.items():
        if key.startswith("last_lr."):
            ASSIGN(scheduler._last_lr[int(key.removeprefix("last_lr."))], value)
        else:
            ASSIGN(getattr(scheduler, key), value)
'''


def _save_scheduler(ctx) -> cst.Name:
    parameter = code_of(ctx.ref("mindspore.Parameter"))
    return define(ctx, "lr_scheduler_state", _SAVE_SCHEDULER.replace("PARAMETER", parameter))


def _load_scheduler(ctx) -> cst.Name:
    return define(ctx, "load_lr_scheduler_state", _LOAD_SCHEDULER.replace("ASSIGN", code_of(ctx.ref("mindspore.ops.assign"))))


def _scaler_parameters(scaler: cst.BaseExpression, ctx) -> cst.DictComp:
    """``{name: value for name, value in vars(scaler).items() if isinstance(value, mindspore.Parameter)}``:
    a mindspore.amp loss scaler is no Cell; its state (scale_value, and counter when dynamic) is Parameters."""
    name, value = cst.Name("name"), cst.Name("value")
    items = cst.Call(cst.Attribute(cst.Call(cst.Name("vars"), [cst.Arg(scaler)]), cst.Name("items")), [])
    is_parameter = cst.Call(cst.Name("isinstance"), [cst.Arg(value), cst.Arg(ctx.ref("mindspore.Parameter"))])
    target = cst.Tuple([cst.Element(name), cst.Element(value)], lpar=[], rpar=[])
    return cst.DictComp(name, value, cst.CompFor(target=target, iter=items, ifs=[cst.CompIf(is_parameter)]))


def _state_dict(call, ctx):
    # An optimizer is a Cell in MindSpore: its parameters_dict() holds the moment
    # buffers and the step count (and the weights they belong to).
    if call.args:
        raise Unconvertible("state_dict() arguments are not supported")
    if _receiver_kind(call) == SCHEDULER:
        return cst.Call(_save_scheduler(ctx), [cst.Arg(call.receiver)])
    if _receiver_kind(call) == SCALER:
        return _scaler_parameters(call.receiver, ctx)
    return call.rename("parameters_dict", [])


def _load_state_dict(call, ctx):
    if _receiver_kind(call) == SCHEDULER:
        state = call.positional[0] if call.positional else call.keyword("state_dict")
        return cst.Call(_load_scheduler(ctx), [cst.Arg(call.receiver), cst.Arg(state)])
    if _receiver_kind(call) == SCALER:  # the loss scale (and growth counter) Parameters come back as attributes
        state = call.positional[0] if call.positional else call.keyword("state_dict")
        update = cst.Attribute(cst.Call(cst.Name("vars"), [cst.Arg(call.receiver)]), cst.Name("update"))
        return cst.Call(update, [cst.Arg(state)])
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
    keywords = {"prefix": "name_prefix", "recurse": "expand"}
    args = []
    for arg in call.call.args:
        if arg.keyword is not None and arg.keyword.value == "remove_duplicate":
            raise Unconvertible("remove_duplicate has no MindSpore equivalent")
        if arg.keyword is not None and arg.keyword.value in keywords:
            arg = arg.with_changes(keyword=cst.Name(keywords[arg.keyword.value]))
        args.append(arg)
    # filter, not a generator expression: the receiver may hold an assignment expression
    # ((m := Net()).named_parameters()), which a comprehension's iterable cannot
    trainable = cst.parse_expression("lambda item: item[1].requires_grad")
    return cst.Call(cst.Name("filter"), [cst.Arg(trainable), cst.Arg(call.rename("parameters_and_names", args))])


def _parameters(call, ctx):
    """trainable_params() (a list: BatchNorm's moving statistics, buffers in torch, are
    non-trainable Parameters in MindSpore and stay out, as torch's parameters() leaves
    them out); next(m.parameters()) / iter(m.parameters()) take get_parameters(), a
    generator of every parameter like torch's (a frozen parameter included: torch code
    reads the first one's device or dtype, and a model frozen whole has no trainable one)."""
    if call.enclosing in ("next", "iter"):  # next(m.parameters(), None) too
        return call.rename("get_parameters")
    return call.rename("trainable_params")


def _modules(call, ctx):
    return cst.parse_expression(
        f"(cell for _, cell in {code_of(call.receiver)}.cells_and_names())"
    )


# In a forward, the children are read from the Cell's own dict: graph mode compiles no
# cells() or name_cells() call ("The pointer[node] is null", MindSpore 2.10: timm's RegNet
# stages run ``for block in self.children()``).
def _children(call, ctx):
    if in_forward(ctx):
        return expr(f"{atom(call.receiver)}._cells.values()")
    return call.rename("cells")


def _named_children(call, ctx):
    if in_forward(ctx):
        return expr(f"{atom(call.receiver)}._cells.items()")
    return cst.Call(
        cst.Attribute(call.rename("name_cells", []), cst.Name("items")), []
    )


def _cell(name: str, **kw) -> MethodRule:
    return MethodRule(name, receiver="cell", **kw)


def _bound_cell(name: str, signature: str, **kw) -> MethodRule:
    """A Module method bound to its torch signature (see tensor_binding.method)."""
    return replace(method(name, signature, **kw), receiver="cell")


def _add_module(bound, call, ctx):
    """setattr, as ``self.name = module`` would (unlike insert_child_to_cell,
    it prefixes the child's parameter names with its own, which checkpoints
    and weight loading go by); a SequentialCell runs the cells of its
    ``cell_list``, so that list is made again from the children, as its
    constructor makes it (torch's Sequential runs children added by name, and
    they keep their names: ``seq.bn``)."""
    cell, name, module = atom(call.receiver), code_of(bound.get("name")), code_of(bound.get("module"))
    sequential = code_of(ctx.ref("mindspore.nn.SequentialCell"))
    bound.result = expr(f"(setattr({cell}, {name}, {module}), "
                        f"setattr({cell}, 'cell_list', list({cell}.name_cells().values())) "
                        f"if isinstance({cell}, {sequential}) else None)")


def _register_parameter(bound, call, ctx):
    param = bound.get("param")
    if isinstance(param, cst.Name) and param.value == "None":
        raise Unconvertible("registering None as a parameter has no MindSpore equivalent")
    bound.result = cst.Call(cst.Attribute(call.receiver, cst.Name("insert_param_to_cell")),
                            [cst.Arg(bound.get("name")), cst.Arg(param)])


def _lookup(names: str):
    """get_submodule/get_parameter/get_buffer: the entry of that dotted name."""

    def hook(bound, call, ctx):
        bound.result = expr(f"dict({atom(call.receiver)}.{names}())[{code_of(bound.get('target'))}]")

    return hook


# torch's normalisation buffers under MindSpore's names (the layers' weight maps, rewrite_rules/nn/normalization.py)
_NORM_BUFFERS = {"running_mean": "moving_mean", "running_var": "moving_variance"}


def _get_buffer(bound, call, ctx):
    """get_buffer: the non-trainable Parameter of that dotted name; a literal
    name of a normalisation layer's statistics is looked up under MindSpore's."""
    target = bound.get("target")
    try:
        name = literal(target)
    except ValueError:
        name = None
    if isinstance(name, str):
        path, dot, last = name.rpartition(".")
        if last == "num_batches_tracked":
            raise Unconvertible("MindSpore's BatchNorm does not count batches (no num_batches_tracked)")
        if last in _NORM_BUFFERS:
            target = cst.SimpleString(repr(f"{path}{dot}{_NORM_BUFFERS[last]}"))
    bound.result = expr(f"dict({atom(call.receiver)}.parameters_and_names())[{code_of(target)}]")


def _buffers(bound, call, ctx):
    """Buffers are non-trainable Parameters in MindSpore (register_buffer is
    converted to one; BatchNorm keeps its moving statistics so)."""
    args = [cst.Arg(bound.get("recurse"))] if bound.has("recurse") else []
    bound.result = cst.Call(cst.Attribute(call.receiver, cst.Name("untrainable_params")), args)


def _named_buffers(bound, call, ctx):
    options = [keyword_arg(ms, bound.get(torch)) for torch, ms in (("prefix", "name_prefix"), ("recurse", "expand"))
               if bound.has(torch)]
    named = code_of(cst.Call(cst.Attribute(call.receiver, cst.Name("parameters_and_names")), options))
    bound.result = expr(f"filter(lambda item: not item[1].requires_grad, {named})")  # (see _named_parameters)


_DEDUPLICATE = Unsupported("remove_duplicate=False has no MindSpore equivalent")
NET = "net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 2)))\n"
BUFFERED = ("class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            "        self.register_buffer('scale', torch.ones(2) * 3)\n        self.fc = nn.Linear(2, 2)\n\n"
            "    def forward(self, x):\n        return self.fc(x) * self.scale\n\n\nm = M()\n")
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
# a LoRA-style layer: a frozen base weight (requires_grad=False) first, then the trained low-rank factors
_FROZEN = (
    "class LoRA(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n"
    "        self.weight = nn.Parameter(torch.zeros(4, 3), requires_grad=False)\n"
    "        self.lora_a = nn.Parameter(torch.zeros(2, 3))\n\n"
    "    def forward(self, x):\n        return x @ self.weight.t() + x @ self.lora_a.t()\n\n\n"
    "lora = LoRA()\n"
)


_STAGE = ("class Stage(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
          "        self.b1 = nn.Linear(3, 3)\n        self.b2 = nn.Linear(3, 3)\n\n"
          "    def forward(self, x):\n        for block in self.children():\n            x = block(x)\n"
          "        return x\n\n\n")
_STAGE_CONVERTED = ("class Stage(nn.Cell):\n    def __init__(self):\n        super().__init__()\n"
                    "        self.b1 = nn.Dense(3, 3)\n        self.b2 = nn.Dense(3, 3)\n\n"
                    "    def construct(self, x):\n        for block in self._cells.values():\n            x = block(x)\n"
                    "        return x\n")


def _on_net(statements: str, net: str = _NET, **options) -> Example:
    return Example(net + statements, inputs=_X, **options)


def _resumed_scheduler(make: str, before: str, after: str, **options) -> Example:
    """A training run resumed from the optimizer's and the scheduler's states: the
    learning rates after the resume."""
    other = make.replace("(optimizer", "(other_optimizer")
    return _on_net("optimizer = torch.optim.SGD(net.parameters(), lr=0.1)\n"
                   f"scheduler = {make}\n{before}"
                   "other_optimizer = torch.optim.SGD(net.parameters(), lr=0.1)\n"
                   "other_optimizer.load_state_dict(optimizer.state_dict())\n"
                   f"other = {other}\nother.load_state_dict(scheduler.state_dict())\n{after}"
                   "result = [float(lr) for lr in (*other.get_last_lr(), *scheduler.get_last_lr())]", **options)


RULES = [
    _cell("parameters", hook=_parameters, arity=(0, 1),
          notes="trainable_params() (BatchNorm's moving statistics, buffers in torch, are non-trainable Parameters in "
                "MindSpore); in next(...) / iter(...) get_parameters(), a generator of every parameter as torch's is "
                "(a frozen first parameter included)",
          examples=(Example("ps = model.parameters()", "ps = model.trainable_params()"),
                    Example("p = next(model.parameters())", "p = next(model.get_parameters())", notes="next"),
                    _on_net("result = next(net.parameters()).dtype", notes="next_dtype"),
                    _on_net("result = next(iter(net.parameters())).shape", notes="next_iter"),
                    # with a default, next still needs an iterator (a list raises TypeError)
                    _on_net("result = next(net.parameters(), None).shape", notes="next_default"),
                    _on_net("net.body.weight.requires_grad = False\nresult = next(net.parameters()).shape",
                            notes="frozen_first"),
                    Example(_FROZEN + "result = next(lora.parameters()).shape\nlora.requires_grad_(False)\n"
                            "dtype = next(lora.parameters()).dtype", inputs={}, results=("result", "dtype"),
                            notes="all_frozen"),
                    _on_net("result = [p for p in net.parameters()]"),
                    # BatchNorm's running statistics are buffers in torch, non-trainable parameters in MindSpore
                    _on_net("result = [p.shape for p in net.parameters()]", _NORM, notes="batchnorm"))),
    _cell("named_parameters", hook=_named_parameters, arity=(0, 2),
          notes="the trainable parameters with their names, as parameters() -> trainable_params(): a parameter "
                "frozen with requires_grad=False is left out (torch lists it)",
          examples=(_on_net("result = [(name, p) for name, p in net.named_parameters()]"),
                    _on_net("result = [name for name, _ in net.named_parameters('top')]", notes="prefix"),
                    _on_net("result = [name for name, _ in net.named_parameters(prefix='top', recurse=False)]",
                            notes="keywords"),
                    _on_net("result = len(list(net.named_parameters()))", _NORM, notes="batchnorm"))),
    _cell("children", hook=_children, arity=(0, 0),
          examples=(_on_net("layers = list(net.children())\nresult = (len(layers), layers[1](torch.relu(layers[0](x))))"),
                    Example(_STAGE + "stage = Stage()\nresult = stage(x)", inputs=_X, notes="in a forward"),
                    Example(_STAGE, _STAGE_CONVERTED, notes="in a forward"))),
    _cell("named_children", hook=_named_children, arity=(0, 0),
          examples=(_on_net("result = [name for name, _ in net.named_children()]"),
                    Example(_STAGE.replace("for block in self.children()", "for _, block in self.named_children()")
                            + "stage = Stage()\nresult = stage(x)", inputs=_X, notes="in a forward"))),
    _cell("modules", hook=_modules, arity=(0, 0),
          examples=(_on_net("result = [m(x) for m in net.modules() if m is net]\ncount = len(list(net.modules()))",
                            results=("result", "count")),)),
    _bound_cell("named_modules", "memo=None, prefix='', remove_duplicate=True", target="cells_and_names",
                args={"memo": Unsupported("memo sets have no MindSpore equivalent"), "prefix": "name_prefix",
                      "remove_duplicate": _DEDUPLICATE},
                notes="prefix -> name_prefix",
                examples=(*call_cases(NET + "result = [n for n, _ in net.named_modules({args})]",
                                      [P("prefix", "'model'", True, "keyword")], {}),)),
    _bound_cell("buffers", "recurse=True", hook=_buffers,
                notes="untrainable_params(): buffers are non-trainable Parameters in MindSpore (BatchNorm's "
                      "num_batches_tracked has no counterpart)",
                examples=(*call_cases(BUFFERED + "result = list(m.buffers({args}))", [P("recurse", "True", True)], {}),
                          Example(BUFFERED + "result = len(list(m.buffers()))", inputs={}))),
    _bound_cell("named_buffers", "prefix='', recurse=True, remove_duplicate=True", hook=_named_buffers,
                args={"remove_duplicate": _DEDUPLICATE},
                notes="the non-trainable Parameters of parameters_and_names()",
                examples=(*call_cases(BUFFERED + "result = [n for n, _ in m.named_buffers({args})]",
                                      [P("prefix", "'model'", True), P("recurse", "False", True)], {}),
                          Example(BUFFERED + "result = [b for _, b in m.named_buffers()]", inputs={}),
                          Example(BUFFERED + "result = list(map(lambda item: item[0], (fresh := M()).named_buffers()))", inputs={},
                                  notes="assignment_expression"))),
    *(_bound_cell(name, "name, module", hook=_add_module,
                  notes="setattr (names the child's parameters); a SequentialCell's cell_list (what runs) is made again",
                  examples=(*call_cases(f"net = nn.Sequential(nn.Linear(2, 3))\nnet.{name}({{args}})\nresult = net(x)",
                                        [P("name", "'act'"), P("module", "nn.Tanh()")], {"x": "randn(4, 2)"}),
                            Example(f"class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                                    f"        self.{name}('fc', nn.Linear(2, 3))\n\n    def forward(self, x):\n"
                                    f"        return self.fc(x)\n\n\nm = M()\nresult = m(x).shape",
                                    inputs={"x": "randn(4, 2)"}),
                            # unpacked arguments (timm's ResNet: self.add_module(*stage))
                            Example(f"class M(nn.Module):\n    def __init__(self, stages):\n        super().__init__()\n"
                                    f"        for stage in stages:\n            self.{name}(*stage)\n\n"
                                    f"    def forward(self, x):\n        return self.b(self.a(x))\n\n\n"
                                    f"m = M([('a', nn.Linear(2, 3)), ('b', nn.Tanh())])\nresult = m(x)",
                                    inputs={"x": "randn(4, 2)"}, notes="unpacked"),
                            # a Sequential subclass filled by name (timm's ConvNorm): runs them, keeps the names
                            Example(f"class ConvNorm(nn.Sequential):\n    def __init__(self):\n        super().__init__()\n"
                                    f"        self.{name}('c', nn.Linear(2, 3))\n        self.{name}('act', nn.Tanh())\n\n\n"
                                    f"m = ConvNorm()\nresult = (m(x), m.c(x), len(m))",
                                    inputs={"x": "randn(4, 2)"}, notes="sequential_subclass"),
                            Example(f"net = nn.Sequential()\nfor i in range(2):\n    net.{name}('layer%d' % (i + 1), nn.Linear(2, 2))\n"
                                    f"result = (net(x), net.layer2(x))", inputs={"x": "randn(4, 2)"}, notes="computed_name")))
      for name in ("add_module", "register_module")),
    _bound_cell("to_empty", "*, device=None, recurse=True", args={"device": Drop("device placement is global in MindSpore")},
                notes="the device is dropped (placement is global); returns the Cell, as torch returns the Module",
                examples=(Example("layer = nn.Linear(3, 4).to_empty(device='cpu')\nresult = (layer.weight.shape, layer.bias.dtype)",
                                  inputs={}),
                          Example("m = nn.Linear(3, 4)\nm2 = m.to_empty(device='cpu', recurse=True)\nresult = m2(x).shape",
                                  inputs={"x": "randn(2, 3)"}))),
    _bound_cell("register_parameter", "name, param", hook=_register_parameter, notes="insert_param_to_cell",
                examples=(*call_cases("m = nn.Linear(2, 2)\nm.register_parameter({args})\nresult = m.scale * 2",
                                      [P("name", "'scale'"), P("param", "nn.Parameter(torch.ones(3))")], {}),
                          Example("m = nn.Linear(2, 2)\nm.register_parameter('scale', None)", marked="None"))),
    _bound_cell("get_submodule", "target", hook=_lookup("cells_and_names"), notes="looked up in cells_and_names()",
                examples=call_cases(NET + "result = net.get_submodule({args})(x)", [P("target", "'2.0'")], {"x": "randn(4, 3)"})),
    _bound_cell("get_parameter", "target", hook=_lookup("parameters_and_names"), notes="looked up in parameters_and_names()",
                examples=call_cases(NET + "result = net.get_parameter({args})", [P("target", "'2.0.bias'")], {})),
    _bound_cell("get_buffer", "target", hook=_get_buffer,
                notes="looked up in parameters_and_names(): buffers are non-trainable Parameters in MindSpore; "
                      "BatchNorm's running_mean/running_var are its moving_mean/moving_variance",
                examples=(*call_cases(BUFFERED + "result = m.get_buffer({args})", [P("target", "'scale'")], {}),
                          _on_net("net.train()\nnet(x)\nresult = (net.get_buffer('bn.running_mean'), "
                                  "net.get_buffer('bn.running_var'))", _NORM, notes="batchnorm"),
                          Example("m = nn.BatchNorm1d(3)\nn = m.get_buffer('num_batches_tracked')",
                                  marked="num_batches_tracked"))),
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
                    _resumed_scheduler("torch.optim.lr_scheduler.StepLR(optimizer, 2, gamma=0.5)",
                                       "for _ in range(3):\n    scheduler.step()\n",
                                       "for _ in range(3):\n    other.step()\n"),
                    Example("scaler = torch.amp.GradScaler('cpu')\nsd = scaler.state_dict()",
                            "scaler = mindspore.amp.DynamicLossScaler(\n"
                            "    scale_value=65536.0, scale_factor=2, scale_window=2000\n)\n"
                            "sd = {\n    name: value\n    for name, value in vars(scaler).items()\n"
                            "    if isinstance(value, mindspore.Parameter)\n}"),
                    _on_net("sd = net.state_dict()\nresult = [(key, sd[key]) for key in sorted(sd)]"))),

    _cell(
        "load_state_dict",
        hook=_load_state_dict,
        arity=(0, 2),
        examples=(Example("model.load_state_dict(sd)", "mindspore.load_param_into_net(model, sd)"),
                  Example("optimizer.load_state_dict(sd)", "mindspore.load_param_into_net(optimizer, sd)"),
                  _resumed_scheduler("torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=1, factor=0.5)",
                                     "for loss in (1.0, 0.5, 0.6, 0.7):\n    scheduler.step(loss)\n",
                                     "for loss in (0.8, 0.9, 0.95):\n    other.step(loss)\n",
                                     notes="plateau"),
                  Example("scaler = torch.amp.GradScaler('cpu')\nscaler.load_state_dict(sd)",
                          "scaler = mindspore.amp.DynamicLossScaler(\n"
                          "    scale_value=65536.0, scale_factor=2, scale_window=2000\n)\nvars(scaler).update(sd)"),
                  _on_net("other = Net()\nkeys = other.load_state_dict(net.state_dict())\nresult = (other(x), keys)"),
                  _on_net("other = Net()\nother.load_state_dict(net.state_dict(), strict=False)\nresult = other(x)",
                          notes="strict")),

    ),
]
