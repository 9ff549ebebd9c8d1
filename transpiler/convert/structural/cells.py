"""nn.Module subclasses become nn.Cell subclasses: the base class is renamed by
its attribute rule; here ``forward`` becomes ``construct``."""

from __future__ import annotations

import libcst as cst

from rewrite_rules.spec import Unconvertible
from transpiler.convert.diagnostics import Severity
from transpiler.convert.engine import code_of
from transpiler.convert.structural.container_names import name_filled_containers
from transpiler.convert.structural.grad_mode import grad_context_reference
from transpiler.convert.structural.provenance import LAYER, provenance_of


_MODULE_BASES = {"torch.nn.Module", "torch.nn.modules.module.Module"}
_NOT_MODULES = {"torch.nn.Parameter", "torch.nn.Buffer", "torch.nn.ParameterList", "torch.nn.ParameterDict"}


def is_module_base(qualified: str) -> bool:
    """True for torch.nn.Module and torch.nn layer classes (all Modules)."""
    if qualified in _MODULE_BASES:
        return True
    if qualified in _NOT_MODULES:
        return False
    parts = qualified.split(".")
    if parts[:2] != ["torch", "nn"] or len(parts) < 3:  # torch.nn itself (class X(nn): ...) is no layer
        return False
    if len(parts) == 3 or parts[2] == "modules":
        return parts[-1][:1].isupper()
    return False


def is_self_or_super(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.Name):
        return expr.value == "self"
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "super"


def drop_no_op_decorators(rewriter, original, updated):
    """Without the decorators the rewrite handled whole: grad-mode ones
    (``@torch.no_grad()``) and those with no effect in MindSpore (``@torch.jit.ignore``)."""
    if not any(id(d.decorator) in rewriter.handled for d in original.decorators):
        return updated
    for decorator in original.decorators:
        if id(decorator.decorator) not in rewriter.handled:
            continue
        rewriter.ctx.consume(grad_context_reference(decorator.decorator))
        api = rewriter.no_op_decorators.get(id(decorator.decorator))
        if api is None:
            rewriter.ctx.converted(
                original, "torch.no_grad", "grad-mode decorator removed: MindSpore computes gradients only inside grad functions"
            )
        else:
            rewriter.ctx.converted(original, api, f"@{api} removed: it has no effect in MindSpore")
    rewriter.changed()
    # the comment lines of a removed decorator go to the next line that stays
    decorators, carried = [], []
    for decorator, source in zip(updated.decorators, original.decorators):
        if id(source.decorator) in rewriter.handled:
            carried.extend(decorator.leading_lines)
            continue
        decorators.append(decorator.with_changes(leading_lines=[*carried, *decorator.leading_lines]))
        carried = []
    changes = {"decorators": decorators}
    if carried and decorators:
        changes["lines_after_decorators"] = [*carried, *updated.lines_after_decorators]
    elif carried:
        changes["leading_lines"] = [*updated.leading_lines, *carried]
    return updated.with_changes(**changes)


def convert_function(rewriter, original: cst.FunctionDef, updated: cst.FunctionDef):
    changes = {}
    updated = drop_no_op_decorators(rewriter, original, updated)
    if rewriter.in_cell_class() and original.name.value == "forward":
        changes["name"] = cst.Name("construct")
        rewriter.changed()
        rewriter.ctx.converted(original, "forward", "forward -> construct")
    elif rewriter.in_cell_class() and original.name.value == "train" and _is_train_signature(original.params):
        # torch's model.train(mode) / eval() run this override; MindSpore's set_train(mode) is what
        # converted code calls (LoRA layers merge their weights here)
        changes["name"] = cst.Name("set_train")
        rewriter.changed()
        rewriter.ctx.converted(original, "torch.nn.Module.train", "train(self, mode) override -> set_train(self, mode)")
    if rewriter.in_cell_class():
        updated = name_filled_containers(rewriter, original, updated)
    return updated.with_changes(**changes) if changes else updated


def _is_train_signature(params: cst.Parameters) -> bool:
    """``(self)`` or ``(self, mode=True)``: torch's Module.train, not a training routine of the model."""
    positional = [*params.posonly_params, *params.params]
    if params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or params.kwonly_params or params.star_kwarg:
        return False
    return 1 <= len(positional) <= 2 and all(p.name.value == n for p, n in zip(positional, ("self", "mode")))


_SEQUENTIAL_BASES = {"torch.nn.Sequential", "torch.nn.modules.container.Sequential"}
# torch's Sequential.forward, over the children as torch holds them (by name, in the order added); read from
# the Cell's own dict: graph mode compiles no name_cells() call ("The pointer[node] is null", MindSpore 2.10)
_SEQUENTIAL_CONSTRUCT = '''\
def construct(self, input_data):
    # torch's Sequential runs every child, those assigned as attributes too; SequentialCell runs its cell_list
    for cell in self._cells.values():
        input_data = cell(input_data)
    return input_data
'''


def run_assigned_children(rewriter, original: cst.ClassDef, updated: cst.ClassDef):
    """A Sequential subclass that assigns its children (``self.conv = nn.Conv2d(...)``,
    timm's ConvNorm) and runs them with Sequential's own forward: torch runs
    every registered child in order, MindSpore's SequentialCell runs only the
    cells it was constructed with (its ``cell_list``). Such a class gets the
    ``construct`` torch's forward is; its subclasses inherit it.
    (So does a convolution subclass overriding only ``_conv_forward``: below.)"""
    updated = _run_overridden_conv_forward(rewriter, original, updated)
    if not any(rewriter.analysis.qualified(base.value) in _SEQUENTIAL_BASES for base in original.bases):
        return updated
    methods = [s for s in original.body.body if isinstance(s, cst.FunctionDef)] \
        if isinstance(original.body, cst.IndentedBlock) else []
    if any(m.name.value in ("forward", "construct") for m in methods):
        return updated
    if not any(_assigns_child(m) for m in methods):
        return updated
    construct = cst.parse_statement(_SEQUENTIAL_CONSTRUCT).with_changes(leading_lines=[cst.EmptyLine(indent=False)])
    rewriter.changed()
    # recorded, not counted: the base is the one torch.nn.Sequential use, converted by its rule
    rewriter.ctx.report(original, "torch.nn.Sequential", Severity.INFO,
                        "Sequential subclass assigning its children: construct runs them all, as torch's forward")
    return updated.with_changes(body=updated.body.with_changes(body=[*updated.body.body, construct]))


class _ChildAssignments(cst.CSTVisitor):
    """``self.name = value`` with a value that may be a Module (not a literal)."""

    def __init__(self):
        self.found = False

    def visit_Assign(self, node: cst.Assign) -> None:
        if any(_is_self_attribute(t.target) for t in node.targets) and not _is_literal(node.value):
            self.found = True

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if _is_self_attribute(node.target) and node.value is not None and not _is_literal(node.value):
            self.found = True


def _assigns_child(method: cst.FunctionDef) -> bool:
    finder = _ChildAssignments()
    method.body.visit(finder)
    return finder.found


def _is_self_attribute(target: cst.BaseExpression) -> bool:
    return isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"


def _is_literal(value: cst.BaseExpression) -> bool:
    if isinstance(value, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(value, cst.Name):
        return value.value in ("True", "False", "None")
    if isinstance(value, (cst.Tuple, cst.List)):
        return all(_is_literal(e.value) for e in value.elements)
    return False


# -- calls of a torch parent class's methods ----------------------------------
# A class deriving from a torch layer calls the layer's methods explicitly
# (``nn.Linear.__init__(self, ...)``, ``nn.Embedding.forward(self, x)``,
# ``nn.Linear.train(self, mode)``: LoRA-style layers with a mixin) or on
# itself (``self._conv_forward(x, w, b)``). The class derives from the
# layer's adapter (``torch_nn.Linear``, torch's signature over the Cell), so
# the parent is that class and each method is its Cell counterpart.

# torch Module method -> the Cell method that does the same, same arguments
_PARENT_METHODS = {"__init__": "__init__", "forward": "construct", "train": "set_train",
                   "extra_repr": "extend_repr", "reset_parameters": "reset_parameters"}
# the layers with torch's private convolution step, and their spatial dimensions
_CONV_FORWARDS = {"torch.nn.Conv1d": 1, "torch.nn.Conv2d": 2, "torch.nn.Conv3d": 3,
                  "torch.nn.modules.conv.Conv1d": 1, "torch.nn.modules.conv.Conv2d": 2,
                  "torch.nn.modules.conv.Conv3d": 3}
LAYER_METHOD_NAMES = frozenset({"_conv_forward"})


def parent_layer_call(rewriter, original: cst.Call, updated: cst.Call, qualified: str):
    """``nn.Linear.__init__(self, ...)`` -> ``torch_nn.Linear.__init__(self, ...)``;
    None when ``qualified`` is no method of a torch Module class."""
    parent, _, method = qualified.rpartition(".")
    if not is_module_base(parent) or not isinstance(original.func, cst.Attribute):
        return None
    if not original.args or original.args[0].keyword is not None or original.args[0].star:
        rewriter.mark(original, qualified, "the instance is not passed first: the call cannot be matched to a Cell method")
        return updated
    try:
        if method == "_conv_forward":
            result = conv_forward(rewriter, parent, updated.args[0].value, updated.args[1:])
            message = f"{parent}._conv_forward -> the convolution on the layer's own settings"
        else:
            base = _parent_class(rewriter, parent, method)
            args = list(updated.args)
            if method == "eval":  # torch's eval() is train(False)
                target, args = "set_train", [args[0].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                                             cst.Arg(cst.Name("False"))]
            else:
                target = _PARENT_METHODS.get(method)
            if target is None:
                raise Unconvertible(f"{parent}.{method} has no counterpart on the MindSpore Cell")
            result = updated.with_changes(func=cst.Attribute(base, cst.Name(target)), args=args)
            message = f"{parent}.{method}(self, ...) -> {code_of(base)}.{target}(self, ...)"
    except Unconvertible as exc:
        rewriter.mark(original, qualified, exc.reason)
        return updated
    rewriter.ctx.consume(original.func)
    rewriter.changed()
    rewriter.ctx.converted(original, qualified, message)
    return result


def _parent_class(rewriter, parent: str, method: str) -> cst.BaseExpression:
    """The class the conversion derives from where the original derives from ``parent``
    (as ``Rewriter._reference`` makes a base class): the MindSpore class, or the layer's adapter."""
    attribute = rewriter.rules.attributes.get(parent)  # torch.nn.Module -> mindspore.nn.Cell
    if attribute is not None:
        if attribute.target is None:
            raise Unconvertible(attribute.reason or "no MindSpore equivalent")
        if method == "reset_parameters":
            raise Unconvertible(f"{parent} has no reset_parameters")
        return rewriter.ctx.ref(attribute.target)
    rule = rewriter.rules.calls.get(parent)
    if rule is None or rule.target is None:
        raise Unconvertible(f"no MindSpore rule for {parent}")
    if method == "reset_parameters" and not rule.reset_parameters:
        raise Unconvertible(f"the rule of {parent} does not say what its reset_parameters() does")
    if rule.is_plain_rename and not rule.args and not rule.reset_parameters:
        return rewriter.ctx.ref(rule.target)
    return rewriter.adapters.reference(parent, rule, subclassed=True)


def layer_method_call(rewriter, original: cst.Call, updated: cst.Call):
    """``self._conv_forward(x, w, b)`` in a class deriving from a torch
    convolution (or on a convolution the file made: ``self.conv._conv_forward``);
    None when the receiver is not known to be one."""
    receiver = original.func.value
    layer = None
    if is_self_or_super(receiver) and rewriter.in_cell_class():
        layer = _torch_layer_base(rewriter, rewriter.classes[-1])
        receiver_code = "self"
    else:
        origin = provenance_origin(rewriter, receiver)
        if origin is not None:
            layer = origin
        receiver_code = code_of(updated.func.value) if isinstance(receiver, (cst.Name, cst.Attribute)) else None
    if layer is None or layer not in _CONV_FORWARDS:
        return None
    name = original.func.attr.value
    if receiver_code is None:
        rewriter.mark(original, f"{layer}.{name}", "the layer is not a name or attribute the call can read settings from")
        return updated
    try:
        result = conv_forward(rewriter, layer, cst.parse_expression(receiver_code), updated.args)
    except Unconvertible as exc:
        rewriter.mark(original, f"{layer}.{name}", exc.reason)
        return updated
    rewriter.changed()
    rewriter.ctx.converted(original, f"{layer}.{name}", f"{name} -> the convolution on the layer's own settings")
    return result


def conv_forward(rewriter, layer: str, cell: cst.BaseExpression, args) -> cst.BaseExpression:
    """torch's ``Conv._conv_forward(input, weight, bias)`` on the MindSpore Cell ``cell``:
    its function with the Cell's stride, pad_mode, padding, dilation and groups.
    The Cell keeps an explicit padding per side (top, bottom, left, right) or as
    one int (the functions take one value per dimension), and padding 0 with
    pad_mode 'same' / 'valid' (the adapter keeps torch's string there). Conv1d is a 2-d
    convolution over (out, in, 1, k) weights in MindSpore, as the Cell computes it."""
    if len(args) != 3 or any(a.star or a.keyword is not None for a in args):
        raise Unconvertible("_conv_forward takes (input, weight, bias) by position")
    ndim = _CONV_FORWARDS[layer]
    c = code_of(cell)
    x, weight, bias = (code_of(a.value) for a in args)
    function = rewriter.ctx.ref(f"mindspore.ops.conv{max(ndim, 2)}d")
    if ndim == 1:
        x = f"{x}.expand_dims(2)"
    call = cst.parse_expression(
        f"f({x}, {weight}, {bias}, stride={c}.stride, pad_mode={c}.pad_mode, "
        f"padding={c}.padding[::2] if isinstance({c}.padding, tuple) else {c}.padding if {c}.pad_mode == 'pad' else 0, "
        f"dilation={c}.dilation, groups={c}.group)"
    ).with_changes(func=function)
    return cst.Call(cst.Attribute(call, cst.Name("squeeze")), [cst.Arg(cst.Integer("2"))]) if ndim == 1 else call


def _torch_layer_base(rewriter, class_name: str | None, seen=()) -> str | None:
    """The torch layer the file's class ``class_name`` derives from (through the file's own classes)."""
    if class_name is None or class_name in seen:
        return None
    for statement in _class_definitions(rewriter.module, class_name):
        for base in statement.bases:
            qualified = rewriter.analysis.qualified(base.value)
            if qualified is not None:
                if is_module_base(qualified) and qualified not in _MODULE_BASES:
                    return qualified
            elif isinstance(base.value, cst.Name):
                found = _torch_layer_base(rewriter, base.value.value, (*seen, class_name))
                if found is not None:
                    return found
    return None


def _class_definitions(module: cst.Module, name: str):
    found = []

    class _Finder(cst.CSTVisitor):
        def visit_ClassDef(self, node: cst.ClassDef):
            if node.name.value == name:
                found.append(node)

    module.visit(_Finder())
    return found


def provenance_origin(rewriter, receiver: cst.BaseExpression) -> str | None:
    """The torch layer API that made ``receiver`` (``self.conv = nn.Conv2d(...)``), if the file shows it."""
    origin = provenance_of(rewriter.ctx, rewriter.module).origin(receiver)
    return origin.qualified if origin is not None and origin.kind == LAYER else None


_CONV_FORWARD_CONSTRUCT = '''\
def construct(self, x):
    # torch's {layer}.forward runs the _conv_forward this class overrides; MindSpore's construct does not
    return self._conv_forward(x, self.weight, self.bias)
'''


def _run_overridden_conv_forward(rewriter, original: cst.ClassDef, updated: cst.ClassDef):
    """A convolution subclass that overrides ``_conv_forward`` and keeps torch's
    forward (a cast of the weight to the input's dtype) gets the ``construct``
    that torch's forward is: the Cell's own construct would not run the override."""
    if not isinstance(original.body, cst.IndentedBlock):
        return updated
    methods = {s.name.value for s in original.body.body if isinstance(s, cst.FunctionDef)}
    if "_conv_forward" not in methods or methods & {"forward", "construct"}:
        return updated
    layer = _torch_layer_base(rewriter, original.name.value)
    if layer not in _CONV_FORWARDS:
        return updated
    construct = cst.parse_statement(_CONV_FORWARD_CONSTRUCT.format(layer=layer.rsplit(".", 1)[-1]))
    rewriter.changed()
    rewriter.ctx.report(original, f"{layer}._conv_forward", Severity.INFO,
                        "_conv_forward overridden: construct runs it, as torch's forward")
    return updated.with_changes(body=updated.body.with_changes(
        body=[*updated.body.body, construct.with_changes(leading_lines=[cst.EmptyLine(indent=False)])]))
