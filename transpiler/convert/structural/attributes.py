"""Attribute reads of converted objects give torch's values.

Where the file shows what an object is (``provenance``), an attribute read is
mapped the way the object's rule declares (``ApiRule.attributes``, plus the
parameter renames of ``ApiRule.weights``):

    self.fc.in_features              self.fc.in_channels
    emb.embedding_dim                emb.embedding_size
    torch.finfo(x.dtype).max         float(np.finfo(str(x.dtype).lower()).max)
    module.weight (an Embedding)     module.embedding_table
    conv1d.kernel_size               conv1d.kernel_size[1:]
    model.module (DataParallel)      model
    loader.dataset (DataLoader)      train_set (the loader's dataset argument, where
                                     it names the same object), else
                                     loader.children[0].source
    loader.sampler (given sampler=)  loader.children[0].sampler.sampler (hasattr, isinstance,
                                     set_epoch: every read)

Assignments through a renamed attribute follow the rename (weight tying:
``self.wte.weight = self.head.weight``); attributes whose value MindSpore
stores differently can only be read, and attributes it does not keep are
marked. A parameter MindSpore stores with an extra axis (``WeightMove.insert_axis``:
Conv1d's 4-D weight) gets the axis inserted into the value assigned to it
(``conv.weight.data = w`` -> ``conv.weight.data = w.unsqueeze(2)``, also through
``nn.Parameter(w)``). Objects whose origin the file does not show keep their
attributes.
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.codegen import code_for_node
from transpiler.convert.structural.datasets import is_mindspore_dataset
from transpiler.convert.structural.provenance import LAYER, LOADER, TYPE_INFO, WRAPPER, argument, provenance_of, \
    remember_module
from transpiler.convert.walk import LAYOUT_TYPES, StatementVisitor, walk


class Attributes:
    def __init__(self, rewriter):
        self.rewriter = rewriter
        self.ctx = rewriter.ctx
        self.planned: dict[int, tuple[str, object]] = {}  # id(Attribute node) -> (how, data)
        # id(Assign node) -> (axis the parameter's MindSpore layout inserts, API named in reports)
        self.assigned_axes: dict[int, tuple[int, str]] = {}
        self.names = rewriter.rules.attribute_read_names | {"module", "dataset", "sampler"}

    def plan(self, module: cst.Module) -> None:
        analysis = self.ctx.analysis
        if not analysis.cell_classes and not any(q.startswith("torch.") for q in analysis.references.values()):
            return
        finder = _Candidates(self.names)
        walk(module, finder, prune=LAYOUT_TYPES)
        if not finder.found and not finder.assignments:
            return
        remember_module(self.ctx, module)
        provenance = provenance_of(self.ctx, module)
        for assign, parameter, statements in finder.assignments:
            axis = self._inserted_axis(parameter, provenance)
            if axis is not None:
                self.assigned_axes[id(assign)] = axis
                for statement in statements:
                    analysis.interesting.add(id(statement))
        for node, statements, is_target in finder.found:
            decision = self._decide(node, provenance, is_target)
            if decision is None:
                continue
            self.planned[id(node)] = decision
            for statement in statements:
                analysis.interesting.add(id(statement))

    def _decide(self, node: cst.Attribute, provenance, is_target: bool):
        origin = provenance.origin(node.value)
        if origin is None:
            return None
        attr = node.attr.value
        if origin.kind == WRAPPER and attr == "module":
            return ("unwrap", None)
        if origin.kind == LOADER and attr == "dataset" and origin.call is not None:
            source = argument(origin.call, 0, "dataset")
            named = _same_object(provenance, source, origin.call, node) if source is not None else None
            if named is not None:
                return ("named", named)
            pipeline = source is not None and is_mindspore_dataset(self.ctx, source)
            return ("dataset", pipeline)
        if origin.kind == LOADER and attr == "sampler" and origin.call is not None and not is_target \
                and argument(origin.call, 3, "sampler") is not None:  # the loader was given a sampler
            return ("sampler", None)
        if origin.kind not in (LAYER, TYPE_INFO):
            return None
        rule = self.rewriter.rules.calls.get(origin.qualified)
        if rule is None or attr not in rule.attribute_reads:
            return None
        read = rule.attribute_reads[attr]
        for other in origin.alternatives:  # isinstance(m, (A, B)): only a read every one of them maps alike
            other_rule = self.rewriter.rules.calls.get(other)
            if other_rule is None or other_rule.attribute_reads.get(attr) != read:
                return None
        if isinstance(read, str):
            return ("rename", (read, origin.qualified))
        if read.template is None or is_target or read.reason:  # a template with a reason serves subclasses only
            reason = read.reason or "MindSpore stores this value differently: it can be read, not assigned"
            return ("mark", (f"{origin.qualified}.{attr}", reason))
        return ("template", (read, origin.qualified))

    def _inserted_axis(self, parameter: cst.Attribute, provenance) -> tuple[int, str] | None:
        """(axis, API) when ``parameter`` (``layer.weight``) is a parameter its layer's
        MindSpore Cell stores with an extra axis."""
        origin = provenance.origin(parameter.value)
        if origin is None or origin.kind != LAYER:
            return None
        axes = set()
        for qualified in (origin.qualified, *origin.alternatives):
            rule = self.rewriter.rules.calls.get(qualified)
            move = rule.weight_moves.get(parameter.attr.value) if rule is not None else None
            axes.add(move.insert_axis if move is not None else None)
        axis = axes.pop() if len(axes) == 1 else None
        return None if axis is None else (axis, f"{origin.qualified}.{parameter.attr.value}")

    def rewrite_assignment(self, original: cst.Assign, updated: cst.Assign) -> cst.Assign:
        """``layer.weight.data = w`` with the axis MindSpore's layout inserts put into ``w``."""
        planned = self.assigned_axes.get(id(original))
        if planned is None:
            return updated
        axis, api = planned
        value = updated.value
        parameter = self.ctx.analysis.qualified(original.value.func) if isinstance(original.value, cst.Call) else None
        if parameter in ("torch.nn.Parameter", "torch.nn.parameter.Parameter") and isinstance(value, cst.Call) \
                and value.args and value.args[0].keyword is None:  # nn.Parameter(w): the axis goes into w
            first = value.args[0]
            value = value.with_changes(args=[first.with_changes(value=_unsqueezed(first.value, axis)), *value.args[1:]])
        else:
            value = _unsqueezed(value, axis)
        self._report(original, api, f"the value assigned gets axis {axis} (MindSpore stores this parameter with "
                                    f"an extra length-1 axis)")
        return updated.with_changes(value=value)

    def rewrite(self, original: cst.Attribute, updated: cst.Attribute):
        """The MindSpore form of an attribute read (or None: not one of ours)."""
        planned = self.planned.get(id(original))
        if planned is None:
            return None
        how, data = planned
        attr = original.attr.value
        if how == "unwrap":
            self._report(original, "torch.nn.DataParallel.module", "model.module -> model (no wrapper in MindSpore)")
            return updated.value
        if how == "named":
            self._report(original, "torch.utils.data.DataLoader.dataset",
                         f"loader.dataset -> {code_for_node(data)} (the dataset the loader was made from)")
            return data
        if how == "dataset":
            first = _first_child(updated.value)
            self._report(original, "torch.utils.data.DataLoader.dataset",
                         "loader.dataset -> the dataset under the batching step")
            return first if data else cst.Attribute(first, cst.Name("source"))
        if how == "sampler":
            first = _first_child(updated.value)
            self._report(original, "torch.utils.data.DataLoader.sampler",
                         "loader.sampler -> loader.children[0].sampler.sampler: the sampler given to the "
                         "GeneratorDataset under the batching step")
            return cst.Attribute(cst.Attribute(first, cst.Name("sampler")), cst.Name("sampler"))
        if how == "mark":
            api, reason = data
            self.rewriter.mark(original, api, reason)
            return updated
        if how == "rename":
            target, qualified = data
            self._report(original, f"{qualified}.{attr}", f"{qualified}.{attr} -> .{target}")
            result = updated.value
            for part in target.split("."):
                result = cst.Attribute(result, cst.Name(part))
            return result
        read, qualified = data
        self._report(original, f"{qualified}.{attr}", f"{qualified}.{attr} -> {read.template}")
        cell = code_for_node(updated.value)
        return cst.parse_expression(read.template.format(cell=f"({cell})" if _needs_parentheses(updated.value)
                                                         else cell))

    def _report(self, node, api: str, message: str) -> None:
        self.rewriter.changed()
        self.ctx.converted(node, api, message)


def _first_child(loader: cst.BaseExpression) -> cst.Subscript:
    """``loader.children[0]``: the dataset under a converted loader's batching step."""
    first = cst.SubscriptElement(cst.Index(cst.Integer("0")))
    return cst.Subscript(cst.Attribute(loader, cst.Name("children")), [first])


def _same_object(provenance, source: cst.BaseExpression, call: cst.Call, use: cst.Attribute):
    """``source`` (the DataLoader's dataset as written) spelled where ``use`` reads ``loader.dataset``,
    when it surely names the same object there (or None): a name bound once in the loader's scope,
    read in that scope or, for a module-level name, in a function that does not bind it; or
    ``self.attr`` set once in the class, read in another method of that class."""
    made, used = provenance.scope_of(call), provenance.scope_of(use)
    if made is None or used is None:
        return None
    if isinstance(source, cst.Name):
        if len(made.bindings.get(source.value, ())) != 1:
            return None
        if used is made:
            return cst.Name(source.value)
        if made.kind != "module":
            return None
        scope = used  # a function of the module whose scopes (up to the module) leave the name global
        while scope is not None and scope is not made:
            if source.value in scope.bindings:
                return None
            scope = scope.parent
        return cst.Name(source.value) if scope is made else None
    if (isinstance(source, cst.Attribute) and isinstance(source.value, cst.Name)
            and made.class_name is not None and made.class_name == used.class_name
            and made.self_name == source.value.value and used.self_name is not None
            and len(provenance.class_attrs.get((made.class_name, source.attr.value), ())) == 1):
        return cst.Attribute(cst.Name(used.self_name), cst.Name(source.attr.value))
    return None


def _unsqueezed(value: cst.BaseExpression, axis: int) -> cst.Call:
    if _needs_parentheses(value) or isinstance(value, (cst.Integer, cst.Float)):
        value = value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return cst.Call(cst.Attribute(value, cst.Name("unsqueeze")), [cst.Arg(cst.Integer(str(axis)))])


def _needs_parentheses(expr: cst.BaseExpression) -> bool:
    return not isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript))


class _Candidates(StatementVisitor):
    """Attribute nodes whose attribute name some rule maps, with their enclosing statements."""

    def __init__(self, names: frozenset[str]):
        super().__init__()
        self.names = names
        self.found: list[tuple[cst.Attribute, tuple, bool]] = []
        # (Assign, layer.weight, statements) for ``layer.weight = ...`` and ``layer.weight.data = ...``
        self.assignments: list[tuple[cst.Assign, cst.Attribute, tuple]] = []
        self._targets: set[int] = set()

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1:
            return
        target = node.targets[0].target
        if isinstance(target, cst.Attribute) and target.attr.value == "data" and isinstance(target.value, cst.Attribute):
            target = target.value
        if isinstance(target, cst.Attribute):
            self.assignments.append((node, target, tuple(self.statements)))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._targets.add(id(node.target))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in self.names:
            self.found.append((node, tuple(self.statements), id(node) in self._targets))

