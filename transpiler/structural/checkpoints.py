"""Checkpoint dicts: ``torch.save`` of a dict of states and plain values, and
the ``torch.load`` that reads one back.

    torch.save({"epoch": epoch,                 mindspore.save_checkpoint(
                "model": model.state_dict(),        {**{"model." + name: value for name, value in model.parameters_dict().items()},
                "optim": optimizer.state_dict()},    **{"optim." + name: value for name, value in optimizer.parameters_dict().items()}},
               PATH)                                PATH, append_dict={"epoch": epoch})

A MindSpore checkpoint is one flat table of named tensors: each state goes in
under its key as a prefix (two Cells may well have parameters of the same
name), plain values go in ``append_dict``. The load rebuilds torch's dict, so
every later use of it (``checkpoint["model"]``, ``.get``, passing it on)
keeps working:

    checkpoint = torch.load(PATH)     ->    checkpoint = mindspore.load_checkpoint(PATH)
                                            checkpoint = {"epoch": checkpoint["epoch"].item(),
                                                          "model": {name.removeprefix("model."): value
                                                                    for name, value in checkpoint.items()
                                                                    if name.startswith("model.")}, ...}

Plain values come back as 0-d Parameters: ``.item()`` restores a Python number
(ints exactly; floats were stored as float32). The keys and kinds come from
the torch.save in the same file (checkpoint_layout); a loaded dict used with a
computed key and no save to read the keys from, ``torch.load(p)["key"]``, and
values MindSpore cannot store (None, lists, dicts) are marked.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.spec import Unconvertible
from transpiler.diagnostics import Outcome, Severity
from transpiler.engine import code_of
from transpiler.structural.checkpoint_layout import LOAD, NUMBER, SAVE, STATE, UNSAVABLE, layout_for, scan

STATE_DICT = "state dict"  # known kind of a variable assigned from .state_dict()
_LOAD_USE = "checkpoint load:"  # known_kinds key: id of a torch.load call -> how its result is used
COMBINED, DYNAMIC, SUBSCRIPTED = "combined", "dynamic", "subscripted"


def _prefix(key: str) -> cst.SimpleString:
    return cst.SimpleString(repr(key + "."))


def _items(owner: cst.BaseExpression) -> cst.Call:
    return cst.Call(cst.Attribute(owner, cst.Name("items")), [])


def _pairs(iterable: cst.BaseExpression, condition=None) -> cst.CompFor:
    target = cst.Tuple([cst.Element(cst.Name("name")), cst.Element(cst.Name("value"))], lpar=[], rpar=[])
    ifs = [cst.CompIf(condition)] if condition is not None else []
    return cst.CompFor(target=target, iter=iterable, ifs=ifs)


def _method(owner: cst.BaseExpression, name: str, *args: cst.BaseExpression) -> cst.Call:
    return cst.Call(cst.Attribute(owner, cst.Name(name)), [cst.Arg(a) for a in args])


# -- torch.save({...}, path) ------------------------------------------------------
def load_use(ctx, call: cst.Call) -> str | None:
    """How the result of this (original) torch.load call is used, if it is a dict of entries."""
    return ctx.known_kinds.get(_LOAD_USE + str(id(call)))


def save_dict(call, ctx) -> None:
    """Rewrite the bound torch.save call whose object is a dict literal."""
    converted = call.get("obj")
    states: list[cst.BaseDictElement] = []
    plain: list[cst.DictElement] = []
    for element in converted.elements:
        if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
            raise Unconvertible("a checkpoint dict needs literal string keys (no ** unpacking, no computed keys)")
        key = element.key.evaluated_value
        state = _state_of(element.value, ctx)
        if state is not None:
            prefixed = cst.BinaryOperation(_prefix(key), cst.Add(), cst.Name("name"))
            states.append(cst.StarredDictElement(cst.DictComp(prefixed, cst.Name("value"), _pairs(_items(state)))))
        elif _unsavable(element.value, ctx):
            raise Unconvertible(f"checkpoint value {key!r} cannot be stored in a MindSpore checkpoint "
                                "(numbers, strings and tensors only; no None, lists or dicts)")
        else:
            plain.append(element)
    call.set("obj", cst.Dict(states))
    if plain:
        call.add_keyword("append_dict", cst.Dict(plain))


def _state_of(value: cst.BaseExpression, ctx) -> cst.BaseExpression | None:
    """The dict of Parameters a converted entry value stands for, or None if plain."""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and not value.args:
        if value.func.attr.value == "parameters_dict":
            return value  # model.state_dict() / optimizer.state_dict(), already converted
        if value.func.attr.value == "state_dict":
            raise Unconvertible(f"{code_of(value)} has no MindSpore checkpoint form (a scheduler's state?)")
    if isinstance(value, cst.Name) and ctx.known_kinds.get(value.value) == STATE_DICT:
        return value
    return None


def _unsavable(value: cst.BaseExpression, ctx) -> bool:
    if isinstance(value, cst.Name):
        return value.value == "None"
    return isinstance(value, (cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.DictComp))


# -- checkpoint = torch.load(path) ------------------------------------------------------
class Checkpoints:
    """Plans the loads before the traversal; expands them as the traversal leaves them."""

    def __init__(self, rewriter):
        self.rewriter = rewriter
        self.ctx = rewriter.ctx
        self.expansions: dict[int, tuple[str, dict[str, str | None]]] = {}

    def plan(self, module: cst.Module) -> None:
        used = set(self.ctx.analysis.references.values())
        if SAVE not in used and LOAD not in used:
            return  # no checkpoints in this file: skip the walk
        layouts = scan(module, self.ctx.analysis)
        for name in layouts.state_names:
            self.ctx.known_kinds.setdefault(name, STATE_DICT)
        for call in layouts.direct:
            self._use(call, SUBSCRIPTED)
        for site in layouts.loads:
            if site.name not in layouts.used_keys and site.name not in layouts.dynamic:
                continue  # never subscripted: a plain state dict
            layout = layout_for(layouts, site.name)
            if layout is None:
                self._use(site.call, DYNAMIC)
                continue
            self._use(site.call, COMBINED)
            self.expansions[id(site.statement)] = (site.name[1], layout)

    def _use(self, call: cst.Call, how: str) -> None:
        self.ctx.known_kinds[_LOAD_USE + str(id(call))] = how

    def leave(self, original: cst.CSTNode, result):
        planned = self.expansions.pop(id(original), None)
        if planned is None or not _loads_checkpoint(result):
            return result
        name, layout = planned
        entries, unknown = [], []
        for key, kind in layout.items():
            if kind == UNSAVABLE:
                unknown.append(f"checkpoint value {key!r} cannot be stored in a MindSpore checkpoint; it is left out")
                continue
            entries.append(cst.DictElement(cst.SimpleString(repr(key)), _entry(name, key, kind)))
            if kind is None:
                unknown.append(f"checkpoint value {key!r} comes back as a 0-d MindSpore Parameter and its type is "
                               f"unknown here: add .item() if it was a Python number")
        rebuilt = cst.SimpleStatementLine(
            [cst.Assign([cst.AssignTarget(cst.Name(name))], cst.Dict(entries))]
        )
        self.ctx.to_format.add(rebuilt)
        self.ctx.converted(original, LOAD, "checkpoint dict rebuilt from the flat MindSpore checkpoint")
        if unknown:
            from transpiler.rewriter import _add_markers

            for text in unknown:
                self.ctx.report(original, LOAD, Severity.MARKER, f"{LOAD}: {text}", Outcome.MARKED)
            result = _add_markers(result, [f"{LOAD}: {text}" for text in unknown])
        return cst.FlattenSentinel([result, rebuilt])


def _loads_checkpoint(statement) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    assign = statement.body[0]
    return (
        isinstance(assign, cst.Assign)
        and isinstance(assign.value, cst.Call)
        and code_of(assign.value.func).endswith("load_checkpoint")
    )


def _entry(name: str, key: str, kind: str | None) -> cst.BaseExpression:
    flat = cst.Name(name)
    if kind == STATE:
        stripped = _method(cst.Name("name"), "removeprefix", _prefix(key))
        condition = _method(cst.Name("name"), "startswith", _prefix(key))
        return cst.DictComp(stripped, cst.Name("value"), _pairs(_items(flat), condition))
    value = cst.Subscript(flat, [cst.SubscriptElement(cst.Index(cst.SimpleString(repr(key))))])
    return _method(value, "item") if kind == NUMBER else value
