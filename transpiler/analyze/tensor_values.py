"""Which expressions hold tensor *values* (as opposed to shapes, dtypes, None
checks or configuration): the static-graph hazards are control flow and shapes
that depend on tensor values.

Per function: the tensor inputs of ``forward``/``construct`` (every parameter
but ``self``) and every local assigned from a tensor-valued expression are
tensor-valued; so is any expression containing them, a torch call, or a
reducing tensor method. Static queries stop this: ``x.shape``, ``x.size()``,
``x.dim()``, ``len(x)``, ``isinstance(x, ...)``, ``x is None``.
"""

from __future__ import annotations

import libcst as cst

from transpiler.convert.names import is_torch_name

FORWARD_NAMES = frozenset({"forward", "construct"})
# Attributes and methods that read static facts about a tensor, not its values.
STATIC_ATTRIBUTES = frozenset({"shape", "ndim", "dtype", "device", "is_cuda", "training", "requires_grad", "layout"})
STATIC_METHODS = frozenset({"size", "dim", "ndimension", "numel", "nelement", "type", "is_contiguous", "get_device"})
STATIC_BUILTINS = frozenset({"len", "isinstance", "type", "hasattr", "getattr", "id", "callable"})
# Tensor methods whose result is data-dependent (a reduction or a value read).
VALUE_METHODS = frozenset(
    {"item", "sum", "max", "min", "argmax", "argmin", "mean", "any", "all", "count_nonzero", "tolist",
     "nonzero", "norm", "prod", "median"}
)
# torch functions that only describe shapes or types.
STATIC_TORCH = frozenset({"torch.Size", "torch.numel", "torch.finfo", "torch.iinfo"})
# torch namespaces that answer questions about the runtime, not about tensor values.
STATIC_TORCH_PREFIXES = ("torch.cuda.", "torch.backends.", "torch.distributed.", "torch.jit.", "torch.onnx.",
                         "torch.compiler.", "torch.is_", "torch.get_", "torch.version", "torch.are_")


class TensorValues:
    """Tensor-valued names of one function (or of module level when None)."""

    def __init__(self, facts, function: cst.FunctionDef | None):
        self.facts = facts
        self.names: set[str] = set()
        if function is not None and function.name.value in FORWARD_NAMES:
            params = function.params
            for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
                if param.name.value not in ("self", "cls"):
                    self.names.add(param.name.value)
        self._propagate(function)

    def _propagate(self, function: cst.FunctionDef | None) -> None:
        assigns = [s.node for s in self.facts.assigns if s.function is function]
        for _ in range(3):  # a few passes reach loop-carried names
            before = len(self.names)
            for node in assigns:
                if node.value is not None and self.is_tensor_valued(node.value):
                    targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                    for target in targets:
                        self.names.update(_bound_names(target))
            if len(self.names) == before:
                break

    def is_tensor_valued(self, expr: cst.CSTNode) -> bool:
        if isinstance(expr, cst.Name):
            return expr.value in self.names
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in STATIC_ATTRIBUTES:
                return False
            return self.is_tensor_valued(expr.value)
        if isinstance(expr, cst.Comparison):
            if all(isinstance(t.operator, (cst.Is, cst.IsNot, cst.In, cst.NotIn)) for t in expr.comparisons):
                return False
        if isinstance(expr, cst.Call):
            return self._call_is_tensor_valued(expr)
        if isinstance(expr, (cst.Lambda, cst.SimpleString, cst.FormattedString)):
            return False
        return any(self.is_tensor_valued(child) for child in expr.children)

    def _call_is_tensor_valued(self, call: cst.Call) -> bool:
        func = call.func
        qualified = self.facts.analysis.qualified(func)
        if qualified is not None:
            return is_torch_value_call(qualified)
        if isinstance(func, cst.Name) and func.value in STATIC_BUILTINS:
            return False
        if isinstance(func, cst.Attribute):
            if func.attr.value in STATIC_METHODS:
                return False
            if func.attr.value in VALUE_METHODS and not _is_module_receiver(func.value, self.facts):
                return True
            if self.is_tensor_valued(func.value):
                return True
        return any(self.is_tensor_valued(arg.value) for arg in call.args)


def is_torch_value_call(qualified: str) -> bool:
    return is_torch_name(qualified) and qualified not in STATIC_TORCH and not qualified.startswith(STATIC_TORCH_PREFIXES)


def _is_module_receiver(expr: cst.BaseExpression, facts) -> bool:
    """``np.max``/``math.prod``: a module function, not a tensor method."""
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return isinstance(expr, cst.Name) and expr.value in facts.analysis.imports


def _bound_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for e in target.elements for n in _bound_names(e.value)]
    if isinstance(target, cst.StarredElement):
        return _bound_names(target.value)
    return []


class TensorValueCache:
    """One TensorValues per function, computed on demand."""

    def __init__(self, facts):
        self.facts = facts
        self._cache: dict[int, TensorValues] = {}

    def of(self, function: cst.FunctionDef | None) -> TensorValues:
        key = id(function)
        if key not in self._cache:
            self._cache[key] = TensorValues(self.facts, function)
        return self._cache[key]

    def is_tensor_valued(self, expr: cst.CSTNode, function: cst.FunctionDef | None) -> bool:
        return self.of(function).is_tensor_valued(expr)
