"""Dynamic-shape sources: results whose shape depends on tensor values, and
Python control flow on tensor values inside ``forward``. MindSpore compiles
``construct`` to a static graph (GRAPH_MODE / ``mindspore.jit``); these are the
constructs that make shapes unknown at compile time or the graph branchy."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from transpiler.analyze.facts import Site, argument, method_name
from transpiler.analyze.findings import CheckContext, Checker
from transpiler.analyze.tensor_values import FORWARD_NAMES

_DYNAMIC_FUNCTIONS = {"torch.masked_select", "torch.nonzero", "torch.unique", "torch.unique_consecutive",
                      "torch.argwhere", "torch.Tensor.masked_select", "torch.Tensor.nonzero"}
_DYNAMIC_METHODS = {"masked_select", "nonzero", "unique", "unique_consecutive", "argwhere"}
_BOOL_FUNCTIONS = {"torch.isnan", "torch.isinf", "torch.isfinite", "torch.logical_and", "torch.logical_or",
                   "torch.logical_not", "torch.logical_xor", "torch.eq", "torch.ne", "torch.gt", "torch.ge",
                   "torch.lt", "torch.le", "torch.isin", "torch.bernoulli"}
_BOOL_METHODS = {"bool", "isnan", "isinf", "isfinite", "logical_and", "logical_or", "logical_not", "eq", "ne",
                 "gt", "ge", "lt", "le"}
_ORDER = (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)
_SHAPE_FUNCTIONS = {"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.reshape",
                    "torch.flatten", "torch.squeeze", "torch.unsqueeze", "torch.narrow", "torch.split",
                    "torch.chunk", "torch.tile", "torch.repeat_interleave", "torch.masked_select",
                    "torch.nonzero", "torch.unique", "torch.nn.functional.pad", "torch.nn.functional.interpolate"}
_SHAPE_METHODS = {"view", "reshape", "flatten", "squeeze", "unsqueeze", "expand", "repeat", "narrow", "split",
                  "chunk", "tile", "repeat_interleave", "masked_select", "nonzero", "unique"}

_GRAPH = ("MindSpore compiles construct() into a static graph (GRAPH_MODE or mindspore.jit); ")


class DynamicShapeOp(Checker):
    kind = "dynamic-shape-op"
    family = "dynamic shapes"
    why = _GRAPH + "the output shape of this op depends on tensor values, so every batch can recompile " \
        "the graph or fail; on Ascend dynamic shapes are slow or unsupported."
    fix = "Keep shapes fixed: use a fixed maximum size plus a mask (e.g. ops.masked_fill / ops.select instead of " \
        "masked_select, a padded index list instead of nonzero/unique), or do this step outside construct()."
    triggers = (
        "x = torch.randn(4)\nidx = torch.nonzero(x > 0)",
        "x = torch.randn(4)\ny = x.masked_select(x > 0)",
        "labels = torch.tensor([1, 2, 2])\nu = torch.unique(labels)",
        "x = torch.randn(4)\ni = torch.where(x > 0)",
    )
    passes = (
        "x = torch.randn(4)\ny = torch.where(x > 0, x, torch.zeros_like(x))",
        "import numpy as np\nu = np.unique([1, 2, 2])",
        "x = torch.randn(4)\ny = x.masked_fill(x > 0, 0.0)",
    )

    def check(self, ctx: CheckContext) -> Iterator[Site]:
        for site, qualified in ctx.torch_calls():
            if qualified in _DYNAMIC_FUNCTIONS:
                yield site
            elif qualified == "torch.where" and len(site.node.args) == 1:
                yield site
        for site, _ in ctx.method_calls(_DYNAMIC_METHODS):
            yield site


def _bool_mask(expr: cst.CSTNode, site: Site, ctx: CheckContext, mask_names: set[str]) -> bool:
    """An expression that yields a boolean tensor."""
    if isinstance(expr, cst.Name):
        return expr.value in mask_names
    if isinstance(expr, cst.Comparison):
        return all(isinstance(t.operator, _ORDER) for t in expr.comparisons) and ctx.tensor_valued(expr, site)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.BitInvert):
        return _bool_mask(expr.expression, site, ctx, mask_names)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
        return _bool_mask(expr.left, site, ctx, mask_names) or _bool_mask(expr.right, site, ctx, mask_names)
    if isinstance(expr, cst.Call):
        qualified = ctx.facts.callee(expr)
        if qualified is not None:
            return qualified in _BOOL_FUNCTIONS
        return method_name(expr) in _BOOL_METHODS and ctx.tensor_valued(expr.func.value, site)
    return False


def _mask_names(ctx: CheckContext, function) -> set[str]:
    names: set[str] = set()
    for _ in range(2):
        for assign in ctx.facts.assigns:
            node = assign.node
            if assign.function is not function or node.value is None:
                continue
            if _bool_mask(node.value, assign, ctx, names):
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                names.update(t.value for t in targets if isinstance(t, cst.Name))
    return names


def _assigned_subscripts(ctx: CheckContext) -> set[int]:
    """``x[mask] = v`` is a static-shape masked fill, not a dynamic read."""
    targets: set[int] = set()
    for assign in ctx.facts.assigns:
        node = assign.node
        for target in [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]:
            if isinstance(target, cst.Subscript):
                targets.add(id(target))
    return targets


class BooleanMaskIndex(Checker):
    kind = "boolean-mask-index"
    family = "dynamic shapes"
    why = _GRAPH + "indexing with a boolean mask returns as many elements as the mask has True values, " \
        "a shape known only at run time."
    fix = "Keep the full shape and zero out or ignore the masked elements: ops.select(mask, x, zeros) / " \
        "ops.masked_fill, and carry the mask into the loss (e.g. a weighted mean)."
    triggers = (
        "x = torch.randn(4)\ny = x[x > 0]",
        "x = torch.randn(4)\nmask = x > 0\ny = x[mask]",
        "class M(nn.Module):\n    def forward(self, x):\n        return x[~torch.isnan(x)]",
    )
    passes = (
        "x = torch.randn(4)\nx[x > 0] = 0",
        "x = torch.randn(4, 3)\ny = x[0]\nz = x[:, 1:]",
        "items = [1, 2]\ni = 1\ny = items[i > 0]",
    )

    def check(self, ctx: CheckContext) -> Iterator[Site]:
        assigned = _assigned_subscripts(ctx)
        masks: dict[int, set[str]] = {}
        for site in ctx.facts.subscripts:
            if id(site.node) in assigned:
                continue
            if id(site.function) not in masks:
                masks[id(site.function)] = _mask_names(ctx, site.function)
            names = masks[id(site.function)]
            for element in site.node.slice:
                if isinstance(element.slice, cst.Index) and _bool_mask(element.slice.value, site, ctx, names):
                    yield site
                    break


class TensorSliceBound(Checker):
    kind = "tensor-slice-bound"
    family = "dynamic shapes"
    why = _GRAPH + "a slice bound computed from tensor values gives a result whose length is known only at run time."
    fix = "Slice to a fixed maximum length and mask the rest, or compute the bound from shapes (x.shape) or " \
        "configuration rather than from tensor contents."
    triggers = (
        "lengths = torch.tensor([3, 5])\nx = torch.randn(2, 8)\nn = int(lengths.max())\ny = x[:, :n]",
        "x = torch.randn(8)\nm = x > 0\ny = x[: m.sum()]",
    )
    passes = (
        "x = torch.randn(2, 8)\ny = x[:, : x.shape[1] // 2]",
        "x = torch.randn(8)\ny = x[:3]",
        "x = torch.randn(8)\nn = len(x)\ny = x[: n - 1]",
    )

    def check(self, ctx: CheckContext) -> Iterator[Site]:
        for site in ctx.facts.subscripts:
            for element in site.node.slice:
                piece = element.slice
                if not isinstance(piece, cst.Slice):
                    continue
                bounds = [b for b in (piece.lower, piece.upper, piece.step) if b is not None]
                if any(ctx.tensor_valued(b, site) for b in bounds):
                    yield site
                    break


class ComputedTopK(Checker):
    kind = "computed-k"
    family = "dynamic shapes"
    why = _GRAPH + "topk/narrow with a k or length computed from tensor values produce a run-time shape."
    fix = "Use a fixed maximum k (a constant or configuration value) and a mask for the entries beyond the " \
        "computed count."
    triggers = (
        "scores = torch.randn(10)\nk = int((scores > 0.5).sum())\nv, i = torch.topk(scores, k)",
        "x = torch.randn(10)\ny = x.narrow(0, 0, int(x.sum()))",
        "x = torch.randn(10)\nv, i = x.topk(k=int(x.max()))",
    )
    passes = (
        "scores = torch.randn(10)\nv, i = torch.topk(scores, 5)",
        "x = torch.randn(2, 10)\ny = x.narrow(1, 0, x.shape[1] // 2)",
        "class M(nn.Module):\n    def forward(self, x):\n        return x.topk(self.k)",
    )

    # (argument index for torch.X, index for the method form, keyword)
    _COUNTS = {"topk": (1, 0, "k"), "narrow": (3, 2, "length"), "kthvalue": (1, 0, "k")}

    def check(self, ctx: CheckContext) -> Iterator[Site]:
        for site, qualified in ctx.torch_calls():
            name = qualified.rsplit(".", 1)[-1]
            if qualified in (f"torch.{name}", f"torch.Tensor.{name}") and name in self._COUNTS:
                index, _, word = self._COUNTS[name]
                count = argument(site.node, index, word)
                if count is not None and ctx.tensor_valued(count, site):
                    yield site
        for site, name in ctx.method_calls(self._COUNTS):
            _, index, word = self._COUNTS[name]
            count = argument(site.node, index, word)
            if count is not None and ctx.tensor_valued(count, site):
                yield site


def _in_forward(site: Site) -> bool:
    return site.function is not None and site.function.name.value in FORWARD_NAMES


def _test_of(node: cst.CSTNode) -> cst.BaseExpression:
    return node.test  # If, While and IfExp all have a test


class TensorControlFlow(Checker):
    kind = "tensor-control-flow"
    family = "dynamic shapes"
    why = _GRAPH + "Python if/while on a tensor value in forward becomes graph control flow: loops are " \
        "unrolled or compiled per value, and branches that return different shapes or types fail to compile."
    fix = "Compute both branches and choose with ops.select / ops.where (or multiply by a mask); keep Python " \
        "branching for configuration values (self.training, flags, shapes)."
    triggers = (
        "class M(nn.Module):\n    def forward(self, x):\n        if x.sum() > 0:\n            x = x * 2\n"
        "        return x",
        "class M(nn.Module):\n    def forward(self, x):\n        while x.abs().max() > 1:\n            x = x / 2\n"
        "        return x",
        "class M(nn.Module):\n    def forward(self, x):\n        h = self.fc(x)\n        return h if h.mean() > 0 else -h",
    )
    passes = (
        "class M(nn.Module):\n    def forward(self, x, mask=None):\n        if self.training:\n            x = x * 2\n"
        "        if x.dim() == 4 and mask is None:\n            x = x.flatten(1)\n        if x.shape[0] > 1:\n"
        "            x = x + 1\n        return x",
        "x = torch.randn(3)\nif x.sum() > 0:\n    print('positive')",
    )

    def check(self, ctx: CheckContext) -> Iterator[Site]:
        for site in ctx.facts.branches:
            if _in_forward(site) and ctx.tensor_valued(_test_of(site.node), site):
                yield site


class ShapeChangeInBranch(Checker):
    kind = "shape-change-in-branch"
    family = "dynamic shapes"
    why = _GRAPH + "an op that changes the shape inside a branch on tensor values makes the output shape " \
        "depend on the data; the graph cannot give the two branches one static shape."
    fix = "Make both branches produce the same shape (pad or mask instead of concatenating/reshaping), then " \
        "select between them with ops.select."
    triggers = (
        "class M(nn.Module):\n    def forward(self, x):\n        if x.sum() > 0:\n"
        "            x = torch.cat([x, x], dim=1)\n        return x",
        "class M(nn.Module):\n    def forward(self, x):\n        if x.max() > 1:\n            x = x.view(-1)\n"
        "        return x",
    )
    passes = (
        "class M(nn.Module):\n    def forward(self, x):\n        if x.sum() > 0:\n            x = x * 2\n"
        "        return x",
        "class M(nn.Module):\n    def forward(self, x):\n        if x.dim() == 3:\n            x = x.unsqueeze(0)\n"
        "        return x",
    )

    def check(self, ctx: CheckContext) -> Iterator[Site]:
        for site in ctx.facts.calls:
            if not _in_forward(site) or not site.branches:
                continue
            qualified = ctx.facts.callee(site.node)
            shape_op = qualified in _SHAPE_FUNCTIONS if qualified else method_name(site.node) in _SHAPE_METHODS
            if not shape_op:
                continue
            if any(ctx.tensor_valued(_test_of(branch), site) for branch in site.branches):
                yield site


class VariableLengthBatches(Checker):
    kind = "variable-length-batches"
    family = "dynamic shapes"
    why = "Batches padded to their own longest sequence change shape from batch to batch; every new shape " \
        "recompiles the MindSpore graph (or needs dynamic-shape support)."
    fix = "Pad to a fixed maximum length or to a few length buckets (mindspore.dataset bucket_batch_by_length, " \
        "or padding in the collate function), carry a mask, or declare dynamic dims with Cell.set_inputs."
    triggers = (
        "seqs = [torch.ones(2), torch.ones(3)]\nbatch = nn.utils.rnn.pad_sequence(seqs, batch_first=True)",
        "def collate(items):\n    return items\n"
        "loader = torch.utils.data.DataLoader([1, 2], batch_size=2, collate_fn=collate)",
        "from torch.nn.utils.rnn import pack_padded_sequence\np = pack_padded_sequence(x, lengths, batch_first=True)",
    )
    passes = (
        "loader = torch.utils.data.DataLoader([1, 2], batch_size=2, shuffle=True)",
        "loader = torch.utils.data.DataLoader([1, 2], batch_size=2, collate_fn=None)",
    )

    _PADDING = {"torch.nn.utils.rnn.pad_sequence", "torch.nn.utils.rnn.pack_padded_sequence",
                "torch.nn.utils.rnn.pack_sequence"}

    def check(self, ctx: CheckContext) -> Iterator[Site]:
        for site, qualified in ctx.torch_calls():
            if qualified in self._PADDING:
                yield site
            elif qualified in ("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"):
                collate = argument(site.node, 99, "collate_fn")
                if collate is not None and not (isinstance(collate, cst.Name) and collate.value == "None"):
                    yield site

