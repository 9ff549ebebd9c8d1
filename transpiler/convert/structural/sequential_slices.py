"""A slice of a Sequential called in a compiled function runs its layers one by one.

openai's diffusion UNets (improved-diffusion, GLIDE) split a block's layers in
its forward::

    out_norm, out_rest = self.out_layers[0], self.out_layers[1:]
    ...
    h = out_rest(h)

Graph mode builds the slice as a new SequentialCell in each block that runs it,
and its parameters then take names relative to that slice ("3.weight"): with
two such blocks the graph refuses to compile ("its name '3.weight' already
exists", measured on MindSpore 2.10 CPU; so does a loop over the slice). An
index loop over the Cell's own layers compiles::

    for index in range(1, len(self.out_layers)):
        h = self.out_layers[index](h)

Only where the slice (constant bounds, no step) is bound to a name that is read
nowhere but in statements ``y = name(x)`` of the same block; each becomes the
loop, and the name goes from its assignment. The same in PyNative.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from transpiler.convert.formatting import KeepsFormatting
from transpiler.convert.structural.fresh_names import fresh_name
from transpiler.convert.structural.name_reads import mentions
from transpiler.convert.walk import LAYOUT_TYPES, rewrite


def without_sequential_slices(module: cst.Module, compiled: set[str], to_format) -> cst.Module:
    return rewrite(module, _Slices(compiled, to_format))


def _bound(node) -> int | None:
    """A slice bound: an integer literal, negative too (None: not one)."""
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) \
            and isinstance(node.expression, cst.Integer):
        return -int(node.expression.value)
    return None


def _sliced(value) -> tuple[cst.Attribute, int | None, int | None] | None:
    """(``self.layers``, start, stop) of ``self.layers[start:stop]``."""
    if not (isinstance(value, cst.Subscript) and len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Slice)
            and m.matches(value.value, m.Attribute(value=m.Name("self"), attr=m.Name()))):
        return None
    piece = value.slice[0].slice
    if piece.step is not None:
        return None
    start = None if piece.lower is None else _bound(piece.lower)
    stop = None if piece.upper is None else _bound(piece.upper)
    if (piece.lower is not None and start is None) or (piece.upper is not None and stop is None):
        return None
    return value.value, start, stop


def _bindings(statement) -> dict[str, tuple]:
    """name -> (self.layers, start, stop) for ``name = self.layers[a:b]`` or one element
    of ``a, name = x, self.layers[a:b]``."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
            and isinstance(statement.body[0], cst.Assign) and len(statement.body[0].targets) == 1):
        return {}
    target, value = statement.body[0].targets[0].target, statement.body[0].value
    pairs = []
    if isinstance(target, cst.Name):
        pairs = [(target, value)]
    elif isinstance(target, cst.Tuple) and isinstance(value, cst.Tuple) and len(target.elements) == len(value.elements) \
            and not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)):
        pairs = [(t.value, v.value) for t, v in zip(target.elements, value.elements)]
    found = {}
    for name, expression in pairs:
        sliced = _sliced(expression)
        if isinstance(name, cst.Name) and sliced is not None:
            found[name.value] = sliced
    return found


def _applied(statement, name: str) -> tuple[cst.BaseAssignTargetExpression, cst.BaseExpression] | None:
    """(target, argument) of ``target = name(argument)``."""
    if m.matches(statement, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())],
                                                                   value=m.Call(func=m.Name(name)))])):
        assign = statement.body[0]
        args = assign.value.args
        if len(args) == 1 and args[0].keyword is None and not args[0].star:
            return assign.targets[0].target, args[0].value
    return None


def _length(layers: cst.Attribute, offset: int) -> cst.BaseExpression:
    length = cst.Call(cst.Name("len"), [cst.Arg(layers)])
    return length if offset == 0 else cst.BinaryOperation(length, cst.Subtract(), cst.Integer(str(-offset)))


def _loop(target, argument, layers: cst.Attribute, start, stop, index: str, leading) -> list[cst.BaseStatement]:
    lower = None if not start else (cst.Integer(str(start)) if start > 0 else _length(layers, start))
    upper = _length(layers, 0) if stop is None else (cst.Integer(str(stop)) if stop >= 0 else _length(layers, stop))
    bounds = [cst.Arg(lower), cst.Arg(upper)] if lower is not None else [cst.Arg(upper)]
    step = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(target)], cst.Call(
        cst.Subscript(layers, [cst.SubscriptElement(cst.Index(cst.Name(index)))]), [cst.Arg(target)]))])
    loop = cst.For(target=cst.Name(index), iter=cst.Call(cst.Name("range"), bounds),
                   body=cst.IndentedBlock([step]), leading_lines=leading)
    if m.matches(argument, m.Name(target.value)):
        return [loop]
    first = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(target)], argument)], leading_lines=leading)
    return [first, loop.with_changes(leading_lines=())]


def _without(statement: cst.SimpleStatementLine, names: set[str]) -> cst.SimpleStatementLine | None:
    """The assignment without the names bound to slices (None: nothing left)."""
    assign = statement.body[0]
    target = assign.targets[0].target
    if isinstance(target, cst.Name):
        return None
    kept = [(t, v) for t, v in zip(target.elements, assign.value.elements)
            if not (isinstance(t.value, cst.Name) and t.value.value in names)]
    if not kept:
        return None
    if len(kept) == 1:
        new = assign.with_changes(targets=[assign.targets[0].with_changes(target=kept[0][0].value)],
                                  value=kept[0][1].value)
    else:
        last = len(kept) - 1
        new = assign.with_changes(
            targets=[assign.targets[0].with_changes(target=target.with_changes(
                elements=[t.with_changes(comma=cst.MaybeSentinel.DEFAULT if i == last else t.comma)
                          for i, (t, _) in enumerate(kept)]))],
            value=assign.value.with_changes(
                elements=[v.with_changes(comma=cst.MaybeSentinel.DEFAULT if i == last else v.comma)
                          for i, (_, v) in enumerate(kept)]))
    return statement.with_changes(body=[new])


class _Slices(KeepsFormatting):
    prune = LAYOUT_TYPES

    def __init__(self, compiled: set[str], to_format):
        super().__init__(to_format)
        self.compiled = compiled
        self.functions: list[cst.FunctionDef] = []
        self.indices: set[str] = set()  # the loop indices written in the function

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node)
        self.indices = set()

    def leave_FunctionDef(self, original_node, updated_node):
        self.functions.pop()
        return updated_node

    def leave_IndentedBlock(self, original_node, updated_node):
        if not self.functions or self.functions[-1].name.value not in self.compiled:
            return updated_node
        body = list(updated_node.body)
        while (rewritten := self._rewritten(body)) is not None:
            body = rewritten
        return updated_node if body == list(updated_node.body) else updated_node.with_changes(body=body)

    def _rewritten(self, body: list) -> list | None:
        """The block with its first slice bound and called run by index (None: there is none)."""
        for position, statement in enumerate(body):
            slices = _bindings(statement)
            rest = body[position + 1:]
            names = {name for name in slices
                     if all(_applied(s, name) is not None or name not in mentions(s) for s in rest)
                     and any(_applied(s, name) is not None for s in rest)}
            if not names:
                continue
            # each loop its own index: a name read after a loop would get a definition before it
            taken = set().union(*(mentions(s) for s in self.functions[-1].body.body)) \
                | {p.name.value for p in self.functions[-1].params.params} | self.indices
            result = body[:position]
            kept = _without(statement, names)
            carried = statement.leading_lines if kept is None else ()
            if kept is not None:
                result.append(kept)
                self.to_format.add(kept)
            for following in rest:
                applied = next(((name, found) for name in names if (found := _applied(following, name))), None)
                if applied is None:
                    if carried:
                        following = following.with_changes(leading_lines=[*carried, *following.leading_lines])
                        carried = ()
                    result.append(following)
                    continue
                name, (target, argument) = applied
                layers, start, stop = slices[name]
                lines = _loop(target, argument, layers, start, stop, fresh_name("index", taken),
                              [*carried, *following.leading_lines])
                carried = ()
                self.indices.add(lines[-1].target.value)
                for line in lines:
                    self.to_format.add(line)
                result.extend(lines)
            return result
        return None
