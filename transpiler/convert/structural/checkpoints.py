"""Checkpoint dicts: ``torch.save`` of a dict of states and plain values, and
the ``torch.load`` that reads one back.

    torch.save({"epoch": epoch,                 mindspore.save_checkpoint(
                "model": model.state_dict(),        {**{"model." + name: value for name, value in model.parameters_dict().items()},
                "optim": optimizer.state_dict(),     **{"optim." + name: value for name, value in optimizer.parameters_dict().items()}},
                "config": config},                  PATH)
               PATH)                            pathlib.Path(str(PATH) + ".pkl").write_bytes(
                                                    pickle.dumps({"epoch": epoch, "config": config}))

A MindSpore checkpoint is one flat table of named tensors: each state goes in
under its key as a prefix (two Cells may well have parameters of the same
name). Everything else goes, with its Python type, into ``PATH.pkl`` next to
it (what torch.save itself does for it: pickle), so ints come back as ints,
dicts as dicts, strings, floats, lists and tensors as themselves. The load
rebuilds torch's dict, so every later use of it (``checkpoint["model"]``,
``.get``, passing it on) keeps working:

    checkpoint = torch.load(PATH)     ->    checkpoint = mindspore.load_checkpoint(PATH + ".ckpt")
                                            checkpoint = {"model": {name.removeprefix("model."): value
                                                                    for name, value in checkpoint.items()
                                                                    if name.startswith("model.")}, ...,
                                                          **pickle.loads(pathlib.Path(str(PATH) + ".pkl").read_bytes())}

(``mindspore.save_checkpoint`` appends ``.ckpt`` to a file name without it,
so the load asks for that name.) The keys and which of them are states come
from the torch.save in the same file (checkpoint_layout), else from how the
loaded dict is used; a loaded dict read with computed keys and no save to
read the keys from, and ``torch.load(p)["key"]``, are marked.
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.spec import Unconvertible
from transpiler.convert.engine import code_of
from transpiler.convert.structural.checkpoint_layout import FILE_CHECKS, LOAD, SAVE, STATE, layout_for, scan

STATE_DICT = "state dict"  # known kind of a variable assigned from .state_dict()
_LOAD_USE = "checkpoint load:"  # known_kinds key: id of a torch.load call -> how its result is used
COMBINED, DYNAMIC, SUBSCRIPTED, VALUES_ONLY = "combined", "dynamic", "subscripted", "values only"
_VALUES_SUFFIX = ".pkl"


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


def _subscript(owner: cst.BaseExpression, key: str) -> cst.Subscript:
    return cst.Subscript(owner, [cst.SubscriptElement(cst.Index(cst.SimpleString(repr(key))))])


# -- file names ---------------------------------------------------------------------
def literal_tail(expression: cst.BaseExpression) -> cst.BaseExpression | None:
    """The string literal a path expression ends with, where its last characters are
    that literal's: a string, ``"...".format()`` (not ending in a field), an f-string
    ending in text, ``a + "..."``, ``os.path.join(..., "...")``; else None."""
    if isinstance(expression, cst.SimpleString):
        return expression if isinstance(expression.evaluated_value, str) else None
    if isinstance(expression, cst.ConcatenatedString):
        return literal_tail(expression.right)
    if isinstance(expression, cst.FormattedString):
        return expression if expression.parts and isinstance(expression.parts[-1], cst.FormattedStringText) else None
    if isinstance(expression, cst.BinaryOperation) and isinstance(expression.operator, cst.Add):
        return literal_tail(expression.right)
    if isinstance(expression, cst.Call) and isinstance(expression.func, cst.Attribute):
        if expression.func.attr.value == "format":
            literal = literal_tail(expression.func.value)
            return literal if literal is not None and not literal_text(literal).endswith("}") else None
        if code_of(expression.func) in ("os.path.join", "path.join") and expression.args:
            return literal_tail(expression.args[-1].value)
    return None


def literal_text(literal: cst.BaseExpression) -> str:
    """The text of a literal ``literal_tail`` found (an f-string's last text)."""
    if isinstance(literal, cst.SimpleString):
        return literal.evaluated_value
    return literal.parts[-1].value


def with_checkpoint_suffix(literal: cst.BaseExpression) -> cst.BaseExpression:
    """The literal with ``.ckpt`` after its text, in its own quotes."""
    if isinstance(literal, cst.SimpleString):
        start, quote = len(literal.prefix) + len(literal.quote), literal.quote
        return literal.with_changes(value=f"{literal.value[:start]}{literal.value[start:-len(quote)]}.ckpt{quote}")
    last = literal.parts[-1]
    return literal.with_changes(parts=[*literal.parts[:-1], last.with_changes(value=last.value + ".ckpt")])


class _Replace(cst.CSTTransformer):
    def __init__(self, old: cst.CSTNode, new: cst.CSTNode):
        super().__init__()
        self.old, self.new = old, new

    def on_leave(self, original_node, updated_node):
        return self.new if original_node is self.old else updated_node


def checkpoint_file(path: cst.BaseExpression) -> cst.BaseExpression:
    """The file mindspore.save_checkpoint wrote for ``path``: it appends .ckpt when the name lacks it."""
    literal = literal_tail(path)
    if literal is not None:
        if literal_text(literal).endswith(".ckpt"):
            return path
        return path.visit(_Replace(literal, with_checkpoint_suffix(literal)))
    stem = _method(_as_text(path), "removesuffix", cst.SimpleString('".ckpt"'))
    return cst.BinaryOperation(stem, cst.Add(), cst.SimpleString('".ckpt"'))


def values_name(path: cst.BaseExpression) -> cst.BaseExpression:
    """``str(path) + ".pkl"``: where the values that are not tensors live."""
    if isinstance(path, cst.SimpleString) and isinstance(path.evaluated_value, str):
        return cst.SimpleString(repr(path.evaluated_value + _VALUES_SUFFIX))
    return cst.BinaryOperation(_as_text(path), cst.Add(), cst.SimpleString(f'"{_VALUES_SUFFIX}"'))


def values_file(path: cst.BaseExpression, ctx) -> cst.Call:
    """``pathlib.Path(str(path) + ".pkl")``."""
    ctx.imports_needed.add(("pathlib", "pathlib"))
    return cst.Call(cst.Attribute(cst.Name("pathlib"), cst.Name("Path")), [cst.Arg(values_name(path))])


def _as_text(path: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(path, (cst.FormattedString, cst.ConcatenatedString)):
        return path
    if isinstance(path, cst.Call) and code_of(path.func) in ("os.path.join", "str"):
        return path
    return cst.Call(cst.Name("str"), [cst.Arg(path)])


def read_values(path: cst.BaseExpression, ctx) -> cst.Call:
    ctx.imports_needed.add(("pickle", "pickle"))
    read = _method(values_file(path, ctx), "read_bytes")
    return cst.Call(cst.Attribute(cst.Name("pickle"), cst.Name("loads")), [cst.Arg(read)])


def write_values(path: cst.BaseExpression, values: cst.BaseExpression, ctx) -> cst.Call:
    ctx.imports_needed.add(("pickle", "pickle"))
    dumped = cst.Call(cst.Attribute(cst.Name("pickle"), cst.Name("dumps")), [cst.Arg(values)])
    return _method(values_file(path, ctx), "write_bytes", dumped)


# -- torch.save({...}, path) ------------------------------------------------------
def load_use(ctx, call: cst.Call) -> str | None:
    """How the result of this (original) torch.load call is used, if it is a dict of entries."""
    return ctx.known_kinds.get(_LOAD_USE + str(id(call)))


def layouts_of(ctx):
    return ctx.facts.get("checkpoint layouts")


def save_dict(call, ctx) -> None:
    """Rewrite the bound torch.save call whose object is a dict (written there, or held by a variable):
    the states become the MindSpore checkpoint, the rest is written next to it by the statement
    (``Checkpoints.leave``)."""
    layouts = layouts_of(ctx)
    site = layouts.save_of(call.source) if layouts is not None else None
    if site is None:
        raise Unconvertible("a checkpoint dict needs literal string keys (no ** unpacking, no computed keys), "
                            "written in the call or assigned just before it")
    if any(kind != STATE for kind in site.layout.values()) and not site.statement:
        raise Unconvertible("torch.save of values other than state dicts must be a statement of its own "
                            "(the values are written to a file next to the checkpoint after it)")
    converted = call.get("obj")
    if isinstance(converted, cst.Dict):
        entries = {_key(e): e.value for e in converted.elements}
    else:
        entries = {key: _subscript(converted, key) for key in site.layout}
    states: list[cst.BaseDictElement] = []
    values: list[cst.DictElement] = []
    for key, kind in site.layout.items():
        value = entries[key]
        if kind == STATE:
            _check_state(value)
            prefixed = cst.BinaryOperation(_prefix(key), cst.Add(), cst.Name("name"))
            states.append(cst.StarredDictElement(cst.DictComp(prefixed, cst.Name("value"), _pairs(_items(value)))))
        else:
            values.append(cst.DictElement(cst.SimpleString(repr(key)), value))
    path = call.get("f")
    if values:
        ctx.facts.setdefault("checkpoint values", {})[id(call.source)] = (path, cst.Dict(values))
    if not states:
        call.result = write_values(path, cst.Dict(values), ctx)
        ctx.facts.get("checkpoint values", {}).pop(id(call.source), None)
        return
    call.set("obj", cst.Dict(states))


def _key(element) -> str:
    return element.key.evaluated_value


def _check_state(value: cst.BaseExpression) -> None:
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and not value.args \
            and value.func.attr.value == "state_dict":
        raise Unconvertible(f"{code_of(value)} has no MindSpore checkpoint form")


# -- checkpoint = torch.load(path) ------------------------------------------------------
class Checkpoints:
    """Plans the loads before the traversal; writes the values file after a save and
    rebuilds the dict after a load as the traversal leaves them."""

    def __init__(self, rewriter):
        self.rewriter = rewriter
        self.ctx = rewriter.ctx
        self.expansions: dict[int, tuple[str, dict[str, str], cst.Call]] = {}
        self.saves: dict[int, cst.Call] = {}  # id(statement) -> its torch.save call

    def plan(self, module: cst.Module) -> None:
        used = set(self.ctx.analysis.references.values())
        if SAVE not in used and LOAD not in used:
            return  # no checkpoints in this file: skip the walk
        layouts = scan(module, self.ctx.analysis)
        self.ctx.facts["checkpoint layouts"] = layouts
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
            if not any(kind == STATE for kind in layout.values()):
                self._use(site.call, VALUES_ONLY)
                continue
            self._use(site.call, COMBINED)
            self.expansions[id(site.statement)] = (site.name[1], layout, site.call)
        for save in layouts.saves:
            if save.statement:
                self.saves[id(save.call)] = save.call
        for ancestors in layouts.copy_ancestors.values():
            self.ctx.analysis.interesting.update(id(s) for s in ancestors)

    def _use(self, call: cst.Call, how: str) -> None:
        self.ctx.known_kinds[_LOAD_USE + str(id(call))] = how

    def leave(self, original: cst.CSTNode, result):
        result = self._after_save(original, result)
        result = self._copy(original, result)
        result = self._check(original, result)
        planned = self.expansions.pop(id(original), None)
        if planned is None or not _loads_checkpoint(result):
            return result
        name, layout, call = planned
        entries: list[cst.BaseDictElement] = []
        for key, kind in layout.items():
            if kind == STATE:
                entries.append(cst.DictElement(cst.SimpleString(repr(key)), _state_entry(name, key)))
        if any(kind != STATE for kind in layout.values()):
            path = self.ctx.facts.get("checkpoint paths", {}).get(id(call))
            entries.append(cst.StarredDictElement(read_values(path, self.ctx)))
        rebuilt = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], cst.Dict(entries))])
        self.ctx.to_format.add(rebuilt)
        self.ctx.converted(original, LOAD, "checkpoint dict rebuilt: states from the MindSpore checkpoint, the other "
                                           "values (with their Python types) from the file next to it")
        return cst.FlattenSentinel([result, rebuilt])

    def _after_save(self, original, result):
        """The values file, written after the statement that saved the checkpoint."""
        if not isinstance(original, cst.SimpleStatementLine) or len(original.body) != 1:
            return result
        small = original.body[0]
        if not isinstance(small, cst.Expr) or id(small.value) not in self.saves:
            return result
        pending = self.ctx.facts.get("checkpoint values", {}).pop(id(small.value), None)
        if pending is None:
            return result
        path, values = pending
        statement = cst.SimpleStatementLine([cst.Expr(write_values(path.deep_clone(), values, self.ctx))])
        self.ctx.to_format.add(statement)
        return cst.FlattenSentinel([result, statement])


    def _copy(self, original, result):
        """``shutil.copyfile(path, best)`` of a saved checkpoint: copy each file MindSpore wrote."""
        layouts = layouts_of(self.ctx)
        if layouts is None or id(original) not in layouts.copies or not isinstance(result, cst.SimpleStatementLine):
            return result
        call = result.body[0].value
        source, target = (a.value for a in call.args)
        pairs = [(checkpoint_file(source), checkpoint_file(target))]
        if layouts.copies[id(original)]:
            pairs.append((values_name(source), values_name(target)))
        statements = []
        for index, (a, b) in enumerate(pairs):
            line = result.with_changes(body=[cst.Expr(call.with_changes(args=[cst.Arg(a), cst.Arg(b)]))])
            if index:
                line = line.with_changes(leading_lines=())
            self.ctx.to_format.add(line)
            statements.append(line)
        self.ctx.converted(original, SAVE, "the checkpoint's files are copied one by one: the MindSpore checkpoint "
                                           "(.ckpt) and the values next to it")
        return cst.FlattenSentinel(statements) if len(statements) > 1 else statements[0]


    def _check(self, original, result):
        """``os.path.isfile(path)`` of a checkpoint torch.load reads: is the MindSpore checkpoint there?"""
        layouts = layouts_of(self.ctx)
        paths = layouts.checks.get(id(original)) if layouts is not None else None
        if not paths or isinstance(result, (cst.FlattenSentinel, cst.RemovalSentinel)):
            return result
        self.ctx.converted(original, LOAD, "the file check looks for the MindSpore checkpoint (.ckpt) of the path")
        return result.visit(_CheckpointChecks(paths))


class _CheckpointChecks(cst.CSTTransformer):
    """The file checks in a statement's own code, not in the blocks it holds: a
    transformer makes every node it visits anew, and the statements of those blocks
    must stay the nodes the rewrite queued for formatting."""

    def __init__(self, paths: set[str]):
        super().__init__()
        self.paths = paths

    def visit_IndentedBlock(self, node) -> bool:
        return False

    def visit_SimpleStatementSuite(self, node) -> bool:
        return False

    def leave_Call(self, original_node, updated_node):
        if len(updated_node.args) == 1 and code_of(updated_node.func) in FILE_CHECKS \
                and code_of(updated_node.args[0].value) in self.paths:
            return updated_node.with_changes(args=[cst.Arg(checkpoint_file(updated_node.args[0].value))])
        return updated_node


def remember_load_path(ctx, call, path: cst.BaseExpression) -> None:
    ctx.facts.setdefault("checkpoint paths", {})[id(call)] = path.deep_clone()


def _loads_checkpoint(statement) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    assign = statement.body[0]
    return (
        isinstance(assign, cst.Assign)
        and isinstance(assign.value, cst.Call)
        and code_of(assign.value.func).endswith("load_checkpoint")
    )


def _state_entry(name: str, key: str) -> cst.BaseExpression:
    flat = cst.Name(name)
    stripped = _method(cst.Name("name"), "removeprefix", _prefix(key))
    condition = _method(cst.Name("name"), "startswith", _prefix(key))
    return cst.DictComp(stripped, cst.Name("value"), _pairs(_items(flat), condition))
