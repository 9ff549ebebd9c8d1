"""The rule model: a rule is data (target, signature, argument mapping) plus an
optional hook, and carries its own examples.

Rule modules in this package declare module-level ``RULES`` lists; the registry
(``rewrite_rules.registry``) collects them by walking the package.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Mapping


class Unconvertible(Exception):
    """Raised by a hook when a call cannot be converted faithfully.

    The engine then leaves the original call in place and writes a marker
    with ``reason`` above the statement.
    """

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class UnknownValue(Unconvertible):
    """Raised when the conversion depends on a value known only at run time
    (an argument that converts only at torch's default, passed through a
    variable). The call then goes through the API's adapter, which has torch's
    signature and checks the value when it arrives (``transpiler.convert.adapters``)."""


class NotALiteral(UnknownValue, ValueError):
    """Raised by ``call.literal(name)`` when the argument is not written as a
    literal. A hook may catch it as the ValueError it is and decide otherwise;
    left alone, the call goes through the API's adapter like any UnknownValue
    (or is marked with this reason where no adapter can be made)."""

    def __init__(self, name: str, code: str):
        super().__init__(f"{name}={code} is not a literal: its value decides how the call converts")


@dataclass(frozen=True)
class Drop:
    """The argument has no effect on the result in MindSpore (e.g. ``device=``,
    ``inplace=``); it is removed silently."""

    why: str = ""


@dataclass(frozen=True)
class Unsupported:
    """The argument cannot be carried. Passing the torch default (as a literal)
    is fine and is dropped; anything else leaves the call unconverted, marked.
    in_forward: why the argument has no effect in a Cell's forward (construct),
    where it is then dropped whatever its value ("" when it matters there too)."""

    reason: str
    in_forward: str = ""


@dataclass(frozen=True)
class Arg:
    """How one torch parameter maps to MindSpore.

    to: the MindSpore keyword (None keeps the torch name).
    explicit: always write the argument, using the torch default when the
        caller omitted it, because MindSpore's default differs.
    value: a hook ``(expr, ctx) -> expr`` rewriting the value (e.g. 1 - m).
    """

    to: str | None = None
    explicit: bool = False
    value: Callable | None = None


@dataclass(frozen=True)
class Example:
    """A torch snippet and what ms-migrate must make of it.

    torch: statements using the standard prelude (``import torch``,
        ``import torch.nn as nn``, ``import torch.nn.functional as F``).
    mindspore: the exact converted statements (golden text), or None.
    marked: the converted text must carry a marker containing this text
        (the reason the case cannot be converted).
    inputs: for execution: input name -> generator text, e.g.
        ``{"x": "randn(2, 3)", "i": "randint(0, 5, (4,))"}``; the harness
        builds the same values for both frameworks. Set (even to {}) to run.
    results: the names the snippet computes and the harness compares.
    rtol, atol: tolerances for this case (written down per rule).
    dtype_map: allowed dtype differences, torch -> MindSpore (e.g.
        {"int64": "int32"}), each with the rule's reason in ``notes``.
    compare: what the harness compares: "values" (shape, dtype and values);
        "structural" (the same, for a random operation whose draws cannot be
        replayed: the snippet reduces the result to what both frameworks must
        agree on, e.g. the sorted indices of a shuffle, and ``notes`` says
        what is left uncompared; ``ms-migrate rules`` does not count it as an
        exact proof); or "shape" (shape and dtype only).
    torch_reference: for an API torch cannot run on this machine (CUDA only):
        statements torch does run that give what torch documents the call to
        give (``x.clone()`` for ``x.pin_memory()``). The harness runs them on
        the torch side and the converted ``torch`` snippet on the MindSpore
        side; ``notes`` quotes torch's error (tests/rules/test_execution.py checks
        that torch still raises it). ``ms-migrate rules`` counts such a case
        as proven against torch's documented result, not by running torch.
    """

    torch: str
    mindspore: str | None = None
    marked: str | None = None
    inputs: Mapping[str, str] | None = None
    results: tuple[str, ...] = ("result",)
    rtol: float = 1e-5
    atol: float = 1e-6
    dtype_map: Mapping[str, str] = field(default_factory=dict)
    notes: str = ""
    compare: str = "values"
    torch_reference: str | None = None

    @property
    def runs(self) -> bool:
        return self.inputs is not None and self.marked is None


@dataclass(frozen=True)
class InPlace:
    """Returned by a method hook for an in-place torch method (``x.add_(y)``):
    ``value`` is the new value of the receiver. The rewriter turns the
    statement into an assignment (``x = x + y``, or ``ops.assign`` for
    attributes) because MindSpore's in-place methods are silent no-ops on CPU.
    """

    value: object  # cst.BaseExpression
    # the new value has another shape (unsqueeze_, t_ ...): rebind the name
    # or attribute instead of assigning into the tensor
    rebinds: bool = False


@dataclass(frozen=True)
class Param:
    name: str
    default: str | None  # source text of the torch default; None = required
    kind: str  # "positional", "keyword", "varargs", "varkw"


def parse_signature(signature: str) -> tuple[Param, ...]:
    """Parse ``"input, dim=0, *, out=None"`` into Params using Python's parser."""
    tree = ast.parse(f"def f({signature}): pass")
    fn = tree.body[0].args  # type: ignore[attr-defined]
    params: list[Param] = []
    positional = list(fn.posonlyargs) + list(fn.args)
    defaults = [None] * (len(positional) - len(fn.defaults)) + list(fn.defaults)
    for a, d in zip(positional, defaults):
        params.append(Param(a.arg, ast.unparse(d) if d is not None else None, "positional"))
    if fn.vararg is not None:
        params.append(Param(fn.vararg.arg, None, "varargs"))
    for a, d in zip(fn.kwonlyargs, fn.kw_defaults):
        params.append(Param(a.arg, ast.unparse(d) if d is not None else None, "keyword"))
    if fn.kwarg is not None:
        params.append(Param(fn.kwarg.arg, None, "varkw"))
    return tuple(params)


ArgMapping = Mapping[str, "str | Arg | Drop | Unsupported"]


@dataclass(frozen=True)
class WeightMove:
    """How one torch parameter (or buffer) of a layer moves into the MindSpore
    Cell when more than its name changes; read by ``transpiler.proof.weights``.

    to: the MindSpore parameter name; None means the value has no MindSpore
        counterpart and is dropped (``why`` says why; e.g. BatchNorm's
        ``num_batches_tracked``). Declared drops are the only keys the weight
        converter leaves out without reporting them.
    insert_axis: MindSpore stores the tensor with an extra length-1 axis at
        this position (Conv1d weights are 4-D: (out, in, 1, k)).
    """

    to: str | None
    insert_axis: int | None = None
    why: str = ""


WeightMapping = Mapping[str, "str | WeightMove"]


@dataclass(frozen=True)
class AttributeRead:
    """How reading an attribute of a torch layer maps onto the MindSpore Cell
    when more than its name changes; read by ``transpiler.convert.structural.attributes``.

    template: the MindSpore expression, ``{cell}`` standing for the Cell
        (Conv1d's ``kernel_size`` is stored as ``(1, k)``: ``"{cell}.kernel_size[1:]"``).
        Such an attribute can be read, not assigned.
    reason: set instead of template when MindSpore does not keep the value:
        reads are marked with this reason. Set with a template, the template
        serves only a subclass reading the attribute on ``self`` (the adapter's
        property: torch's BatchNorm forward copied into a subclass reads
        ``num_batches_tracked`` as None), and other reads are marked.
    """

    template: str | None = None
    reason: str = ""


AttributeMapping = Mapping[str, "str | AttributeRead"]


@dataclass(frozen=True)
class ApiRule:
    """A torch callable (function or class) and its MindSpore form.

    torch: qualified torch name, e.g. ``torch.nn.Conv2d``.
    target: qualified MindSpore name, e.g. ``mindspore.nn.Conv2d``.
    signature: the torch signature as Python parameter text.
    args: per-parameter mapping (see Arg, Drop, Unsupported; a str renames).
    positional: how many leading torch parameters keep their position in the
        MindSpore signature; later positional arguments are written as keywords.
    pack_varargs: pass torch ``*size`` as one tuple argument.
    hook: ``(call: BoundCall, ctx) -> None`` for changes beyond data; may raise
        Unconvertible.
    weights: torch parameter name -> MindSpore parameter name (or a WeightMove
        when the layout changes or the value is dropped) for layers whose
        weights move; unlisted parameters keep their name (used by the weight
        converter, ``transpiler.proof.weights``).
    attributes: torch attribute name -> MindSpore attribute name (or an
        AttributeRead when the value changes or is not kept) for the
        attributes user code reads on a layer (``fc.in_features``,
        ``emb.embedding_dim``); the renames in ``weights`` apply to attribute
        reads too, unlisted attributes keep their name.
    aliases: further torch names that mean the same thing.
    proven_by: pytest node ids (``tests/test_x.py::test_y``) of execution
        tests outside the example harness that prove this rule, for APIs whose
        torch side cannot run as an Example (``ms-migrate rules`` names them).
    after_init: statements run on the new Cell (``self``) after the MindSpore
        constructor, for what no constructor argument says (``"self.gamma.requires_grad
        = False"`` for a frozen layer); every use then goes through the layer's
        adapter class, which has torch's signature (see ``transpiler.convert.adapters``).
    reset_parameters: the statements of torch's ``reset_parameters()`` for the
        layer, written on the MindSpore Cell (``self``; MindSpore names fully
        qualified, ``mindspore.common.initializer...``). The layer's adapter
        class gets the method, so a subclass calling ``super().reset_parameters()``
        works, and its constructor, like torch's, runs a subclass's own
        ``reset_parameters`` (see ``transpiler.convert.adapters``).
    no_op: the API has no effect in MindSpore (TorchScript, torch.compile, fx
        markers): a call returns its first argument unchanged (``torch.jit.script(fn)``
        -> ``fn``; a statement left with nothing to do is removed), and as a
        decorator, with or without arguments, it is removed.
    """

    torch: str
    target: str | None
    signature: str = "*args, **kwargs"
    args: ArgMapping = field(default_factory=dict)
    positional: int | None = None
    pack_varargs: bool = False
    hook: Callable | None = None
    weights: WeightMapping = field(default_factory=dict)
    attributes: AttributeMapping = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    after_init: tuple[str, ...] = ()
    reset_parameters: tuple[str, ...] = ()
    no_op: bool = False
    notes: str = ""
    examples: tuple[Example, ...] = ()
    proven_by: tuple[str, ...] = ()

    @cached_property
    def params(self) -> tuple[Param, ...]:
        return parse_signature(self.signature)

    @cached_property
    def keep_positional(self) -> int:
        if self.positional is not None:
            return self.positional
        count = 0
        for p in self.params:
            spec = self.args.get(p.name)
            if p.kind != "positional" or (spec is not None and not isinstance(spec, Arg)):
                break
            if isinstance(spec, Arg) and (spec.to or spec.value):
                break
            count += 1
        return count

    @property
    def is_plain_rename(self) -> bool:
        """A bare reference (``act=nn.ReLU``) can be renamed only if calls
        need no argument changes at all."""
        return (
            self.target is not None
            and self.hook is None
            and not self.pack_varargs
            and all(isinstance(s, Drop) for s in self.args.values())
            and not any(isinstance(s, Arg) and s.explicit for s in self.args.values())
        )

    def all_names(self) -> tuple[str, ...]:
        return (self.torch, *self.aliases)

    @cached_property
    def weight_moves(self) -> dict[str, WeightMove]:
        """``weights`` with plain renames spelled as WeightMoves."""
        return {k: v if isinstance(v, WeightMove) else WeightMove(v) for k, v in self.weights.items()}

    @cached_property
    def attribute_reads(self) -> dict[str, "str | AttributeRead"]:
        """How each torch attribute of the layer is read on the Cell: ``attributes``, plus the
        parameters of ``weights`` that only change name (a parameter stored in another layout
        reads differently and is left as it is)."""
        reads: dict[str, str | AttributeRead] = {}
        for name, move in self.weight_moves.items():
            # a parameter of a sub-layer ("linear1.weight") is read through that sub-layer's own rule
            if move.to is not None and move.insert_axis is None and move.to != name and "." not in name:
                reads[name] = move.to
        reads.update(self.attributes)
        return reads


@dataclass(frozen=True)
class AttributeRule:
    """A torch constant or class used as a value, e.g. ``torch.float32``."""

    torch: str
    target: str | None
    reason: str = ""
    aliases: tuple[str, ...] = ()
    examples: tuple[Example, ...] = ()

    def all_names(self) -> tuple[str, ...]:
        return (self.torch, *self.aliases)


@dataclass(frozen=True)
class MethodRule:
    """A method call on a tensor or Cell, matched by name and arity.

    Method receivers have no static type, so a rule applies when the method
    name fits and the number of positional arguments lies in ``arity``.
    hook: ``(call: MethodCall, ctx) -> cst expression``; may raise Unconvertible.
    rename: the simple case: the MindSpore method name.
    receiver: "tensor", "cell", "optimizer" or "any": what the rule assumes the
        receiver is (for documentation and analysis).
    signature: torch's parameters (without self), when the rule binds them:
        a call with unpacked arguments (``m.add_module(*pair)``) then becomes
        the rule applied to these names inside a lambda the arguments go to.
    proven_by: as ``ApiRule.proven_by``.
    owner: the torch class whose method the rule converts, where it is neither a Tensor
        nor a Module (``torch.amp.GradScaler`` for ``get_scale``): the name reports and
        the API table give it.
    """

    name: str
    rename: str | None = None
    hook: Callable | None = None
    arity: tuple[int, int] = (0, 99)
    receiver: str = "tensor"
    notes: str = ""
    examples: tuple[Example, ...] = ()
    signature: str = ""
    proven_by: tuple[str, ...] = ()
    owner: str = ""

    @property
    def torch(self) -> str:
        if self.owner:
            return f"{self.owner}.{self.name}"
        return f"torch.Tensor.{self.name}" if self.receiver == "tensor" else f"torch.nn.Module.{self.name}"


@dataclass(frozen=True)
class PropertyRule(MethodRule):
    """A torch Tensor attribute read on an untyped receiver (``x.real``,
    ``x.is_cuda``), matched by name like a method rule.

    hook: ``(receiver, ctx) -> cst expression``; may raise Unconvertible.
    rename: the MindSpore attribute (equal to ``name``: it passes unchanged).
    Neither: every read is marked with ``notes`` as the reason. Writes
    (``x.attr = ...``) are never rewritten. A hook that returns None leaves
    the read alone (the receiver is not what the rule is about).
    api: the torch API named in reports, when the owner is not a Tensor.
    """

    api: str = ""

    @property
    def torch(self) -> str:
        return self.api or super().torch
