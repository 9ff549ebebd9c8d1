"""``DataLoader(train_set, shuffle=True, **loader_args)``: a ``**`` argument
whose dict the file shows (one binding: ``loader_args = dict(batch_size=...,
num_workers=...)`` or a dict literal with string keys) becomes its keywords,
read from the dict (``batch_size=loader_args["batch_size"]``), so the call's
arguments can be mapped to MindSpore's one by one. Other ``**`` arguments
are left for the rule to mark.
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.engine import keyword_arg
from transpiler.convert.structural.provenance import provenance_of

EXPANDED = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})


def expand_keyword_dicts(qualified: str, original: cst.Call, updated: cst.Call, ctx) -> cst.Call:
    if qualified not in EXPANDED or not any(a.star == "**" for a in original.args):
        return updated
    provenance = provenance_of(ctx)
    if provenance is None:
        return updated
    args: list[cst.Arg] = []
    for before, after in zip(original.args, updated.args):
        if before.star != "**":
            args.append(after)
            continue
        keys = _keys(before.value, provenance)
        if keys is None:
            return updated
        args.extend(keyword_arg(key, _item(after.value, key)) for key in keys)
    args = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in args]
    ctx.converted(original, qualified, "**dict argument expanded into its keywords (the dict is built in this file)")
    return updated.with_changes(args=args)


def _keys(expr: cst.BaseExpression, provenance) -> list[str] | None:
    if not isinstance(expr, cst.Name):
        return None
    values = provenance.values_of(expr)
    if not values or len(values) != 1:
        return None
    value = values[0]
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict":
        if any(a.keyword is None for a in value.args):
            return None
        return [a.keyword.value for a in value.args]
    if isinstance(value, cst.Dict):
        keys = []
        for element in value.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                return None
            keys.append(element.key.evaluated_value)
        return keys
    return None


def _item(owner: cst.BaseExpression, key: str) -> cst.Subscript:
    return cst.Subscript(owner.deep_clone(), [cst.SubscriptElement(cst.Index(cst.SimpleString(f'"{key}"')))])
