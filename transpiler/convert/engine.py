"""Applies an ApiRule to one call: bind the torch arguments to the torch
signature, apply the argument mapping and hook, and build the MindSpore call."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from rewrite_rules.spec import ApiRule, Arg, Drop, MethodRule, NotALiteral, Unconvertible, UnknownValue, Unsupported
from transpiler.convert import comments
from transpiler.convert.change_text import argument_changes
from transpiler.convert.codegen import code_for_node
from transpiler.convert.context import FileContext, parse_expr

_NO_SPACE = cst.AssignEqual(
    whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
)


def keyword_arg(name: str, value: cst.BaseExpression) -> cst.Arg:
    """``name=value``, spelled as black writes keyword arguments."""
    return cst.Arg(value, keyword=cst.Name(name), equal=_NO_SPACE)


def literal_value(expr: cst.BaseExpression):
    """The Python value of a literal expression, or raise ValueError."""
    import ast

    if isinstance(expr, (cst.Name, cst.Integer, cst.Float, cst.SimpleString, cst.UnaryOperation, cst.Tuple, cst.List)):
        code = code_for_node(expr)
        try:
            return ast.literal_eval(code)
        except (SyntaxError, TypeError, MemoryError, RecursionError) as exc:
            raise ValueError(f"not a literal: {code}") from exc
    raise ValueError("not a literal")


def is_literal(expr: cst.BaseExpression) -> bool:
    try:
        literal_value(expr)
        return True
    except ValueError:
        return False


def code_of(node: cst.CSTNode) -> str:
    return code_for_node(node)


@dataclass
class BoundCall:
    """A torch call with its arguments bound to the torch signature. Hooks read
    and change it; the engine renders it."""

    rule: ApiRule
    original: cst.Call
    ctx: FileContext
    values: dict[str, cst.BaseExpression] = field(default_factory=dict)
    arg_nodes: dict[str, cst.Arg] = field(default_factory=dict)
    positional: list[str] = field(default_factory=list)  # names passed positionally, in order
    varargs: list[cst.Arg] = field(default_factory=list)
    before: dict[str, list[tuple[str, cst.BaseExpression]]] = field(default_factory=dict)
    appended: list[tuple[str, cst.BaseExpression]] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)  # hook-level keyword renames
    target: str | None = None
    source: cst.Call | None = None  # the call as written (before nested rewrites)
    # the call is the body of an adapter (transpiler.convert.adapters): each argument is
    # the parameter of the same name, whose value arrives at run time (None included)
    for_adapter: bool = False
    func: cst.BaseExpression | None = None  # hooks may replace the callee expression
    result: cst.BaseExpression | None = None  # hooks may replace the whole call
    # a hook's own account of this call for the report, in place of the argument changes
    # and the rule's notes ("" for none): a hook that rebinds torch's arguments (randint's
    # two-argument form) knows what happened better than the per-argument comparison
    why: str | None = None

    def has(self, name: str) -> bool:
        return name in self.values

    def get(self, name: str, default: str | None = None) -> cst.BaseExpression | None:
        if name in self.values:
            return self.values[name]
        return parse_expr(default) if default is not None else None

    def literal(self, name: str, default=None):
        """The literal value of an argument (torch default if absent).
        Raises NotALiteral (a ValueError) when the argument is not a literal."""
        if name not in self.values:
            param = next((p for p in self.rule.params if p.name == name), None)
            if param is not None and param.default is not None:
                return literal_value(parse_expr(param.default))
            return default
        try:
            return literal_value(self.values[name])
        except ValueError:
            raise NotALiteral(name, code_for_node(self.values[name])) from None

    def set(self, name: str, value: cst.BaseExpression | str) -> None:
        self.values[name] = parse_expr(value) if isinstance(value, str) else value

    def remove(self, name: str) -> None:
        self.values.pop(name, None)

    def add_keyword(self, ms_name: str, value: cst.BaseExpression | str, before: str | None = None):
        """Add a MindSpore-only keyword, placed before torch param ``before``
        (or at the end)."""
        expr = parse_expr(value) if isinstance(value, str) else value
        if before is None:
            self.appended.append((ms_name, expr))
        else:
            self.before.setdefault(before, []).append((ms_name, expr))

    def ref(self, qualified: str) -> cst.BaseExpression:
        return self.ctx.ref(qualified)

    def ms_name(self, name: str) -> str:
        """The MindSpore keyword torch parameter ``name`` is written as."""
        return _ms_name(self, name)


def bind(rule: ApiRule, call: cst.Call, ctx: FileContext, source: cst.Call | None = None) -> BoundCall:
    bound = BoundCall(rule, call, ctx, target=rule.target, source=source or call)
    params = rule.params
    positional_params = [p for p in params if p.kind == "positional"]
    has_varargs = any(p.kind == "varargs" for p in params)
    by_name = {p.name: p for p in params if p.kind in ("positional", "keyword")}
    index = 0
    for arg in call.args:
        if arg.star == "*" and has_varargs and index >= len(positional_params):
            bound.varargs.append(arg)  # *args into torch's own *args: passes through
            continue
        if arg.star:
            raise Unconvertible(f"arguments unpacked with {arg.star} cannot be mapped to the MindSpore signature")
        if arg.keyword is None:
            if index < len(positional_params):
                name = positional_params[index].name
                bound.values[name] = arg.value
                bound.arg_nodes[name] = arg
                bound.positional.append(name)
                index += 1
            elif has_varargs:
                bound.varargs.append(arg)
            else:
                raise Unconvertible(f"too many positional arguments for {rule.torch}")
        else:
            name = _numpy_alias(rule, arg.keyword.value, by_name)
            if name not in by_name:
                if any(p.kind == "varkw" for p in params):
                    bound.values[name] = arg.value
                    bound.arg_nodes[name] = arg
                    continue
                raise Unconvertible(f"unknown argument '{name}' for {rule.torch}")
            bound.values[name] = arg.value
            bound.arg_nodes[name] = arg
    missing = [p.name for p in params if p.kind in ("positional", "keyword") and p.default is None
               and p.name not in bound.values]
    if missing:  # not a call of this torch API (e.g. a method of the same name on another type)
        raise Unconvertible(f"missing argument '{missing[0]}' for {rule.torch}")
    return bound


# torch's argument parser takes NumPy's names for these parameters of its native
# functions (``torch.stack(xs, axis=-1)``, ``torch.sum(x, axis=1, keepdims=True)``);
# torch.nn's layers and Python functions do not
_NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input", "x1": "input", "x2": "other"}


def _numpy_alias(rule: ApiRule, name: str, by_name: dict) -> str:
    """The torch parameter a keyword of a torch function call names: itself, or
    the parameter whose NumPy name it is."""
    alias = _NUMPY_NAMES.get(name)
    if alias is not None and name not in by_name and alias in by_name and rule.torch.startswith("torch.") \
            and not rule.torch.startswith("torch.nn."):
        return alias
    return name


def apply_mapping(bound: BoundCall) -> None:
    rule = bound.rule
    for param in rule.params:
        spec = rule.args.get(param.name)
        present = param.name in bound.values
        if isinstance(spec, Drop):
            bound.remove(param.name)
        elif isinstance(spec, Unsupported):
            if not present:
                continue
            if param.default is not None and _equals_literal(bound.values[param.name], param.default) \
                    or spec.in_forward and bound.ctx.forward_depth:
                bound.remove(param.name)
                continue
            # a wrapper forwarding its own parameter (``dtype=dtype``) may pass torch's default:
            # known at run time only; any other value is taken as what it says
            error = UnknownValue if _forwards(bound.values[param.name], param.name) else Unconvertible
            raise error(f"argument '{param.name}' cannot be carried: {spec.reason}")
        elif isinstance(spec, Arg):
            if spec.explicit and not present and param.default is not None:
                bound.values[param.name] = parse_expr(param.default)
                present = True
            if spec.value is not None and present:
                bound.values[param.name] = spec.value(bound.values[param.name], bound.ctx)


def _forwards(value: cst.BaseExpression, name: str) -> bool:
    """``name=name`` or ``name=self.name``: a parameter passed on under its own name."""
    if isinstance(value, cst.Name):
        return value.value == name
    return isinstance(value, cst.Attribute) and value.attr.value == name


def _equals_literal(expr: cst.BaseExpression, default_text: str) -> bool:
    try:
        return literal_value(expr) == literal_value(parse_expr(default_text))
    except (ValueError, SyntaxError, TypeError):
        return False


def render(bound: BoundCall, func: cst.BaseExpression) -> cst.Call:
    rule = bound.rule
    args: list[cst.Arg] = []
    emitted: set[str] = set()
    keep = rule.keep_positional
    # 1. leading positional arguments that keep their place
    for i, name in enumerate(bound.positional):
        if i >= keep or name not in bound.values or bound.before.get(name):
            break
        args.append(_arg(bound, name, None))
        emitted.add(name)
    # 2. torch *args
    if bound.varargs:
        if rule.pack_varargs and (len(bound.varargs) > 1 or bound.varargs[0].star):
            elements = [cst.StarredElement(a.value) if a.star else cst.Element(a.value) for a in bound.varargs]
            args.append(cst.Arg(cst.Tuple(elements)))
        else:
            args.extend(bound.varargs)  # with their commas: a comment after one stays on its line
    # 3. everything else as keywords, in torch signature order
    order = [p.name for p in rule.params if p.kind in ("positional", "keyword", "varkw")]
    order += [n for n in bound.values if n not in order]
    for name in order:
        for ms_name, expr in bound.before.get(name, ()):
            args.append(keyword_arg(ms_name, expr))
        if name in emitted or name not in bound.values:
            continue
        args.append(_arg(bound, name, _ms_name(bound, name)))
    for ms_name, expr in bound.appended:
        args.append(keyword_arg(ms_name, expr))
    original = bound.original
    call = cst.Call(func=func, args=_fix_commas(args, original), whitespace_after_func=original.whitespace_after_func,
                    whitespace_before_args=original.whitespace_before_args)
    # comments of dropped or repacked arguments: after the last argument
    return comments.inside_call(call, comments.lost(comments.comments(original), comments.comments(call)))


def _ms_name(bound: BoundCall, name: str) -> str:
    if name in bound.renamed:
        return bound.renamed[name]
    spec = bound.rule.args.get(name)
    if isinstance(spec, str):
        return spec
    if isinstance(spec, Arg) and spec.to:
        return spec.to
    return name


def _arg(bound: BoundCall, name: str, keyword: str | None) -> cst.Arg:
    value = bound.values[name]
    original = bound.arg_nodes.get(name)
    if original is not None:
        if keyword is None:
            return original.with_changes(value=value, comma=original.comma)
        equal = original.equal if original.keyword is not None else _NO_SPACE
        return original.with_changes(value=value, keyword=cst.Name(keyword), equal=equal)
    return keyword_arg(keyword, value)


def _fix_commas(args: list[cst.Arg], original: cst.Call) -> list[cst.Arg]:
    trailing = bool(original.args) and isinstance(original.args[-1].comma, cst.Comma)
    fixed = []
    for i, arg in enumerate(args):
        last = i == len(args) - 1
        if last:
            comma = cst.Comma() if trailing else cst.MaybeSentinel.DEFAULT
            if isinstance(arg.comma, cst.Comma) and (trailing or comments.comments(arg.comma)):
                comma = arg.comma  # a comment after it stays where it was
        elif isinstance(arg.comma, cst.Comma):
            comma = arg.comma
        else:
            comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        fixed.append(arg.with_changes(comma=comma))
    return fixed


def convert_call(rule: ApiRule, call: cst.Call, ctx: FileContext, source: cst.Call | None = None,
                 for_adapter: bool = False, changes: list | None = None,
                 why: list | None = None) -> cst.BaseExpression:
    """The MindSpore form of ``call``; raises Unconvertible. ``changes``, when
    given, receives (torch parameter, what happened to it in the user's words)
    for each argument the conversion changed; ``why``, the hook's own account
    of the call (``BoundCall.why``), when it gave one."""
    if rule.no_op:
        positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
        if not positional:
            raise Unconvertible(f"{rule.torch} has no effect in MindSpore; remove it")
        return positional[0]
    if rule.target is None and rule.hook is None:
        raise Unconvertible(rule.notes or f"{rule.torch} has no MindSpore equivalent")
    bound = bind(rule, call, ctx, source)
    bound.for_adapter = for_adapter
    given = dict(bound.values)
    with ctx.converting_call(source or call):
        apply_mapping(bound)
        if rule.hook is not None:
            rule.hook(bound, ctx)
    if bound.result is None and bound.target is None:
        raise Unconvertible(rule.notes or f"{rule.torch} has no MindSpore equivalent")
    if why is not None and bound.why is not None:
        why.append(bound.why)
    elif changes is not None:  # a hook that builds the result itself may still have changed the arguments first
        changes.extend(argument_changes(bound, given))
    if bound.result is not None:
        return bound.result
    func = bound.func if bound.func is not None else ctx.ref(bound.target)
    return render(bound, func)


@dataclass
class MethodCall:
    """A method call on an untyped receiver, for MethodRule hooks."""

    rule: MethodRule
    receiver: cst.BaseExpression
    call: cst.Call  # updated node (children already converted)
    ctx: FileContext
    source: cst.Call | None = None  # the call as written
    enclosing: str | None = None  # f when the call is the only argument of f(...) (tuple in tuple(x.stride()))

    def source_arg(self, index: int) -> cst.BaseExpression | None:
        """The index-th positional argument as written (for qualified-name lookups)."""
        call = self.source or self.call
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        return positional[index] if index < len(positional) else None

    def qualified(self, expr: cst.BaseExpression | None) -> str | None:
        return None if expr is None else self.ctx.analysis.qualified(expr)

    @property
    def args(self) -> list[cst.Arg]:
        return list(self.call.args)

    @property
    def positional(self) -> list[cst.BaseExpression]:
        return [a.value for a in self.call.args if a.keyword is None and not a.star]

    def keyword(self, name: str) -> cst.BaseExpression | None:
        for a in self.call.args:
            if a.keyword is not None and a.keyword.value == name:
                return a.value
        return None

    def rename(self, new_name: str, args=None) -> cst.Call:
        func = self.call.func
        assert isinstance(func, cst.Attribute)
        changes = {"func": func.with_changes(attr=cst.Name(new_name))}
        if args is not None:
            changes["args"] = args
        return self.call.with_changes(**changes)

    def ref(self, qualified: str) -> cst.BaseExpression:
        return self.ctx.ref(qualified)


def convert_method(rule: MethodRule, receiver, call: cst.Call, ctx: FileContext, source=None,
                   enclosing: str | None = None) -> cst.BaseExpression:
    method = MethodCall(rule, receiver, call, ctx, source, enclosing)
    if rule.hook is not None:
        with ctx.converting_call(source or call):
            return rule.hook(method, ctx)
    if rule.rename is not None:
        return method.rename(rule.rename)
    raise Unconvertible(rule.notes or f"Tensor.{rule.name} has no MindSpore equivalent")
