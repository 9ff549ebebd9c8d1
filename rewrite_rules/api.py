"""The public rule API: everything a rule module imports, ms-migrate's own and yours.

A rule module declares a module-level ``RULES`` list of rules; each rule is data
(target, signature, argument mapping) plus an optional hook, and carries its own
``Example``s, which ``ms-migrate rules --check`` runs under both frameworks::

    from rewrite_rules.api import ApiRule, Arg, Drop, Example

    RULES = [
        ApiRule(
            "mylib.layers.ConvBNAct", "mylib_ms.layers.ConvBNAct",
            signature="in_ch, out_ch, kernel_size=3, stride=1, act=True, device=None",
            args={"device": Drop("device placement is global in MindSpore")},
            examples=[Example("from mylib.layers import ConvBNAct\\nlayer = ConvBNAct(3, 8)\\nresult = layer(x)",
                              inputs={"x": "randn(2, 3, 8, 8)"})],
        ),
    ]

The rule model (see each class for its fields):

- ``ApiRule``: a torch callable (function or class) and its MindSpore form;
  ``AttributeRule``: a constant used as a value; ``MethodRule`` /
  ``PropertyRule``: a tensor or Cell method / attribute matched by name.
- ``Arg`` (rename, write the torch default out, convert the value), ``Drop``
  (no effect in MindSpore), ``Unsupported`` (cannot be carried: marked unless
  the torch default), a plain string (a keyword rename).
- ``Example``: torch code in, golden MindSpore text and/or execution inputs.
- ``WeightMove`` / ``AttributeRead``: how a layer's weights and attributes move.
- ``Param``: one parameter of a rule's parsed ``signature`` (``rule.params``).

What hooks receive and may use:

- ``BoundCall`` (an ApiRule hook's ``call``): the torch call bound to the
  torch signature; read with ``has``/``get``/``literal``, change with
  ``set``/``remove``/``add_keyword``, or set ``call.target``, ``call.func`` or
  ``call.result``; ``call.why`` gives the report's account of the call ("" for none)
  in place of its argument changes and the rule's notes. ``MethodCall`` (a MethodRule hook's ``call``). ``ctx.ref(name)``
  spells a MindSpore (or any importable) name and queues its import;
  ``ctx.warn(node, api, message)`` reports something the user should check.
- ``Unconvertible(reason)``: raise it when the call cannot be converted
  faithfully; the call is left as written under a ``# TODO(ms-migrate):`` marker.
  ``UnknownValue``: the conversion depends on a run-time value (the call goes
  through an adapter with torch's signature). ``NotALiteral``: what
  ``call.literal(name)`` raises for an argument not written as a literal (a
  ValueError to catch, or an Unconvertible to let through: the call is marked).
  ``InPlace``: a method hook's result for an in-place method.
- libcst helpers: ``code_of(node)`` (source text), ``literal_value(expr)`` /
  ``is_literal(expr)``, ``keyword_arg(name, value)``, ``parse_expr(text)``,
  ``render(call, func)`` (the call as the engine would write it, with callee
  ``func``); ``bind`` / ``apply_mapping`` bind a call to another rule's signature.
- ``define(ctx, name, source)``: a function or class MindSpore has no API for
  (``source`` a ``str.format`` template of its text, ``{name}`` its name),
  written once above the file's code under ``name`` (or ``name_`` if the file
  uses the name); returns the name to call it by. ``defined(ctx, name)``: the
  name it was written under, or None. ``explain(ctx, node, text)``: a comment
  above the first statement of the file holding ``node``, once per file.

What the file's analysis knows (facts gathered before the rules run; hooks
read them, never guess from a variable's name):

- ``origin_of(ctx, expr)`` / ``receiver_origin(call)``: where an object was
  made (an ``Origin`` with its ``kind``: ``OPTIMIZER``, ``SCHEDULER``,
  ``SCALER``, ``WRITER``, ``LAYER`` (a torch layer), ``CELL`` (the file's own
  Module) ...), or None when the file does not show it.
- ``in_forward(ctx)``: the code being converted is a Cell's forward (its construct)
  or a function defined in it, which MindSpore differentiates as a whole.
- ``is_number(ctx, expr)``: the expression is a Python number, not a tensor.
- ``assigned_value(ctx, name)``: the value last assigned to a name before this use
  (None where the file does not show it); ``assigned_values(ctx, expr)``: every value
  a name or ``self.attribute`` is assigned in the file (None where one is not shown); ``may_be_none(ctx, expr)``:
  the file shows it may be None; ``added_to(ctx, call)``: what ``append``/``extend`` add to the object a call
  makes; ``holds_numpy(ctx, expr)``: the
  expression holds a numpy, scipy or pandas object as the file shows.
- ``is_device_string(expr)``, ``is_torch_name(qualified)``,
  ``dotted_parts(expr)`` (``a.b.c`` -> ``["a", "b", "c"]``), ``nullcontext(ctx)``.
- Datasets: ``is_mindspore_dataset(ctx, expr)``, ``dataset_columns(ctx, expr)``,
  ``default_columns(count)``, ``split_seed_is_set(call)``.
- Checkpoints (torch.save / torch.load of state dicts, rewritten together by
  the checkpoint pass): ``save_state_dicts(call, ctx)``,
  ``is_state_dict(ctx, expr)``, ``checkpoint_load_use(call)`` (``LOAD_SUBSCRIPTED``,
  ``LOAD_DYNAMIC``, ``LOAD_VALUES_ONLY`` or None), ``load_values(path, ctx)``,
  ``load_checkpoint_file(call, path)``.

Rules import only this module (and spec, and other rule modules' data), never
``transpiler`` itself: tests/rules/test_rule_api.py fails when one does.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.spec import (
    ApiRule,
    Arg,
    AttributeRead,
    AttributeRule,
    Drop,
    Example,
    InPlace,
    MethodRule,
    NotALiteral,
    Param,
    PropertyRule,
    Unconvertible,
    UnknownValue,
    Unsupported,
    WeightMove,
)
from transpiler.convert import names as _names
from transpiler.convert.context import parse_expr, parse_stmt
from transpiler.convert.engine import (
    BoundCall,
    MethodCall,
    apply_mapping,
    bind,
    code_of,
    is_literal,
    keyword_arg,
    literal_value,
    render,
)
from transpiler.convert.structural import amp as _amp
from transpiler.convert.structural import checkpoints as _checkpoints
from transpiler.convert.structural import datasets as _datasets
from transpiler.convert.structural import devices as _devices
from transpiler.convert.structural import provenance as _provenance
from transpiler.convert.structural.numbers import Numbers as _Numbers
from transpiler.convert.structural.provenance import CELL, LAYER, OPTIMIZER, SCALER, SCHEDULER, WRITER, Origin
from transpiler.convert.structural.surroundings import SPLIT_SEEDS as _SPLIT_SEEDS
from transpiler.convert import tensor_properties as _tensor_properties

LOAD_SUBSCRIPTED, LOAD_DYNAMIC, LOAD_VALUES_ONLY = _checkpoints.SUBSCRIPTED, _checkpoints.DYNAMIC, _checkpoints.VALUES_ONLY


def define(ctx, name: str, source: str) -> cst.Name:
    """Write ``source`` (one function or class, a ``str.format`` template in which
    ``{name}`` stands for its name: other braces are doubled) once above the
    file's code, as ``name`` or, when the file binds that name itself, ``name_``
    (``name__`` ...). Returns the name to call it by."""
    chosen = defined(ctx, name)
    if chosen is None:
        chosen = name
        while chosen in ctx.analysis.bound_names or chosen in ctx.analysis.imports:
            chosen += "_"
        ctx.facts[_DEFINED + name] = chosen
        ctx.define(chosen, parse_stmt(source.format(name=chosen).strip() + "\n"))
    return cst.Name(chosen)


def explain(ctx, node: cst.CSTNode, text: str) -> cst.CSTNode:
    """Asks for ``# text`` above the first statement of the file that holds ``node`` (an
    expression the hook returns), once per file: why the output reads as it does where
    the same form recurs (``.set_train()`` on every new BatchNorm). Returns ``node``."""
    ctx.explanations.append((node, text))
    return node


def defined(ctx, name: str) -> str | None:
    """The name ``define(ctx, name, ...)`` wrote its definition under in this file, if it did."""
    return ctx.facts.get(_DEFINED + name)


_DEFINED = "definition "  # ctx.facts key prefix: name asked for -> name written


# -- what the file's analysis knows -------------------------------------------

def origin_of(ctx, expr: cst.BaseExpression | None) -> Origin | None:
    """Where the object ``expr`` (a node of the torch source, e.g. ``call.source.args[0].value``)
    was made, from what the file says; None when unknown."""
    return _provenance.origin_of(ctx, expr)


def receiver_origin(call) -> Origin | None:
    """Where the receiver of a method call was made (``optimizer`` in ``optimizer.step()``)."""
    func = call.source.func if call.source is not None else None
    return origin_of(call.ctx, func.value) if isinstance(func, cst.Attribute) else None


def assigned_value(ctx, expr: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """The value last assigned to the name ``expr`` (torch source) before this use; None if not shown."""
    return _tensor_properties.assigned_value(ctx, expr)


def assigned_values(ctx, expr: cst.BaseExpression | None) -> list[cst.BaseExpression] | None:
    """Every value the name or ``self.attribute`` ``expr`` (torch source) is assigned in the file;
    None when some binding does not show its value (a parameter, a loop variable ...)."""
    provenance = _provenance.provenance_of(ctx)
    return provenance.values_of(expr) if provenance is not None and expr is not None else None


def added_to(ctx, made: cst.Call | None) -> list[cst.BaseExpression] | None:
    """What ``x.append(v)`` / ``x.extend([...])`` add in the file to the object the call ``made``
    (torch source) makes, assigned to a name or ``self.x``; None when not shown."""
    provenance = _provenance.provenance_of(ctx)
    return provenance.added_to(made) if provenance is not None and made is not None else None


def may_be_none(ctx, expr: cst.BaseExpression | None) -> bool:
    """The file shows ``expr`` (torch source) may be None: ``None``, ``a if c else None``, or a
    name or ``self.attribute`` some assignment of which is such a value."""
    provenance = _provenance.provenance_of(ctx)
    return provenance is not None and expr is not None and provenance.may_be_none(expr)


def holds_numpy(ctx, expr: cst.BaseExpression | None) -> bool:
    """``expr`` (torch source) holds a numpy/scipy/pandas object, as the file shows."""
    return expr is not None and _tensor_properties.known_foreign(ctx, expr)


def in_forward(ctx) -> bool:
    return ctx.forward_depth > 0


def is_number(ctx, expr: cst.BaseExpression) -> bool:
    """``expr`` (a node of the torch source) is a Python number (a literal, arithmetic on
    numbers, ``len(...)``, ``loss.item()`` ...), not a tensor."""
    return _Numbers(_provenance.provenance_of(ctx)).is_number(expr)


def is_device_string(expr: cst.BaseExpression) -> bool:
    """A string literal naming a torch device: ``"cuda"``, ``"cpu"``, ``"cuda:1"`` ..."""
    return _devices.is_device_string(expr)


def is_torch_name(qualified: str) -> bool:
    """A qualified name in torch or its companion packages (torchvision ...)."""
    return _names.is_torch_name(qualified)


def dotted_parts(expr: cst.BaseExpression) -> list[str] | None:
    """``a.b.c`` -> ``["a", "b", "c"]``; None if the chain does not end in a name."""
    return _names.chain_parts(expr)


def nullcontext(ctx) -> cst.BaseExpression:
    """``nullcontext`` as the file can spell it (importing contextlib when needed)."""
    return _amp.nullcontext_ref(ctx)


def is_mindspore_dataset(ctx, expr: cst.BaseExpression) -> bool:
    """``expr`` (torch source) holds a dataset the conversion made a mindspore.dataset pipeline."""
    return _datasets.is_mindspore_dataset(ctx, expr)


def dataset_columns(ctx, expr: cst.BaseExpression) -> list[str] | None:
    """The column names of a dataset variable or of a dataset built in place; None if unknown."""
    return _datasets.columns_of(ctx, expr)


def default_columns(count: int) -> list[str]:
    """The column names assumed for ``count`` items of a sample (``["data", "label"]`` for two)."""
    return _datasets.default_columns(count)


def split_seed_is_set(call) -> bool:
    """This random_split's ``generator=torch.Generator().manual_seed(seed)`` is replaced by
    seeding MindSpore before the statement (so the hook may drop the generator)."""
    return id(call.source) in call.ctx.facts.get(_SPLIT_SEEDS, ())


def save_state_dicts(call, ctx) -> bool:
    """Let the checkpoint pass rewrite this torch.save of a dict (written in place, or held by
    a variable it traced) of states and plain values; False when the object is not such a dict."""
    layouts = _checkpoints.layouts_of(ctx)
    if isinstance(call.get("obj"), cst.Dict) or (layouts is not None and layouts.save_of(call.source) is not None):
        _checkpoints.save_dict(call, ctx)
        return True
    return False


def is_state_dict(ctx, expr: cst.BaseExpression) -> bool:
    """``expr`` is a variable assigned from ``.state_dict()`` (MindSpore: ``parameters_dict()``)."""
    return isinstance(expr, cst.Name) and ctx.known_kinds.get(expr.value) == _checkpoints.STATE_DICT


def checkpoint_load_use(call) -> str | None:
    """How the result of this torch.load is read when it is a dict of entries: ``LOAD_SUBSCRIPTED``
    (``torch.load(f)[key]``), ``LOAD_DYNAMIC`` (computed keys), ``LOAD_VALUES_ONLY`` (plain values,
    no state), another string for states with values; None when the file does not show it."""
    return _checkpoints.load_use(call.ctx, call.source)


def load_values(path: cst.BaseExpression, ctx) -> cst.Call:
    """An expression reading the plain values a converted torch.save wrote next to ``path``."""
    return _checkpoints.read_values(path, ctx)


def load_checkpoint_file(call, path: cst.BaseExpression) -> None:
    """Load the checkpoint file MindSpore wrote for ``path`` (it appends ``.ckpt``), and let the
    checkpoint pass find the states of a dict loaded from it."""
    _checkpoints.remember_load_path(call.ctx, call.source, path)
    call.set("f", _checkpoints.checkpoint_file(path))


__all__ = [
    "ApiRule", "Arg", "AttributeRead", "AttributeRule", "BoundCall", "Drop", "Example", "InPlace", "MethodCall",
    "MethodRule", "NotALiteral", "Param", "PropertyRule", "Unconvertible", "UnknownValue", "Unsupported", "WeightMove",
    "apply_mapping", "bind", "code_of", "define", "defined", "is_literal", "keyword_arg", "literal_value", "parse_expr", "render",
    # what the file's analysis knows
    "CELL", "LAYER", "OPTIMIZER", "SCALER", "SCHEDULER", "WRITER", "Origin", "origin_of", "receiver_origin",
    "is_number", "assigned_value", "assigned_values", "may_be_none", "added_to", "holds_numpy", "is_device_string", "is_torch_name", "dotted_parts", "nullcontext",
    "is_mindspore_dataset", "dataset_columns", "default_columns", "split_seed_is_set",
    "LOAD_SUBSCRIPTED", "LOAD_DYNAMIC", "LOAD_VALUES_ONLY", "save_state_dicts", "is_state_dict",
    "checkpoint_load_use", "load_values", "load_checkpoint_file",
]
