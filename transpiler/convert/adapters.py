"""torch's signatures over the MindSpore forms, for the uses a rule cannot
convert where they stand.

A rule converts a call by rewriting its arguments, so it needs to see them.
Model zoos also pass layer classes around as values (``norm_layer=nn.BatchNorm2d``,
called later with torch's arguments), subclass them (``class PReLU(nn.PReLU)``,
calling ``super().__init__`` with torch's arguments) and forward ``**kwargs``
into them. For those uses the file gets a small namespace of adapters: each
has torch's signature and applies the rule to its parameters, so it does at
run time exactly what the rule does where the arguments are written out.

    class torch_nn:
        class BatchNorm2d(nn.BatchNorm2d):
            def __init__(self, num_features, eps=1e-05, momentum=0.1, affine=True, ...):
                super().__init__(num_features, eps=eps, momentum=1 - momentum, ...)

    norm_layer = torch_nn.BatchNorm2d

An adapter is a subclass of the MindSpore Cell when the rule makes one (so
``isinstance`` and subclassing behave, and weights map by the Cell's rule),
else a function; where the rule's form is a class it writes above the code with
torch's signature already (torch's ModuleDict), that class is the adapter. An
argument the rule cannot carry becomes a check that raises
at run time when a value other than torch's default arrives; a rule whose
conversion needs literal arguments gets no adapter (the use stays marked).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import combinations

import libcst as cst

from rewrite_rules.spec import ApiRule, AttributeRead, NotALiteral, Unconvertible, Unsupported
from transpiler.convert.context import FileContext, parse_expr, parse_stmt
from transpiler.convert.engine import bind, code_of, convert_call, is_literal, literal_value
from transpiler.convert.formatting import format_compound
from transpiler.convert.project import adapter_members
from transpiler.convert.walk import LAYOUT_TYPES, Visitor, walk


@dataclass
class _Adapter:
    name: str  # the member name in its namespace
    namespace: str  # e.g. torch_nn
    definition: cst.BaseCompoundStatement | None  # None: the class a rule wrote above the code, taken as it is
    is_class: bool
    checked: dict[str, str]  # parameters checked at run time -> torch's default (source text)
    imports: frozenset = frozenset()  # the MindSpore imports its definition needs


@dataclass
class Adapters:
    ctx: FileContext
    attributes: dict = field(default_factory=dict)  # torch constant -> its AttributeRule (defaults naming one)
    made: dict[str, _Adapter | None] = field(default_factory=dict)  # torch name -> adapter (None: impossible)
    used: dict[str, None] = field(default_factory=dict)  # torch names whose adapter the output refers to

    def reference(self, qualified: str, rule: ApiRule, *, subclassed: bool = False,
                  call: cst.Call | None = None) -> cst.BaseExpression:
        """``torch_nn.X`` for the torch API ``qualified``; raises Unconvertible
        when the rule cannot be applied at run time (or, with ``subclassed``,
        gives no class to derive from; or ``call`` passes a literal the adapter
        would refuse at run time: that is known now)."""
        if qualified not in self.made:
            before = set(self.ctx.imports_needed)
            try:
                adapter = _build(qualified, rule, self.ctx, self.attributes)
                self.made[qualified] = replace(adapter, imports=frozenset(self.ctx.imports_needed - before))
            except Unconvertible:
                self.made[qualified] = None
            self.ctx.imports_needed = before  # queued again when the adapter is used
        adapter = self.made[qualified]
        if adapter is None:
            raise Unconvertible("its arguments need converting where it is called (the rule needs literal values)")
        if subclassed and not adapter.is_class:
            raise Unconvertible("the MindSpore form is not a class that can be derived from")
        if call is not None:
            _refuse_known_values(rule, call, adapter.checked, self.ctx)
        self.used[qualified] = None
        self.ctx.imports_needed |= adapter.imports
        if not adapter.namespace:  # the class written above the code
            return cst.Name(adapter.name)
        return cst.Attribute(cst.Name(adapter.namespace), cst.Name(adapter.name))

    def define(self, module: cst.Module) -> None:
        """Ask for the namespaces of the adapters the output uses (written
        after the imports by ``transpiler.convert.definitions``)."""
        namespaces: dict[str, list[_Adapter]] = {}
        for name in self.used:
            adapter = self.made[name]
            if adapter.definition is None:
                continue  # the class written above the code
            namespaces.setdefault(adapter.namespace, []).append(adapter)
        if namespaces and self.ctx.project_attributes is not None:
            names = _Names()
            walk(module, names, prune=LAYOUT_TYPES)
            named = names.found | self.ctx.project_attributes
            for namespace, members in namespaces.items():
                namespaces[namespace] = [
                    m if f"{namespace}.{m.name}" in names.bases else replace(m, definition=_without_unnamed(m.definition, named))
                    for m in members]
        for namespace, members in namespaces.items():
            self.ctx.define(namespace, _namespace(namespace, members, module))


class _Names(Visitor):
    """The names, attribute names and short strings of the converted file (but an
    attribute of ``self``: no method of the file runs on an adapter only called here),
    and the base classes its classes name."""

    def __init__(self):
        super().__init__()
        self.found: set[str] = set()
        self.bases: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.found.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return not (isinstance(node.value, cst.Name) and node.value.value == "self")

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if len(node.value) < 40:
            self.found.add(node.value.strip("\"'"))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.bases.update(code_of(base.value) for base in node.bases)


def _without_unnamed(definition, named: set[str]):
    """An adapter class the file only calls (no class of the file derives from it),
    without the members no code of the project can reach: the properties giving torch's
    attribute names (``weight`` -> ``gamma``) that no file names, and
    ``reset_parameters`` (with the call that runs a subclass's own) where no file names
    it. The project index (``SiblingFacts.attributes``) says what the other files
    name: monai's DenseNet sets ``m.weight`` on the BatchNorms its layer factory, another
    file, makes. Only its instances could reach the members, never a ``self`` of
    another class, as a class deriving from an adapter gets it whole in its own file."""
    if not isinstance(definition, cst.ClassDef):
        return definition
    unnamed = adapter_members() - named
    kept = []
    for member in definition.body.body:
        if isinstance(member, cst.FunctionDef):
            if member.name.value in unnamed and (member.decorators or member.name.value == "reset_parameters"):
                continue
            if member.name.value == "__init__" and "reset_parameters" in unnamed:
                member = member.with_changes(body=member.body.with_changes(
                    body=[s for s in member.body.body if not _runs_reset(s)]))
        kept.append(member)
    return definition.with_changes(body=definition.body.with_changes(body=kept))


def _runs_reset(statement) -> bool:
    return isinstance(statement, cst.If) and "reset_parameters" in code_of(statement.test)


# in the docstring of every definition ms-migrate writes above a file's code
WRITTEN_BY = "(written by ms-migrate)"


def written_namespaces(module: cst.Module) -> frozenset[str]:
    """The adapter classes an earlier conversion wrote into the module
    (``torch_functions``): namespaces of functions, whose calls are no tensor methods."""
    return frozenset(statement.name.value for statement in module.body
                     if isinstance(statement, cst.ClassDef) and WRITTEN_BY in (statement.get_docstring() or ""))


def _namespace(name: str, members: list[_Adapter], module: cst.Module) -> cst.ClassDef:
    torch_module = name.rstrip("_").removesuffix("_functions").replace("_", ".")
    docstring = cst.SimpleStatementLine([cst.Expr(cst.SimpleString(
        f'"""{torch_module} signatures over MindSpore {WRITTEN_BY}."""'
    ))])
    body = [docstring]
    for member in members:  # formatted one by one: each member's black run serves every file that uses it
        formatted = format_compound(member.definition, module, depth=1)
        body.append(formatted.with_changes(leading_lines=[cst.EmptyLine(indent=False)]))
    return cst.ClassDef(name=cst.Name(name), body=cst.IndentedBlock(body))


def _build(qualified: str, rule: ApiRule, ctx: FileContext, attributes: dict | None = None) -> _Adapter:
    # torch.zeros(*size, size=None, ...): the size by keyword too, which a Python signature
    # cannot say; the adapter takes it positionally (as torch.zeros(2, 3) or ((2, 3)))
    varargs = next((p.name for p in rule.params if p.kind == "varargs"), None)
    params = [p for p in rule.params if p.kind == "varargs" or p.name != varargs]
    if any(p.kind == "varkw" for p in params):
        raise Unconvertible("torch's signature takes **kwargs")
    # a default naming a torch constant (all_reduce's op=ReduceOp.SUM) is its MindSpore constant
    converted_defaults = {}
    for param in params:
        if param.default is not None and not is_literal(parse_expr(param.default)):
            constant = _constant_target(qualified, param.default, attributes or {})
            if constant is None:
                raise Unconvertible(f"torch's default of {param.name} is not a literal")
            converted_defaults[param.name] = constant
    unsupported = {p.name: spec.reason for p in params if isinstance(spec := rule.args.get(p.name), Unsupported)}
    # Parameters whose value the rule must see as a literal are fixed to
    # torch's default, with a check (the fewest such parameters that work).
    optional = [p.name for p in params if p.default is not None and p.name not in unsupported]
    first_reason = None
    for fixed in (set(), *({name} for name in optional), *({a, b} for a, b in combinations(optional, 2))):
        try:
            result, target = _convert_quietly(rule, _call(qualified, params, set(unsupported) | fixed), ctx)
            break
        except Unconvertible as exc:
            if not isinstance(exc, NotALiteral):
                first_reason = first_reason or exc.reason
    else:
        raise Unconvertible(first_reason or "the rule does not apply")
    defaults = {p.name: p.default for p in params}
    if varargs and rule.pack_varargs:  # torch.zeros(2, 3) and torch.zeros((2, 3)) alike
        guards_first = [parse_stmt(
            f"{varargs} = {varargs}[0] if len({varargs}) == 1 and isinstance({varargs}[0], (tuple, list)) else {varargs}\n")]
    else:
        guards_first = []
    checked = {name: defaults[name] or "None" for name in [*unsupported, *(n for n in optional if n in fixed)]}
    refused = [(name, defaults[name], reason) for name, reason in unsupported.items()]
    for name in (n for n in optional if n in fixed):  # why each fixed parameter needs its default
        try:
            _convert_quietly(rule, _call(qualified, params, set(unsupported) | fixed - {name}), ctx)
            reason = first_reason
        except NotALiteral:
            reason = None  # the rule reads its value: nothing more to say than the guard does
        except Unconvertible as exc:
            reason = exc.reason
        why = "only torch's default converts" + (f" ({reason})" if reason else "")
        refused.append((name, defaults[name], why))
    guards = guards_first + _guards(qualified, refused)
    name = qualified.rsplit(".", 1)[-1]
    module = qualified.rsplit(".", 1)[0]
    namespace = module.replace(".", "_") if "." in module else f"{module}_functions"
    while namespace in ctx.analysis.bound_names or namespace in ctx.analysis.imports:
        namespace += "_"  # the file has a name of its own like it
    signature = parse_stmt(f"def f(self, {rule.signature}):\n    pass\n").params
    if converted_defaults:
        signature = _with_defaults(signature, {name: ctx.ref(target) for name, target in converted_defaults.items()})
    if varargs is not None:
        signature = signature.with_changes(kwonly_params=[p for p in signature.kwonly_params if p.name.value != varargs])
    # a layer: torch's class over the Cell (so isinstance, subclassing and weights behave);
    # anything else (a tensor, a dataset) is made by a function
    makes_a_class = (rule.target or "").startswith("mindspore.nn.") and rule.target.rsplit(".", 1)[-1][:1].isupper()
    result, chained = _peel_self_returning(result)
    # a rule may make the layer a class of its own, written above the code (MultiheadAttention's)
    defined_class = (isinstance(result, cst.Call) and isinstance(result.func, cst.Name)
                     and isinstance(ctx.definitions.get(result.func.value), cst.ClassDef))
    if isinstance(result, cst.Call) and (defined_class or target is not None and target == rule.target and makes_a_class):
        construct = _statement(cst.Call(func=cst.Attribute(cst.Call(cst.Name("super")), cst.Name("__init__")),
                                        args=result.args))
        after = chained + [parse_stmt(text + "\n") for text in rule.after_init]
        after += [parse_stmt(f"self.{name} = {name}\n") for name in _kept_arguments(rule, result)]
        after += [parse_stmt(f"self.{name} = {_TORCH_VALUES.get(name, name)}\n") for name in _kept_as_torch(qualified, params)]
        if isinstance(rule.attribute_reads.get("padding"), AttributeRead) and any(p.name == "padding" for p in params):
            # torch keeps 'same' / 'valid' as given; MindSpore makes them its pad_mode and keeps padding 0,
            # which a subclass passing self.padding on (F.conv2d) would silently use
            after.append(parse_stmt("if isinstance(padding, str):\n    self.padding = padding\n"))
        methods = _torch_attributes(rule)
        if rule.reset_parameters:
            after.append(_runs_overridden_reset(f"{namespace}.{name}"))
            methods.insert(0, _reset_parameters(qualified, rule, ctx))
        if defined_class and not (guards or after or methods) and _takes_torch_signature(
                ctx.definitions[result.func.value], signature, result):
            return _Adapter(result.func.value, "", None, True, checked)  # the class written above the code is one
        init = cst.FunctionDef(
            name=cst.Name("__init__"), params=signature, body=cst.IndentedBlock([*guards, construct, *after]),
        )
        definition = cst.ClassDef(name=cst.Name(name), body=cst.IndentedBlock([init, *methods]),
                                  bases=[cst.Arg(result.func)])
        return _Adapter(name, namespace, definition, True, checked)
    if rule.after_init:
        raise Unconvertible("the rule's MindSpore form is not a Cell class its statements could follow")
    params_without_self = signature.with_changes(params=signature.params[1:])
    definition = cst.FunctionDef(
        name=cst.Name(name),
        params=params_without_self,
        body=cst.IndentedBlock([*guards, cst.SimpleStatementLine([cst.Return(result)])]),
        decorators=[cst.Decorator(cst.Name("staticmethod"))],
    )
    return _Adapter(name, namespace, definition, False, checked)


def _takes_torch_signature(defined: cst.ClassDef, signature: cst.Parameters, construct: cst.Call) -> bool:
    """The class a rule writes above the code (torch's ModuleDict) has torch's signature
    and the adapter would pass each parameter on as it comes: no adapter is needed."""
    init = next((s for s in defined.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None)
    if init is None or not isinstance(init.body, cst.IndentedBlock):
        return False
    same = cst.Module([]).code_for_node(init.params) == cst.Module([]).code_for_node(signature)
    names = [p.name.value for p in signature.params[1:]]
    passed = [a.value.value if isinstance(a.value, cst.Name) and a.keyword is None and not a.star else None
              for a in construct.args]
    return same and not signature.kwonly_params and signature.star_arg is cst.MaybeSentinel.DEFAULT and passed == names


def _constant_target(qualified: str, default: str, attributes: dict) -> str | None:
    """The MindSpore constant for a torch signature's default naming a torch constant,
    written in full (``torch.float16``) or from the API's module (``ReduceOp.SUM`` of
    torch.distributed.all_reduce); None when no rule converts it."""
    module = qualified.rsplit(".", 1)[0]
    for name in (default, f"{module}.{default}"):
        attribute = attributes.get(name)
        if attribute is not None and attribute.target is not None:
            return attribute.target
    return None


def _with_defaults(signature: cst.Parameters, defaults: dict[str, cst.BaseExpression]) -> cst.Parameters:
    def changed(params):
        return [p.with_changes(default=defaults[p.name.value]) if p.name.value in defaults else p for p in params]

    return signature.with_changes(params=changed(signature.params), kwonly_params=changed(signature.kwonly_params))


# Cell methods that return the Cell: ``nn.BatchNorm2d(...).set_train()`` is the
# class, then ``self.set_train()`` in its constructor.
_SELF_RETURNING = frozenset({"set_train"})


def _peel_self_returning(result):
    chained = []
    while (isinstance(result, cst.Call) and isinstance(result.func, cst.Attribute)
           and result.func.attr.value in _SELF_RETURNING and isinstance(result.func.value, cst.Call)):
        chained.insert(0, _statement(result.with_changes(func=result.func.with_changes(value=cst.Name("self")))))
        result = result.func.value
    return result, chained


def _reset_parameters(qualified: str, rule: ApiRule, ctx: FileContext) -> cst.FunctionDef:
    """torch's ``reset_parameters()`` of the layer, from its rule: a subclass
    calls ``super().reset_parameters()`` (timm's ScaledStdConv2d)."""
    if any("mindspore." in text for text in rule.reset_parameters):
        ctx.imports_needed.add(("mindspore", "mindspore"))
    body = "".join(f"    {line}\n" for text in rule.reset_parameters for line in text.splitlines())
    return parse_stmt(f"def reset_parameters(self):\n    # what {qualified}.reset_parameters() does\n{body}")


def _runs_overridden_reset(adapter: str) -> cst.If:
    """torch's constructor ends with ``self.reset_parameters()``: a subclass's
    own version runs there (MindSpore's constructor has drawn the layer's own)."""
    return parse_stmt(f"if type(self).reset_parameters is not {adapter}.reset_parameters:\n"
                               "    self.reset_parameters()  # a subclass's own, as torch's constructor runs it\n")


# torch's constructor arguments that are no attribute of the torch layer, or name its parameter
# (``bias=True`` makes the Parameter ``self.bias``)
_NOT_ATTRIBUTES = frozenset({"device", "dtype", "weight", "bias"})


def _kept_arguments(rule: ApiRule, construct: cst.Call) -> list[str]:
    """torch's constructor arguments that MindSpore's constructor (``construct``)
    does not take under their own name (dropped, only torch's default accepted,
    or renamed: ``track_running_stats`` -> ``use_batch_statistics``), kept as
    torch keeps them: a subclass reads them on ``self`` (a LoRA Embedding passes
    ``self.max_norm, self.norm_type, self.sparse`` to ``F.embedding``). The
    Cell keeps no attribute of that name. Parameters and attributes the rule
    maps are read through their own names (``_torch_attributes``)."""
    own_name: dict[str, bool] = {}  # parameter -> passed to MindSpore under its own name (or by position)
    for arg in construct.args:
        for name in _names_in(arg.value):
            same = arg.keyword is None or arg.keyword.value == name
            own_name[name] = own_name.get(name, False) or same
    kept = []
    for param in rule.params:
        name = param.name
        if param.kind in ("varargs", "varkw") or name.startswith("_") or name in _NOT_ATTRIBUTES:
            continue
        if name in rule.weight_moves or name in rule.attribute_reads or own_name.get(name, False):
            continue
        kept.append(name)
    return kept


# Constructor arguments MindSpore's layer takes but keeps in another form or not at all
# (MaxPool2d's padding as (0, p, p) in its primitive, no dilation or ceil_mode attribute;
# BatchNorm's affine; RNN's nonlinearity), and which its construct does not read (measured
# on 2.10: the pooling Cells run a primitive made in the constructor; AvgPool1d reads its
# kernel_size and stride, which stay MindSpore's): the adapter keeps torch's values, which a
# subclass reads on self (EfficientDet's MaxPool2dStaticSamePadding: self.stride, self.dilation ...).
_POOL_MAX = ("kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices")
_POOL_AVG = ("kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override")
_KEPT_AS_TORCH = {
    **{f"torch.nn.MaxPool{n}d": _POOL_MAX for n in (1, 2, 3)},
    "torch.nn.AvgPool1d": ("padding", "ceil_mode", "count_include_pad"),
    **{f"torch.nn.AvgPool{n}d": _POOL_AVG for n in (2, 3)},
    **{f"torch.nn.BatchNorm{n}d": ("affine", "track_running_stats") for n in (1, 2, 3)},
    "torch.nn.RNN": ("nonlinearity",),
}
_TORCH_VALUES = {"stride": "kernel_size if stride is None else stride"}  # torch's pools default stride to the window


def _kept_as_torch(qualified: str, params) -> list[str]:
    names = {p.name for p in params}
    return [name for name in _KEPT_AS_TORCH.get(qualified, ()) if name in names]


def _names_in(expr: cst.BaseExpression) -> set[str]:
    class _Names(cst.CSTVisitor):
        def __init__(self):
            self.found = set()

        def visit_Name(self, node: cst.Name) -> None:
            self.found.add(node.value)

    finder = _Names()
    expr.visit(finder)
    return finder.found


def _torch_attributes(rule: ApiRule) -> list[cst.FunctionDef]:
    """Properties with torch's attribute names (``eps`` -> ``self.epsilon``,
    ``weight`` -> ``self.gamma``), for code that subclasses the layer and reads
    them on ``self`` (or sets them: a renamed one has a setter; one MindSpore
    stores differently is read-only)."""
    properties = []
    for name, read in rule.attribute_reads.items():
        if isinstance(read, str):
            value = f"self.{read}"
        elif read.template is not None and f"{{cell}}.{name}" not in read.template:
            value = read.template.format(cell="self")
        else:
            continue  # not kept by MindSpore, or stored under the same name
        properties.append(parse_stmt(f"@property\ndef {name}(self):\n    return {value}\n"))
        if isinstance(read, str):  # a subclass may set it too (self.groups = groups)
            properties.append(parse_stmt(f"@{name}.setter\ndef {name}(self, value):\n    self.{read} = value\n"))
    return properties


def _call(qualified: str, params, left_out: set[str]) -> cst.Call:
    """The torch call passing every parameter by its own name (those left out
    take torch's default)."""
    args = []
    for param in params:
        if param.name in left_out:
            continue
        value = cst.Name(param.name)
        if param.kind == "varargs":
            args.append(cst.Arg(value, star="*"))
        elif param.kind == "positional" and param.default is None:
            args.append(cst.Arg(value))
        else:
            args.append(cst.Arg(value, keyword=cst.Name(param.name)))
    return cst.Call(func=cst.Name(qualified.rsplit(".", 1)[-1]), args=_with_commas(args))


def _refuse_known_values(rule: ApiRule, call: cst.Call, checked: dict[str, str], ctx: FileContext) -> None:
    """A call whose literal arguments the adapter's checks would refuse is not
    converted: the refusal is known now, and marked."""
    try:
        bound = bind(rule, call, ctx)
    except Unconvertible:
        return  # unpacked arguments: bound at run time
    for name, default in checked.items():
        value = bound.values.get(name)
        if value is not None and is_literal(value) and literal_value(value) != literal_value(parse_expr(default)):
            raise Unconvertible(f"argument {name}={code_of(value)} is refused at run time too")


def _convert_quietly(rule: ApiRule, call: cst.Call, ctx: FileContext):
    """Apply the rule; what it reports belongs to the call sites, not here.
    Returns (result, the MindSpore name the result calls, if the rule named it)."""
    diagnostics, unplaced, refs = len(ctx.diagnostics), len(ctx._unplaced), len(ctx.generated_refs)
    try:
        result = convert_call(rule, call, ctx, source=call, for_adapter=True)
    finally:
        del ctx.diagnostics[diagnostics:]
        del ctx._unplaced[unplaced:]
    target, (made, _) = None, _peel_self_returning(result)
    if isinstance(made, cst.Call):
        target = next((q for node, _, q in ctx.generated_refs[refs:] if node is made.func), None)
    return result, target


def _guards(api: str, refused: list[tuple[str, str | None, str]]) -> list[cst.If]:
    """``if name != default: raise NotImplementedError(...)``: the argument cannot be
    carried, so only torch's default may arrive; one check for the arguments refused for
    the same reason (``elementwise_affine`` and ``bias`` of LayerNorm)."""
    by_reason: dict[str, list[tuple[str, str]]] = {}
    for name, default, reason in refused:
        by_reason.setdefault(reason, []).append((name, default if default is not None else "None"))
    guards = []
    for reason, arguments in by_reason.items():
        test = " or ".join(f"{name} {'is not' if default in ('None', 'True', 'False') else '!='} {default}"
                           for name, default in arguments)
        names = ", ".join(f"'{name}'" for name, _ in arguments)
        message = f"{api}: argument{'s' if len(arguments) > 1 else ''} {names} cannot be carried: {reason}"
        guards.append(parse_stmt(f"if {test}:\n    raise NotImplementedError({message!r})\n"))
    return guards


def _statement(expression: cst.BaseExpression) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine([cst.Expr(expression)])


def _with_commas(args: list[cst.Arg]) -> list[cst.Arg]:
    comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    return [a.with_changes(comma=comma) for a in args[:-1]] + args[-1:]


