"""File patterns that look for the checkpoints the script saves.

``mindspore.save_checkpoint`` appends ``.ckpt`` to a file name without it
(MindSpore 2.10 checks the suffix again when it loads), so a script that saves
``'{}.pkl'.format(epoch)`` and later lists its checkpoints to keep the best one
would find none after conversion: pyGAT's ``train.py`` globs ``*.pkl`` to delete
every epoch but the best, and converted it left all of them on disk. Where the
file saves checkpoints under names ending in a literal suffix, a glob pattern
ending in that suffix follows MindSpore's name::

    torch.save(model.state_dict(), '{}.pkl'.format(epoch))   mindspore.save_checkpoint(model, "{}.pkl".format(epoch))
    files = glob.glob('*.pkl')                          ->   files = glob.glob('*.pkl.ckpt')

``glob.glob``, ``glob.iglob``, ``glob`` imported from the glob module and a path's
``.glob`` / ``.rglob``; the pattern's literal tail (a string, ``"...".format()``, an
f-string, ``a + "..."``, ``os.path.join(..., "...")``) is what is compared. Run
on the converted module, after the rules: the saves are MindSpore's by then.
"""

from __future__ import annotations

import os

import libcst as cst

from transpiler.convert.engine import code_of
from transpiler.convert.structural.checkpoints import literal_tail, literal_text, with_checkpoint_suffix
from transpiler.convert.structural.provenance import argument

_SAVE = "save_checkpoint"
_SUFFIX = ".ckpt"  # what mindspore.save_checkpoint appends
_GLOBS = frozenset({"glob.glob", "glob.iglob", "glob"})
_PATH_GLOBS = frozenset({"glob", "rglob"})


def _suffix(path: cst.BaseExpression) -> str:
    literal = literal_tail(path)
    if literal is None:
        return ""
    suffix = os.path.splitext(literal_text(literal))[1]
    return "" if suffix in ("", _SUFFIX) else suffix


class _Calls(cst.CSTVisitor):
    def __init__(self):
        self.suffixes: set[str] = set()
        self.globs: list[tuple[cst.Call, cst.BaseExpression]] = []  # the call, the literal its pattern ends with

    def visit_Call(self, node: cst.Call) -> None:
        name = code_of(node.func)
        if name.rsplit(".", 1)[-1] == _SAVE:
            path = argument(node, 1, "ckpt_file_name")
            if path is not None and (suffix := _suffix(path)):
                self.suffixes.add(suffix)
            return
        if name in _GLOBS or (isinstance(node.func, cst.Attribute) and node.func.attr.value in _PATH_GLOBS):
            pattern = argument(node, 0, "pathname" if name in _GLOBS else "pattern")
            literal = literal_tail(pattern) if pattern is not None else None
            if literal is not None:
                self.globs.append((node, literal))


class _AppendSuffix(cst.CSTTransformer):
    def __init__(self, literals: set[int]):
        super().__init__()
        self.literals = literals

    def leave_SimpleString(self, original_node, updated_node):
        return with_checkpoint_suffix(updated_node) if id(original_node) in self.literals else updated_node

    def leave_FormattedString(self, original_node, updated_node):
        return with_checkpoint_suffix(updated_node) if id(original_node) in self.literals else updated_node


def follow_checkpoint_globs(module: cst.Module, ctx) -> cst.Module:
    """Glob patterns for the suffix of the file's saved checkpoints look for MindSpore's ``.ckpt`` files."""
    calls = _Calls()
    module.visit(calls)
    if not calls.suffixes:
        return module
    literals = set()
    for call, literal in calls.globs:
        text = literal_text(literal)
        suffix = next((s for s in calls.suffixes if text.endswith(s)), None)
        if suffix is None:
            continue
        literals.add(id(literal))
        ctx.converted(call, "glob", f'the pattern looks for the checkpoints mindspore.save_checkpoint wrote: it '
                                    f'appends ".ckpt" to a name ending in "{suffix}"')
    return module.visit(_AppendSuffix(literals)) if literals else module
