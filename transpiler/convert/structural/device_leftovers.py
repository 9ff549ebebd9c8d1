"""What the conversion leaves of device handling, in the form graph mode compiles (the
graph-subset pass, graph_subset.py, runs this).

A device read that nothing reads: ``device = self.qk.weight.device`` in a method
whose device arguments and moves the conversion dropped (timm's convit, xcit,
edgenext). Graph mode refuses ``Parameter.device`` ("the 'Parameter' object's
method 'device' is not supported in 'construct'"), measured on MindSpore 2.10
CPU; the assignment, which has no effect, goes. In ``n, device = x.shape[-2],
x.device`` (lucidrains' conformer, PaLM, CoCa) graph mode compiles the tuple as
an interpreted object, so ``n`` is no number ("For 'Cast', the input 'dtype'
expect a type, but got AbstractNegligible" in ``ops.arange(n)``): such a tuple
assignment becomes one assignment per name first. So does lucidrains' ``h, i, j,
device = *qk_sim.shape[-3:], qk_sim.device`` (PaLM-lite's ALiBi: the same error in
``ops.arange(i)``; egnn's ``b, n, d, device, num_nearest = *feats.shape, ...``: the
neighbour count sizes ``topk``, and the index tuple of ``batched_index_select`` built
from those shapes fails, "The starred unpack merge input must be sequence, but got
AbstractAny"), the names the starred value gives assigned from it in one statement:
``h, i, j = qk_sim.shape[-3:]`` and ``device = torch_device(qk_sim.device)``, a starred
name among them kept (``b, *axis, _ = data.shape``). Measured on MindSpore 2.10 CPU:
the device read in a statement of its own compiles, passed to a method or not
(read through ``torch_device``, plain, or its ``.type`` compared), and so does the
starred shape unpacked on its own; ``*x.shape, None`` compiles too, which is what a
tuple that cannot be split gets for a device nothing reads.

What the conversion left of a device check: ``dv = "cuda" if x.is_cuda else
"cpu"`` read by nothing once the device arguments are dropped (pyGAT), and ``if
x.is_cuda: iden = iden.cuda()`` made ``if <device target> == "GPU": pass``
(PointNet). Graph mode refuses ``mindspore.get_context`` in construct ("the
method or function 'mindspore.context.get_context' is not supported"); the
unread assignment goes as a device read does, the empty ``if`` goes too.
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.formatting import KeepsFormatting
from transpiler.convert.structural.name_reads import mentions
from transpiler.convert.walk import WITHIN_STATEMENT_TYPES, rewrite


def without_device_leftovers(module: cst.Module, to_format) -> cst.Module:
    module = rewrite(module, _DeviceReads(to_format))
    return rewrite(module, _EmptyIfs(to_format))


class _DeviceReads(KeepsFormatting):
    """At the top of a function: ``n, device = x.shape[-2], x.device`` becomes one assignment
    per name, then ``name = <... x.device ...>`` that nothing else in the function reads goes."""

    prune = WITHIN_STATEMENT_TYPES

    def leave_FunctionDef(self, original_node, updated_node):
        if not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        body = list(updated_node.body.body)
        kept = [part for statement in body for part in _split_device_tuple(statement)]
        while True:  # removing one device read may leave the one it read unread
            unread = next((s for s in kept if _unread_device_read(s, kept)), None)
            if unread is None:
                break
            kept = [s for s in kept if s is not unread]
        kept = [_without_unread_devices(statement, kept) for statement in kept]
        if kept == body or not kept:
            return updated_node
        return updated_node.with_changes(body=updated_node.body.with_changes(body=kept))


def reads_device(expr: cst.CSTNode) -> bool:
    """``x.device``, or the device target (``mindspore.get_context("device_target")``, what
    ``x.is_cuda`` and ``torch.cuda.is_available()`` become)."""

    class _Device(cst.CSTVisitor):
        found = False

        def visit_Attribute(self, node) -> None:
            if node.attr.value == "device":
                self.found = True

        def visit_Call(self, node) -> None:
            if _is_get_context(node):
                self.found = True

    device = _Device()
    expr.visit(device)
    return device.found


def _single_assign(statement) -> cst.Assign | None:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 \
            and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1:
        return statement.body[0]
    return None


def _split_device_tuple(statement) -> list:
    """``a, device = e1, x.device`` as ``a = e1`` and ``device = x.device`` (graph mode compiles the
    device read as an interpreted object, and the tuple with it: ``a`` would be one too), where
    no element reads a name an element before it binds. A starred value gives the names it
    unpacks in one assignment: ``b, n, device = *x.shape, x.device`` as ``b, n = x.shape`` and
    ``device = x.device`` (a starred name among them stays: ``b, *axis, _ = x.shape``)."""
    assign = _single_assign(statement)
    target = assign.targets[0].target if assign is not None else None
    if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(assign.value, (cst.Tuple, cst.List))):
        return [statement]
    names, values = target.elements, assign.value.elements
    if any(not isinstance(e.value, cst.Name) for e in names) or not any(reads_device(e.value) for e in values):
        return [statement]
    pairs = _aligned(names, values)
    if pairs is None:
        return [statement]
    # in order, each assignment must see the values the tuple saw: none reads a name bound before it
    bound: set[str] = set()
    for group, value in pairs:
        if any(read in bound for read in mentions(value)):
            return [statement]
        bound |= set(mentions(group))
    parts = [cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(group)], value)]) for group, value in pairs]
    # the comments above the tuple and after it stay with its first line
    return [parts[0].with_changes(leading_lines=statement.leading_lines,
                                  trailing_whitespace=statement.trailing_whitespace), *parts[1:]]


def _aligned(names, values) -> list[tuple[cst.BaseAssignTargetExpression, cst.BaseExpression]] | None:
    """The target each value is assigned to, in order: a name per value, and the names a starred
    value unpacks (between those of the values before it and after it) as one tuple; None where
    that cannot be told (two starred values, a starred name outside a starred value's names,
    a starred value that gives no plain name)."""
    starred = [i for i, e in enumerate(values) if isinstance(e, cst.StarredElement)]
    if not starred:
        if len(names) != len(values) or any(isinstance(e, cst.StarredElement) for e in names):
            return None
        return [(name.value, value.value) for name, value in zip(names, values)]
    if len(starred) > 1:
        return None
    before, after = starred[0], len(values) - starred[0] - 1
    if len(names) - after - before < 1:
        return None
    middle, outside = names[before:len(names) - after], [*names[:before], *names[len(names) - after:]]
    if all(isinstance(e, cst.StarredElement) for e in middle) or any(isinstance(e, cst.StarredElement) for e in outside):
        return None
    unpacked = cst.Tuple([cst.StarredElement(e.value) if isinstance(e, cst.StarredElement) else cst.Element(e.value)
                          for e in middle], lpar=[] if len(middle) > 1 else [cst.LeftParen()],
                         rpar=[] if len(middle) > 1 else [cst.RightParen()])  # one name: (n,) = x.shape
    return [*((name.value, value.value) for name, value in zip(names[:before], values[:before])),
            (unpacked, values[before].value),
            *((name.value, value.value) for name, value in zip(names[len(names) - after:], values[before + 1:]))]


def _without_unread_devices(statement, statements: list):
    """``*axes, device, dtype = *x.shape, x.device, x.dtype`` (which cannot be split) with
    ``None`` for the device read no other statement reads."""
    assign = _single_assign(statement)
    target = assign.targets[0].target if assign is not None else None
    if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(assign.value, (cst.Tuple, cst.List))):
        return statement
    names, values = list(target.elements), list(assign.value.elements)
    star = [i for i, e in enumerate(names) if isinstance(e, cst.StarredElement)]
    value_star = [i for i, e in enumerate(values) if isinstance(e, cst.StarredElement)]
    changed = False
    for index, element in enumerate(names):
        if not isinstance(element.value, cst.Name) or isinstance(element, cst.StarredElement):
            continue
        if star and index > star[0]:  # after a starred target: aligned from the end
            position = len(values) - (len(names) - index)
            if value_star and position <= value_star[-1]:
                continue
        elif value_star and index >= value_star[0]:
            continue
        else:
            position = index
        if not 0 <= position < len(values) or not reads_device(values[position].value):
            continue
        name = element.value.value
        if any(read == name for other in statements if other is not statement for read in _read_names(other)):
            continue
        values[position] = values[position].with_changes(value=cst.Name("None"))
        changed = True
    if not changed:
        return statement
    return statement.with_changes(body=[assign.with_changes(value=assign.value.with_changes(elements=values))])


def _unread_device_read(statement, statements: list) -> bool:
    """``name = <... x.device ...>`` and no other statement reads ``name``."""
    assign = _single_assign(statement)
    if assign is None or not isinstance(assign.targets[0].target, cst.Name) or not reads_device(assign.value):
        return False
    name = assign.targets[0].target.value
    return not any(read == name for other in statements if other is not statement for read in _read_names(other))


def _read_names(statement) -> list[str]:
    """The names a statement mentions, but for the target of a plain ``name = value``."""
    assign = _single_assign(statement)
    if assign is not None and isinstance(assign.targets[0].target, cst.Name):
        return mentions(assign.value)
    return mentions(statement)


def _is_get_context(node) -> bool:
    func = node.func
    return (isinstance(func, cst.Attribute) and func.attr.value == "get_context") \
        or (isinstance(func, cst.Name) and func.value == "get_context")


class _EmptyIfs(KeepsFormatting):
    """``if x.is_cuda: iden = iden.cuda()`` became ``if <device target> == "GPU": pass``: an ``if``
    whose every branch is ``pass`` and whose tests call nothing but get_context goes."""

    prune = WITHIN_STATEMENT_TYPES

    def leave_IndentedBlock(self, original_node, updated_node):
        body = [s for s in updated_node.body if not _empty_if(s)]
        if len(body) == len(updated_node.body):
            return updated_node
        return updated_node.with_changes(body=body or [cst.SimpleStatementLine([cst.Pass()])])


def _empty_if(statement) -> bool:
    node = statement
    while isinstance(node, cst.If):
        if not _only_pass(node.body) or not _calls_only_get_context(node.test):
            return False
        node = node.orelse
    return isinstance(statement, cst.If) and (node is None or _only_pass(node.body))


def _only_pass(block) -> bool:
    return isinstance(block, cst.IndentedBlock) and all(
        isinstance(s, cst.SimpleStatementLine) and all(isinstance(small, cst.Pass) for small in s.body)
        for s in block.body)


def _calls_only_get_context(test) -> bool:
    class _Calls(cst.CSTVisitor):
        other = False

        def visit_Call(self, node) -> None:
            if not _is_get_context(node):
                self.other = True

    calls = _Calls()
    test.visit(calls)
    return not calls.other
