"""torch ``state_dict`` -> MindSpore Parameters for the Cell ms-migrate made.

    params = convert_state_dict(torch_state_dict, cell)
    mindspore.load_param_into_net(cell, params, strict_load=True)

The converter walks the Cell tree (containers keep torch's child names:
SequentialCell indices, CellList, CellDict, nested user Cells) and, for each
Cell, reads the weight declarations of the rule that produced its class
(``ApiRule.weights``: renames, layout moves, declared drops). Parameters of
Cells no rule produced (user Cells, buffers made Parameters) keep their torch
names. Every shape is checked. Every torch key that found no place and every
Cell parameter left unfilled is reported by name; nothing is filled silently.
A key naming a plain tensor attribute of the Cell (a non-persistent buffer,
which torch's state dict leaves out and ``load_state_dict`` never loads) is
reported as dropped: the Cell keeps the value its own code computes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from rewrite_rules.spec import ApiRule, WeightMove
from transpiler.proof.layer_rules import rule_for_module, rules_for_cell


NOT_STATE = ("a non-persistent buffer: torch leaves it out of the state dict and never loads it; "
             "the Cell keeps the value its own code computes")


class WeightConversionError(ValueError):
    """The state dict and the Cell do not match; ``report`` says where."""

    def __init__(self, report: "WeightReport"):
        super().__init__("weights do not fit the Cell:\n  " + "\n  ".join(report.problems()))
        self.report = report


@dataclass
class WeightReport:
    placed: dict[str, str] = field(default_factory=dict)  # torch key -> MindSpore parameter name
    moved: dict[str, str] = field(default_factory=dict)  # torch key -> layout change applied
    dropped: dict[str, str] = field(default_factory=dict)  # torch key -> why (declared by a rule, or not state)
    unplaced: dict[str, str] = field(default_factory=dict)  # torch key -> why
    unfilled: dict[str, str] = field(default_factory=dict)  # MindSpore parameter name -> why
    layouts: dict[str, WeightMove] = field(default_factory=dict, repr=False)  # torch key -> move applied
    # torch key -> the Cell's Parameter object: MindSpore may rename parameters
    # later (slicing a CellList re-prefixes them), the object stays
    targets: dict[str, object] = field(default_factory=dict, repr=False)

    def to_mindspore_layout(self, key: str, value: np.ndarray) -> np.ndarray:
        """Apply to ``value`` (e.g. a gradient of torch key ``key``) the layout
        change its weight went through."""
        move = self.layouts.get(key)
        if move is not None and move.insert_axis is not None:
            return np.expand_dims(value, move.insert_axis)
        return value

    @property
    def ok(self) -> bool:
        return not self.unplaced and not self.unfilled

    def problems(self) -> list[str]:
        lines = [f"unplaced torch key {key}: {why}" for key, why in self.unplaced.items()]
        lines += [f"unfilled Cell parameter {name}: {why}" for name, why in self.unfilled.items()]
        return lines

    def summary(self) -> str:
        return (
            f"{len(self.placed)} placed ({len(self.moved)} with a layout change), {len(self.dropped)} dropped "
            f"(by a rule, or not state in torch), {len(self.unplaced)} unplaced, {len(self.unfilled)} unfilled"
        )


def convert_state_dict(source, cell, *, strict: bool = True, rules=None) -> dict:
    """Map ``source`` (a state dict of torch tensors or numpy arrays, or a
    torch Module) onto ``cell``; returns ``{parameter name: mindspore.Parameter}``.

    Raises WeightConversionError listing every problem unless ``strict`` is
    False (then the parameters that did fit are returned; use ``map_weights``
    to get the report as well). ``rules``: the RuleSet that converted the
    model (default: ms-migrate's rules).
    """
    params, report = map_weights(source, cell, rules=rules)
    if strict and not report.ok:
        raise WeightConversionError(report)
    return params


def map_weights(source, cell, *, rules=None) -> tuple[dict, WeightReport]:
    """Like convert_state_dict, but never raises on a mismatch: returns the
    parameters that fit and the full report."""
    values, modules = _read_source(source)
    walk = _Walk(values, modules, rules)
    walk.cell(cell, "")
    walk.finish()
    return walk.params, walk.report


def _read_source(source) -> tuple[dict[str, np.ndarray], dict[str, object]]:
    """(key -> array, module path -> torch module). A Module contributes its
    state dict, as torch saves it."""
    modules: dict[str, object] = {}
    if hasattr(source, "state_dict") and hasattr(source, "named_modules"):
        modules = dict(source.named_modules())
        source = dict(source.state_dict())
    if not isinstance(source, Mapping):
        raise TypeError(f"expected a state dict or a torch Module, got {type(source).__name__}")
    return {key: _to_numpy(value) for key, value in source.items()}, modules


def _to_numpy(value) -> np.ndarray:
    if hasattr(value, "detach"):  # torch tensor
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":
            value = value.float()
        return value.numpy()
    if hasattr(value, "asnumpy"):  # MindSpore tensor
        return value.asnumpy()
    return np.asarray(value)


class _Walk:
    def __init__(self, values: dict[str, np.ndarray], modules: dict[str, object], rules):
        self.rules = rules
        self.values = values
        self.modules = modules
        self.params: dict = {}
        self.report = WeightReport()
        self.used: set[str] = set()
        self.filled: set[str] = set()
        self.all_params: dict[str, str] = {}  # MindSpore name -> expected torch key
        self.cells: dict[str, object] = {}  # path -> Cell

    def cell(self, cell, prefix: str, torch_prefix: str | None = None, inherited=None) -> None:
        """Place the parameters of ``cell`` (MindSpore path ``prefix``) whose
        torch counterpart lives at ``torch_prefix``. A rule's move may reach
        into a sub-Cell (``"linear1.weight" -> "dense1.weight"``, BatchNorm3d's
        ``"weight" -> "bn2d.gamma"``): those moves are handed down to it."""
        torch_prefix = prefix if torch_prefix is None else torch_prefix
        path = prefix[:-1]
        self.cells[path] = cell
        moves = {**self._moves(cell, path, torch_prefix), **(inherited or {})}
        for torch_name, move in moves.items():
            key = torch_prefix + torch_name
            if move.to is None and key in self.values:
                self.report.dropped[key] = move.why or "declared dropped by the rule"
                self.used.add(key)
        back = {move.to: (torch_name, move) for torch_name, move in moves.items() if move.to and "." not in move.to}
        for attr, param in cell._params.items():
            if param is None:
                continue
            torch_name, move = back.get(attr, (attr, WeightMove(attr)))
            self._place(torch_prefix + torch_name, param, move)
        for name, child in cell.name_cells().items():
            child_torch, child_moves = _descend(name, moves)
            self.cell(child, f"{prefix}{name}.", torch_prefix + child_torch, child_moves)

    def _moves(self, cell, path: str, torch_prefix: str) -> dict[str, WeightMove]:
        rule = self._rule(cell, path, torch_prefix)
        return rule.weight_moves if rule is not None else {}

    def _rule(self, cell, path: str, torch_prefix: str) -> ApiRule | None:
        candidates = rules_for_cell(type(cell), self.rules)
        if not candidates:
            return None
        module = self.modules.get(torch_prefix[:-1])
        if module is not None:
            # the torch side says which layer this was
            rule = rule_for_module(type(module), self.rules)
            if rule is not None and rule in candidates:
                return rule
        for rule in candidates:
            expected = [torch_prefix + t for t, m in rule.weight_moves.items() if m.to is not None and m.to in cell._params]
            if all(key in self.values for key in expected):
                return rule
        return candidates[0]

    def _place(self, key: str, param, move: WeightMove) -> None:
        name = param.name
        self.all_params.setdefault(name, key)
        if key not in self.values:
            return  # reported as unfilled in finish()
        value = self.values[key]
        if move.insert_axis is not None:
            value = np.expand_dims(value, move.insert_axis)
            self.report.moved[key] = f"insert axis {move.insert_axis}"
            self.report.layouts[key] = move
        wanted = tuple(param.shape)
        if tuple(value.shape) != wanted:
            self.used.add(key)
            self.report.unplaced[key] = (
                f"shape {tuple(self.values[key].shape)} does not fit {name} {wanted}"
                + (f" (after inserting axis {move.insert_axis})" if move.insert_axis is not None else "")
            )
            return
        import mindspore

        dtype = mindspore.dtype_to_nptype(param.dtype)
        self.params[name] = mindspore.Parameter(
            mindspore.Tensor(np.ascontiguousarray(value.astype(dtype, copy=False))),
            name=name,
            requires_grad=param.requires_grad,
        )
        self.used.add(key)
        self.filled.add(name)
        self.report.placed[key] = name
        self.report.targets[key] = param

    def finish(self) -> None:
        for name, key in self.all_params.items():
            if name not in self.filled:
                why = "shape mismatch (see unplaced)" if key in self.report.unplaced else f"no torch key {key}"
                self.report.unfilled[name] = why
        for key in self.values:
            if key in self.used:
                continue
            if self._is_plain_tensor(key):
                self.report.dropped[key] = NOT_STATE
            else:
                self.report.unplaced[key] = self._why_unplaced(key)

    def _is_plain_tensor(self, key: str) -> bool:
        """``key`` names a tensor attribute of a Cell that is no Parameter
        (a non-persistent buffer, converted to a plain attribute)."""
        import mindspore

        path, _, leaf = key.rpartition(".")
        value = _attribute(self.cells[path], leaf) if path in self.cells else None
        return isinstance(value, mindspore.Tensor) and not isinstance(value, mindspore.Parameter)

    def _why_unplaced(self, key: str) -> str:
        path, _, leaf = key.rpartition(".")
        cell = self.cells.get(path)
        if cell is None:
            parent = path
            while parent and parent not in self.cells:
                parent = parent.rpartition(".")[0]
            attr = path[len(parent) + 1 :].split(".")[0] if parent else path.split(".")[0]
            found = _attribute(self.cells[parent], attr)
            if found is not None:
                kind = f"{type(found).__module__}.{type(found).__name__}"
                return f"{(parent + '.' if parent else '') + attr!r} is a {kind}, not a Cell (the layer was not converted)"
            return f"the Cell has no sub-Cell {path!r}" + (f" (nearest: {parent!r})" if parent else "")
        have = ", ".join(sorted(k for k, v in cell._params.items() if v is not None)) or "none"
        return f"{type(cell).__name__} at {path or '<root>'!r} has no parameter for {leaf!r} (its parameters: {have})"


def _descend(child: str, moves: dict[str, WeightMove]) -> tuple[str, dict[str, WeightMove]]:
    """(torch prefix of sub-Cell ``child``, the moves that reach into it).

    Moves into ``child.`` whose torch names share a first component map the
    child to that torch sub-module (``linear1.weight -> dense1.weight``: child
    dense1 is torch's linear1); otherwise the child's parameters come from the
    parent's own torch parameters (``weight -> bn2d.gamma``)."""
    into = {t: m for t, m in moves.items() if m.to and m.to.startswith(child + ".")}
    if not into:
        return f"{child}.", {}
    heads = {t.split(".", 1)[0] for t in into if "." in t}
    if len(heads) == 1 and all("." in t for t in into):
        head = heads.pop()
        return f"{head}.", {t[len(head) + 1 :]: WeightMove(m.to[len(child) + 1 :], m.insert_axis, m.why)
                            for t, m in into.items()}
    return "", {t: WeightMove(m.to[len(child) + 1 :], m.insert_axis, m.why) for t, m in into.items()}


def _attribute(cell, name: str):
    try:
        return object.__getattribute__(cell, name)
    except AttributeError:
        return cell.__dict__.get(name)
