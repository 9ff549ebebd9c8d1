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

What torch shares is placed once: a key holding the same tensor as another
(a module reachable under two names, tied weights) is dropped with the name
of the key that was placed. A Cell parameter torch has no tensor for because
the layer was built without it (``InstanceNorm2d(affine=False)``, which
becomes a GroupNorm holding fixed, untrained ones and zeros; BatchNorm with
``track_running_stats=False``, whose moving statistics MindSpore keeps but
never reads) is kept at the Cell's own value and listed. Parameters that MindSpore named alike (created
after their Cell was attached: ``self.fc.weight = Parameter(...)`` in a
parent, ``m.bias = Parameter(...)`` in an ``apply`` function) are renamed to
their paths first, or ``load_param_into_net`` could not tell them apart.
A value that cannot be read as an array is named with its reason; no problem
with the weights raises anything but WeightConversionError.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from rewrite_rules.spec import ApiRule, WeightMove
from transpiler.proof.layer_rules import rule_for_module, rules_for_cell


_NO_RULE = ApiRule("", None)

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
    dropped: dict[str, str] = field(default_factory=dict)  # torch key -> why (declared by a rule, shared, not state)
    unplaced: dict[str, str] = field(default_factory=dict)  # torch key -> why
    unfilled: dict[str, str] = field(default_factory=dict)  # MindSpore parameter name -> why
    kept: dict[str, str] = field(default_factory=dict)  # MindSpore parameter name -> why its own value stays
    renamed: dict[str, str] = field(default_factory=dict)  # MindSpore parameter name -> the name it had
    untied: dict[str, str] = field(default_factory=dict)  # torch key -> the key whose tensor it shares in torch
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

    def notes(self) -> list[str]:
        """What was done that is no problem but worth knowing."""
        lines = [f"kept Cell parameter {name}: {why}" for name, why in self.kept.items()]
        lines += [f"renamed Cell parameter {old!r} -> {new!r}: MindSpore gave another parameter the same name"
                  for new, old in self.renamed.items()]
        lines += [f"torch key {key} shares its tensor with {other} in torch; the Cell holds two Parameters "
                  "(equal now, trained apart)" for key, other in self.untied.items()]
        return lines

    def summary(self) -> str:
        return (
            f"{len(self.placed)} placed ({len(self.moved)} with a layout change), {len(self.dropped)} dropped "
            f"(by a rule, shared, or not state in torch), {len(self.unplaced)} unplaced, "
            f"{len(self.unfilled)} unfilled" + (f", {len(self.kept)} kept" if self.kept else "")
            + (f", {len(self.renamed)} renamed" if self.renamed else "")
        )


def convert_state_dict(source, cell, *, strict: bool = True, rules=None) -> dict:
    """Map ``source`` (a state dict of torch tensors or numpy arrays, or a
    torch Module) onto ``cell``; returns ``{parameter name: mindspore.Parameter}``.

    Raises WeightConversionError listing every problem unless ``strict`` is
    False (then the parameters that did fit are returned; use ``map_weights``
    to get the report as well). ``rules``: the RuleSet that converted the
    model (default: ms-migrate's rules). Parameters of ``cell`` that MindSpore
    named alike are renamed to their paths (``WeightReport.renamed``).
    """
    params, report = map_weights(source, cell, rules=rules)
    if strict and not report.ok:
        raise WeightConversionError(report)
    return params


def map_weights(source, cell, *, rules=None) -> tuple[dict, WeightReport]:
    """Like convert_state_dict, but never raises on a mismatch: returns the
    parameters that fit and the full report."""
    if not (hasattr(cell, "parameters_and_names") and hasattr(cell, "name_cells")):
        raise TypeError(f"expected the converted mindspore.nn.Cell, got {type(cell).__module__}.{type(cell).__name__}")
    values, modules, shared, unreadable = _read_source(source)
    walk = _Walk(values, modules, shared, rules)
    walk.report.unplaced.update(unreadable)
    walk.unique_names(cell)
    walk.cell(cell, "")
    walk.finish()
    return walk.params, walk.report


def _read_source(source):
    """(key -> array, module path -> torch module, key -> the earlier key
    holding the same tensor, key -> why it is no array). A Module
    contributes its state dict, as torch saves it."""
    modules: dict[str, object] = {}
    if hasattr(source, "state_dict") and hasattr(source, "named_modules"):
        try:  # a module reachable under two names is in the state dict under both
            modules = dict(source.named_modules(remove_duplicate=False))
        except TypeError:
            modules = dict(source.named_modules())
        source = dict(source.state_dict())
    if not isinstance(source, Mapping):
        raise TypeError(f"expected a state dict or a torch Module, got {type(source).__name__}")
    values: dict[str, np.ndarray] = {}
    unreadable: dict[str, str] = {}
    shared: dict[str, str] = {}
    first: dict[tuple, str] = {}
    for key, value in source.items():
        key = str(key)
        try:
            values[key] = _to_numpy(value)
        except Exception as exc:  # a meta tensor, an _extra_state object, a quantized tensor ...
            unreadable[key] = f"cannot be read as an array ({type(value).__name__}: {exc})"
            continue
        identity = _identity(value)
        if identity is not None:
            shared[key] = first.setdefault(identity, key)
            if shared[key] == key:
                del shared[key]
    return values, modules, shared, unreadable


def _identity(value) -> tuple | None:
    """Where a tensor's values live (two keys alike hold one tensor), or None."""
    try:
        if hasattr(value, "untyped_storage"):  # torch
            if value.numel() == 0 or value.device.type == "meta":
                return None
            return (value.untyped_storage().data_ptr(), value.storage_offset(), tuple(value.shape),
                    tuple(value.stride()), str(value.dtype))
        if isinstance(value, np.ndarray) and value.size:
            return (value.__array_interface__["data"][0], value.shape, value.strides, value.dtype.str)
    except Exception:
        return None
    return None


def _to_numpy(value) -> np.ndarray:
    if hasattr(value, "detach"):  # torch tensor
        value = value.detach().cpu()
        if value.dtype.is_floating_point and value.element_size() < 4 and str(value.dtype) != "torch.float16":
            value = value.float()  # bfloat16, float8: NumPy has no such type
        return value.numpy()
    if hasattr(value, "asnumpy"):  # MindSpore tensor
        return value.asnumpy()
    if isinstance(value, (np.ndarray, np.generic, int, float, bool)):
        return np.asarray(value)
    raise TypeError("not a tensor or an array")


class _Walk:
    def __init__(self, values: dict[str, np.ndarray], modules: dict[str, object], shared: dict[str, str], rules):
        self.rules = rules
        self.values = values
        self.modules = modules
        self.shared = shared  # torch key -> the first key holding the same tensor
        self.params: dict = {}
        self.report = WeightReport()
        self.used: set[str] = set()
        self.filled: dict[str, str] = {}  # MindSpore name -> the torch key that filled it
        self.all_params: dict[str, str] = {}  # MindSpore name -> expected torch key
        self.missing: dict[str, tuple] = {}  # MindSpore name -> (Parameter, torch key, Cell, torch leaf, rule)
        self.cells: dict[str, object] = {}  # path -> Cell

    def unique_names(self, cell) -> None:
        """MindSpore names a Parameter when its Cell is attached to a parent; one
        made later (``self.fc.weight = Parameter(...)`` in the parent) keeps its
        bare name, which another may share: ``load_param_into_net`` matches by
        name and cannot tell them apart (it fails with ``list.remove(x): x not
        in list``). Then every parameter whose name is not its path gets its path."""
        by_name: dict[str, set[int]] = {}
        paths = list(cell.parameters_and_names())
        for _, param in paths:
            by_name.setdefault(param.name, set()).add(id(param))
        if all(len(ids) == 1 for ids in by_name.values()):
            return
        for path, param in paths:
            if param.name != path:
                old = param.name
                try:
                    param.name = path
                except (TypeError, ValueError):
                    continue  # left as it is: the names it shares are reported unfilled
                self.report.renamed[path] = old

    def cell(self, cell, prefix: str, torch_prefix: str | None = None, inherited=None) -> None:
        """Place the parameters of ``cell`` (MindSpore path ``prefix``) whose
        torch counterpart lives at ``torch_prefix``. A rule's move may reach
        into a sub-Cell (``"linear1.weight" -> "dense1.weight"``, BatchNorm3d's
        ``"weight" -> "bn2d.gamma"``): those moves are handed down to it."""
        torch_prefix = prefix if torch_prefix is None else torch_prefix
        path = prefix[:-1]
        self.cells[path] = cell
        rule = self._rule(cell, path, torch_prefix)
        moves = {**(rule.weight_moves if rule is not None else {}), **(inherited or {})}
        for torch_name, move in moves.items():
            key = torch_prefix + torch_name
            if move.to is None and key in self.values:
                self.report.dropped[key] = move.why or "declared dropped by the rule"
                self.used.add(key)
        back = {move.to: (torch_name, move) for torch_name, move in moves.items() if move.to and "." not in move.to}
        for attr, param in cell._params.items():
            if param is None:
                continue
            torch_name, move = (back.get(attr) or self._weight_norm_part(attr, back, torch_prefix)
                                or (attr, WeightMove(attr)))
            self._place(torch_prefix + torch_name, param, move, (cell, torch_prefix, torch_name, rule))
        for name, child in cell.name_cells().items():
            child_torch, child_moves = _descend(name, moves)
            self.cell(child, f"{prefix}{name}.", torch_prefix + child_torch, child_moves)

    def _weight_norm_part(self, attr: str, back: dict, torch_prefix: str) -> tuple[str, WeightMove] | None:
        """A parameter under weight_norm (``weight_g`` / ``weight_v`` in the Cell): torch keeps it as
        ``weight_g`` / ``weight_v`` (torch.nn.utils.weight_norm) or ``parametrizations.weight.original0`` /
        ``original1`` (torch.nn.utils.parametrizations.weight_norm), in the layout of the parameter itself."""
        base, _, part = attr.rpartition("_")
        if part not in ("g", "v") or not base:
            return None
        torch_base, move = back.get(base, (base, WeightMove(base)))
        torch_name = f"{torch_base}_{part}"
        if torch_prefix + torch_name not in self.values:
            parametrized = f"parametrizations.{torch_base}.original{0 if part == 'g' else 1}"
            if torch_prefix + parametrized not in self.values:
                return None
            torch_name = parametrized
        return torch_name, WeightMove(attr, move.insert_axis)

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

    def _place(self, key: str, param, move: WeightMove, where: tuple) -> None:
        name = param.name
        self.all_params.setdefault(name, key)
        if key not in self.values:
            cell, torch_prefix, torch_name, rule = where
            self.missing.setdefault(name, (param, key, cell, torch_prefix, torch_name, rule))
            return  # reported as unfilled (or kept) in finish()
        value = self.values[key]
        if move.insert_axis is not None:
            value = np.expand_dims(value, move.insert_axis)
            self.report.moved[key] = f"insert axis {move.insert_axis}"
            self.report.layouts[key] = move
        wanted = tuple(param.shape)
        self.used.add(key)
        if tuple(value.shape) != wanted:
            self.report.unplaced[key] = (
                f"shape {tuple(self.values[key].shape)} does not fit {name} {wanted}"
                + (f" (after inserting axis {move.insert_axis})" if move.insert_axis is not None else "")
            )
            return
        earlier = self.filled.get(name)
        if earlier is not None and earlier != key:
            # one MindSpore Parameter reached under two paths (tied in the converted model)
            if not np.array_equal(self.values[earlier], self.values[key]) and self.shared.get(key) != earlier:
                self.report.unplaced[key] = (f"fills {name} as {earlier} does, with other values: the converted "
                                             "model ties what torch keeps apart")
                return
            self.report.placed[key] = name
            self.report.targets[key] = param
            return
        try:
            self.params[name] = _parameter(value, param, name)
        except Exception as exc:  # a dtype MindSpore cannot hold ...
            self.report.unplaced[key] = f"cannot become {name} ({param.dtype}): {type(exc).__name__}: {exc}"
            return
        self.filled[name] = key
        self.report.placed[key] = name
        self.report.targets[key] = param

    def finish(self) -> None:
        for name, key in self.all_params.items():
            if name in self.filled:
                continue
            fixed = self._fixed(name) if name in self.missing else None
            if fixed is not None:
                self.report.kept[name] = fixed
                continue
            problem = self.report.unplaced.get(key)
            if problem is None:
                why = f"no torch key {key}"
            else:
                why = "shape mismatch (see unplaced)" if problem.startswith("shape ") else f"{key} is unplaced: {problem}"
            self.report.unfilled[name] = why
        placed_at = {key: self.report.targets.get(key) for key in self.report.placed}
        for key in self.values:
            original = self.shared.get(key)
            if key in self.used:
                if original in placed_at and key in placed_at and placed_at[original] is not placed_at[key]:
                    self.report.untied[key] = original
                continue
            if original is not None and original in self.used:
                self.report.dropped[key] = (f"the same tensor as {original} (a module or weight torch shares "
                                            "under two names), placed from there")
            elif self._is_plain_tensor(key):
                self.report.dropped[key] = NOT_STATE
            else:
                self.report.unplaced[key] = self._why_unplaced(key)

    def _fixed(self, name: str) -> str | None:
        """Why the Cell parameter ``name``, which no torch key fills, keeps its
        own value (the torch layer was built without it: ``affine=False``,
        ``track_running_stats=False``), or None."""
        param, key, cell, torch_prefix, torch_name, rule = self.missing[name]
        if rule is None or param.requires_grad or "." in torch_name:
            return None
        module = self.modules.get(torch_prefix[:-1])
        if module is not None:
            registered = {**getattr(module, "_parameters", {}), **getattr(module, "_buffers", {})}
            if torch_name not in registered or registered[torch_name] is not None:
                return None  # torch has this tensor: its key is missing
            kind = type(module).__name__
        elif torch_name in ("weight", "bias") and self._without_affine(cell, torch_prefix):
            kind = rule.torch.rsplit(".", 1)[-1]
        elif torch_name in ("running_mean", "running_var") and getattr(cell, "use_batch_statistics", None) is True:
            kind = rule.torch.rsplit(".", 1)[-1]
        else:
            return None
        try:
            self.params[name] = _parameter(param.asnumpy(), param, name)
        except Exception:
            return None
        built = "track_running_stats=False" if torch_name.startswith("running_") else "affine=False"
        return (f"torch's {kind} at {torch_prefix[:-1] or '<root>'!r} has no {torch_name!r} (built with "
                f"{built}); the Cell's own value is kept, which it does not train" +
                (" nor read" if built.startswith("track") else ""))

    def _without_affine(self, cell, torch_prefix: str) -> bool:
        """The layer was built with ``affine=False`` (no torch module to ask): the
        Cell says so, or holds its scale and shift untrained and torch has neither."""
        affine = getattr(cell, "affine", None)
        if affine is not None:
            return affine is False
        moves = {m.to: t for t, m in (self._rule(cell, "", torch_prefix) or _NO_RULE).weight_moves.items()}
        pair = [(attr, moves.get(attr, attr)) for attr in ("gamma", "beta") if attr in cell._params]
        return len(pair) == 2 and all(not cell._params[attr].requires_grad and torch_prefix + torch_name not in self.values
                                      for attr, torch_name in pair)

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
            found = _attribute(self.cells[parent], attr) if parent in self.cells else None
            if found is not None:
                kind = f"{type(found).__module__}.{type(found).__name__}"
                return f"{(parent + '.' if parent else '') + attr!r} is a {kind}, not a Cell (the layer was not converted)"
            return f"the Cell has no sub-Cell {path!r}" + (f" (nearest: {parent!r})" if parent else "")
        have = ", ".join(sorted(k for k, v in cell._params.items() if v is not None)) or "none"
        why = f"{type(cell).__name__} at {path or '<root>'!r} has no parameter for {leaf!r} (its parameters: {have})"
        module = self.modules.get(path)
        if leaf in ("running_mean", "running_var") and (
                (module is not None and "InstanceNorm" in type(module).__name__) or
                (module is None and type(cell).__name__ == "GroupNorm")):
            why += ("; an InstanceNorm saved before torch 0.4 kept running statistics it no longer tracks "
                    "(torch's load_state_dict refuses them too): remove these keys")
        return why


def _parameter(value: np.ndarray, param, name: str):
    """A Parameter holding ``value`` in ``param``'s dtype."""
    import mindspore

    # not np.ascontiguousarray: it makes a 0-d value (a scalar buffer) 1-d
    tensor = mindspore.Tensor(np.require(value, requirements="C"))
    if tensor.dtype != param.dtype:
        tensor = tensor.astype(param.dtype)
    return mindspore.Parameter(tensor, name=name, requires_grad=param.requires_grad)


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
