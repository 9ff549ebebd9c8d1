"""A tensor attribute a compiled method refreshes for its input is a local value.

timm's ConViT keeps the relative positions of its patches, which depend on the
number of patches, in a tensor attribute it refreshes in forward when the input
has another size, and reads in the method forward calls next::

    def forward(self, x):
        B, N, C = x.shape
        if self.rel_indices is None or self.rel_indices.shape[1] != N:
            self.rel_indices = self.get_rel_indices(N)
        attn = self.get_attention(x)
        ...

    def get_attention(self, x):
        ...
        pos_score = self.rel_indices.expand(B, -1, -1, -1)

``mindspore.export`` compiles in JIT strict mode, which refuses to set an attribute
that is no Parameter ("In JIT strict mode, if need to modify a member attribute of a
class with self.rel_indices, the member attribute must be of the Parameter type",
measured on MindSpore 2.10 CPU; the lax GRAPH_MODE takes it). A Parameter cannot
hold it either (its shape changes with the input, and it would join the
checkpoint). The value is a function of the input's size, so a local holds it for
the call, refreshed by the author's test, and the methods that read it get it as an
argument::

    def construct(self, x):
        B, N, C = x.shape
        rel_indices = self.rel_indices
        if rel_indices is None or rel_indices.shape[1] != N:
            rel_indices = self.get_rel_indices(N)
        attn = self.get_attention(x, rel_indices)
        ...

    def get_attention(self, x, rel_indices):
        ...
        pos_score = ops.broadcast_to(rel_indices, (B, -1, -1, -1))

(strict mode compiles it and the MindIR gives the Cell's values, measured). Their
other callers pass the attribute (ConViT's ``get_attention_map``:
``self.get_attention(x, self.rel_indices)``).

The author's cache is kept too when the value is known while graph mode compiles (it
reads sizes of the input's shape, and of ``self`` only dtypes, shapes and methods that
read no more: ``_constant``)::

        if rel_indices is None or rel_indices.shape[1] != N:
            rel_indices = self.get_rel_indices(N)
            # the cache, kept: strict graph syntax (mindspore.export) refuses `self.rel_indices = ...`
            object.__setattr__(self, "rel_indices", rel_indices)

Strict mode, GRAPH_MODE and ``mindspore.jit`` run that call as Python while compiling
and the attribute holds the refreshed value after it, as after a PyNative call
(measured on MindSpore 2.10 CPU; a value read from a parameter is refused there: "the
inputs should be constant"). Without the cache the forward refreshes the local on
every call, which is not free in MindSpore: ConViT's relative positions of 14 x 14
patches are about fifteen operators per attention block: a converted convit_tiny
training step in PyNative took 1.48x MindCV's hand-written ConViT without the cache
and 1.19x with it (inference 1.18x and 1.10x; batch 1, one CPU thread, quiet machine:
benchmarks/README.md). Code outside the forward that reads the
attribute (``get_attention_map``) reads what the last forward refreshed, as in torch.

Only for ``if <test reading self.a>: self.a = <value not reading self.a>`` as a
statement of a compiled method's own body, in a Cell (a class with
``construct``), with ``self.a`` set nowhere else in the functions graph mode
compiles; the methods reading it must be called as ``self.<method>(...)`` only,
have plain parameters (no defaults, ``*args`` or keyword-only ones), and be called
directly by that method after the refresh, not through another method.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.helpers import get_full_name_for_node

from transpiler.convert.formatting import KeepsFormatting
from transpiler.convert.structural.attribute_casts import SelfAttributeToLocal
from transpiler.convert.structural.fresh_names import fresh_name
from transpiler.convert.structural.name_reads import mentions, names_made
from transpiler.convert.walk import LAYOUT_TYPES, Visitor, rewrite, walk


def without_attribute_refreshes(module: cst.Module, compiled: set[str], to_format) -> cst.Module:
    return rewrite(module, _Refreshes(compiled, to_format))


def _self_attribute(expr, name: str | None = None) -> bool:
    return m.matches(expr, m.Attribute(value=m.Name("self"), attr=m.Name(name) if name else m.Name()))


def _refreshed(statement) -> str | None:
    """``a`` of ``if <test reading self.a>: self.a = <value not reading self.a>``."""
    if not (isinstance(statement, cst.If) and statement.orelse is None and isinstance(statement.body, cst.IndentedBlock)
            and len(statement.body.body) == 1):
        return None
    store = statement.body.body[0]
    if not (isinstance(store, cst.SimpleStatementLine) and len(store.body) == 1 and isinstance(store.body[0], cst.Assign)
            and len(store.body[0].targets) == 1 and _self_attribute(store.body[0].targets[0].target)):
        return None
    name = store.body[0].targets[0].target.attr.value
    if not _reads(statement.test, name) or _reads(store.body[0].value, name):
        return None
    return name


def _reads(node: cst.CSTNode, name: str) -> bool:
    return bool(m.findall(node, m.Attribute(value=m.Name("self"), attr=m.Name(name))))


def _sets(node: cst.CSTNode, name: str) -> bool:
    target = m.Attribute(value=m.Name("self"), attr=m.Name(name))
    return bool(m.findall(node, m.AssignTarget(target=target) | m.AugAssign(target=target)
                          | m.AnnAssign(target=target) | m.Del(target=target)))


def _self_calls(node: cst.CSTNode) -> list[cst.Call]:
    return m.findall(node, m.Call(func=m.Attribute(value=m.Name("self"), attr=m.Name())))


def _plain(method: cst.FunctionDef) -> bool:
    params = method.params
    return (not params.posonly_params and not params.kwonly_params and not isinstance(params.star_arg, cst.Param)
            and params.star_kwarg is None and all(p.default is None for p in params.params)
            and bool(params.params) and params.params[0].name.value == "self")


class _PassOn(cst.CSTTransformer):
    """``self.<reader>(...)`` gets ``value`` as its last argument."""

    def __init__(self, readers: dict[str, str], value):
        super().__init__()
        self.readers, self.value = readers, value

    def leave_Call(self, original_node, updated_node):
        func = updated_node.func
        if not (_self_attribute(func) and func.attr.value in self.readers):
            return updated_node
        args = list(updated_node.args)
        value = self.value() if callable(self.value) else self.value
        keyword = any(a.keyword is not None or a.star for a in args)
        new = cst.Arg(value, keyword=cst.Name(self.readers[func.attr.value]) if keyword else None,
                      equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")) if keyword
                      else cst.MaybeSentinel.DEFAULT)
        if args and args[-1].comma is cst.MaybeSentinel.DEFAULT:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            return updated_node.with_changes(args=[*args, new])
        if args:  # a trailing comma: the new argument goes after it, with one of its own
            return updated_node.with_changes(args=[*args, new.with_changes(comma=args[-1].comma)])
        return updated_node.with_changes(args=[new])


class _Refreshes(KeepsFormatting):
    prune = LAYOUT_TYPES

    def __init__(self, compiled: set[str], to_format):
        super().__init__(to_format)
        self.compiled = compiled

    def leave_ClassDef(self, original_node, updated_node):
        if not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        methods = {s.name.value: s for s in updated_node.body.body if isinstance(s, cst.FunctionDef)}
        if "construct" not in methods:
            return updated_node
        for name, method in methods.items():
            if name not in self.compiled or not isinstance(method.body, cst.IndentedBlock):
                continue
            changed = self._refresh(updated_node, methods, method)
            if changed is not None:
                return changed
        return updated_node

    def _refresh(self, cls: cst.ClassDef, methods: dict[str, cst.FunctionDef], method: cst.FunctionDef):
        body = list(method.body.body)
        for index, statement in enumerate(body):
            attribute = _refreshed(statement)
            if attribute is None:
                continue
            rest = body[index + 1:]
            if _sets(cst.IndentedBlock(rest), attribute) or any(
                    _sets(other, attribute) for other_name, other in methods.items()
                    if other is not method and other_name in self.compiled):
                continue
            readers = {n for n, other in methods.items() if other is not method and _reads(other.body, attribute)}
            called = {call.func.attr.value for s in rest for call in _self_calls(s)}
            if not self._readers_ok(cls, methods, readers, called, attribute):
                continue
            return self._rewritten(cls, methods, method, index, attribute, readers & called)
        return None

    def _readers_ok(self, cls, methods, readers, called, attribute) -> bool:
        """The readers the method reaches after the refresh are called by it directly, have
        plain parameters and are mentioned nowhere but in ``self.<reader>(...)`` calls."""
        reached, pending = set(), [n for n in called if n in methods]
        while pending:
            name = pending.pop()
            if name in reached:
                continue
            reached.add(name)
            callees = {call.func.attr.value for call in _self_calls(methods[name].body)}
            if callees & readers:
                return False  # a reader reached through another method would read the attribute
            pending.extend(n for n in callees if n in methods)
        for reader in readers & called:
            if not _plain(methods[reader]) or _sets(methods[reader].body, attribute):
                return False
            mentioned = len(m.findall(cls, m.Attribute(attr=m.Name(reader))))
            calls = len(m.findall(cls, m.Call(func=m.Attribute(value=m.Name("self"), attr=m.Name(reader)))))
            if mentioned != calls:
                return False
        return True

    def _rewritten(self, cls, methods, method, index, attribute, readers: set[str]):
        body = list(method.body.body)
        taken = set(mentions(method)) | {p.name.value for p in method.params.params}
        local = fresh_name(attribute, taken)
        statement = body[index]
        store = statement.body.body[0]
        read = cst.parse_statement(f"{local} = self.{attribute}\n").with_changes(leading_lines=statement.leading_lines)
        refresh = [store.with_changes(body=[store.body[0].with_changes(targets=[cst.AssignTarget(cst.Name(local))])])]
        if _constant(store.body[0].value, _shape_names(method), methods):
            refresh.append(cst.parse_statement(
                f'# the cache, kept: strict graph syntax (mindspore.export) refuses `self.{attribute} = ...`\n'
                f'object.__setattr__(self, "{attribute}", {local})\n'))
        refreshed = statement.with_changes(
            leading_lines=[], test=statement.test.visit(SelfAttributeToLocal(attribute, local)),
            body=statement.body.with_changes(body=refresh))
        params = {}
        for reader in readers:
            other = methods[reader]
            params[reader] = fresh_name(attribute, set(mentions(other)) | {p.name.value for p in other.params.params})
        to_local, pass_on = SelfAttributeToLocal(attribute, local), _PassOn(params, cst.Name(local))
        rest = [s.visit(to_local).visit(pass_on) for s in body[index + 1:]]
        for old, new in zip(body[index + 1:], rest):
            if old in self.to_format or not new.deep_equals(old):
                self.to_format.add(new)
        new_method = method.with_changes(body=method.body.with_changes(body=[*body[:index], read, refreshed, *rest]))
        others = {}
        for name, other in methods.items():
            if other is method:
                continue
            new = other
            if name in params:
                last = new.params.params[-1]
                comma = last.comma if last.comma is not cst.MaybeSentinel.DEFAULT else cst.MaybeSentinel.DEFAULT
                updated = [*new.params.params[:-1],
                           last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                           if comma is cst.MaybeSentinel.DEFAULT else last,
                           cst.Param(cst.Name(params[name]), comma=comma)]
                new = new.with_changes(params=new.params.with_changes(params=updated),
                                       body=new.body.visit(SelfAttributeToLocal(attribute, params[name])))
            passed = new.body.visit(_PassOn(params, lambda: cst.Attribute(cst.Name("self"), cst.Name(attribute))))
            if not passed.deep_equals(new.body):
                new = new.with_changes(body=_formatted(new.body, passed, self.to_format))
            others[id(other)] = new
        others[id(method)] = new_method
        return cls.with_changes(body=cls.body.with_changes(body=[others.get(id(s), s) for s in cls.body.body]))


def _shape_names(function: cst.FunctionDef) -> set[str]:
    """Names ``function`` binds only to sizes of a shape (``B, N, C = x.shape``, ``n = x.shape[1]``)."""
    shape = m.Attribute(attr=m.Name("shape"))
    return names_made(function, shape | m.Subscript(value=shape), unpacked=True)


# what graph mode knows of a tensor while compiling (a device read is dropped later: device_leftovers.py)
_STATIC = (".dtype", ".shape", ".device")


def _constant(value, shape_names: set[str], methods: dict[str, cst.FunctionDef]) -> bool:
    """``value`` is known while graph mode compiles: it reads sizes of shapes, and of ``self``
    only dtypes, shapes, devices and methods that read no more (``self.get_rel_indices(N)``,
    which reads ``self.qk.weight.dtype``). ``object.__setattr__`` in a compiled method runs as
    Python then, and refuses a value that is not (a parameter's: "the inputs should be
    constant", measured)."""
    reads = _SelfReads()
    walk(value, reads, prune=LAYOUT_TYPES)
    if reads.other or not set(mentions(value)) <= shape_names | {"self"}:
        return False
    for chain in reads.chains:
        head = chain.split(".")[1]
        if head in methods:
            method_reads = _SelfReads()
            walk(methods[head].body, method_reads, prune=LAYOUT_TYPES)
            if method_reads.other or not all(c.endswith(_STATIC) for c in method_reads.chains):
                return False
        elif not chain.endswith(_STATIC):
            return False
    return True


class _SelfReads(Visitor):
    """The longest ``self.a.b`` chains a piece of code reads; ``other``: ``self`` used otherwise."""

    def __init__(self):
        super().__init__()
        self.chains: list[str] = []
        self.other = False

    def visit_Attribute(self, node) -> bool:
        name = get_full_name_for_node(node)
        if name and name.startswith("self."):
            self.chains.append(name)
            return False
        return True

    def visit_Name(self, node) -> None:
        if node.value == "self":
            self.other = True


def _formatted(old: cst.BaseSuite, new: cst.BaseSuite, to_format) -> cst.BaseSuite:
    """``new``, with its statements that differ from ``old``'s queued for black."""
    class _Queue(cst.CSTVisitor):
        def visit_SimpleStatementLine(self, node) -> None:
            to_format.add(node)

    if isinstance(new, cst.IndentedBlock) and isinstance(old, cst.IndentedBlock) and len(new.body) == len(old.body):
        for before, after in zip(old.body, new.body):
            if not after.deep_equals(before):
                after.visit(_Queue())
    return new
