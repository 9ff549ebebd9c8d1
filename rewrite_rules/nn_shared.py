"""Shared pieces of the torch.nn / torch.nn.functional rule modules: argument
specs that recur in many layers, value hooks, and execution-case shorthands.

(No RULES here: the registry imports this module and finds none.)
"""

from __future__ import annotations

import libcst as cst

from rewrite_rules.cases import P, call_cases
from rewrite_rules.helpers import DEVICE, INPLACE
from rewrite_rules.api import Unconvertible, Unsupported

__all__ = ["P", "DEVICE", "INPLACE", "DTYPE", "LOSS_LEGACY", "layer_cases", "fn_cases", "need_dim", "bool_literal"]
# (P, DEVICE and INPLACE are re-exported so rule modules import their shared pieces from one place.)

DTYPE = Unsupported("dtype= on a layer is not supported; cast the input or the parameters instead")

# torch's deprecated loss arguments, superseded by reduction=.
LOSS_LEGACY = {
    "size_average": Unsupported("size_average is deprecated in torch; pass reduction= instead"),
    "reduce": Unsupported("reduce is deprecated in torch; pass reduction= instead"),
}


def layer_cases(ctor: str, params, inputs, *, call: str = "layer(x)", setup: str = "", **kw):
    """Cases constructing ``nn.<ctor>(...)`` and calling it: ``result = layer(x)``.
    ``setup`` runs between construction and call (e.g. ``layer.eval()``)."""
    template = f"layer = nn.{ctor}({{args}})\n{setup}result = {call}"
    return call_cases(template, list(params), inputs, **kw)


def fn_cases(fn: str, params, inputs, **kw):
    """Cases calling ``F.<fn>(...)``."""
    return call_cases(f"result = F.{fn}({{args}})", list(params), inputs, **kw)


def need_dim(name: str = "dim"):
    """torch's implicit softmax dim is a legacy rule; MindSpore uses -1."""

    def hook(call, ctx):
        value = call.get(name)
        if value is None or (isinstance(value, cst.Name) and value.value == "None"):
            raise Unconvertible(
                "dim not given: torch picks a legacy implicit dim, MindSpore uses -1; pass dim explicitly"
            )

    return hook


def bool_literal(call, name: str):
    """(known, value) of a bool argument (torch default when absent)."""
    try:
        return True, call.literal(name)
    except (ValueError, SyntaxError):
        return False, None
