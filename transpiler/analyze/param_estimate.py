"""Parameter counts from the code, for files that cannot be imported: the
common layers' formulas applied to literal constructor arguments."""

from __future__ import annotations

import math

import libcst as cst

from transpiler.analyze.facts import FileFacts, argument
from transpiler.convert.engine import literal_value

_FREE = ("ReLU", "ReLU6", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh", "Softmax", "LogSoftmax", "LeakyReLU", "ELU",
         "Hardswish", "Hardsigmoid", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "Flatten",
         "Unflatten", "Identity", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
         "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
         "Upsample", "PixelShuffle", "ZeroPad2d", "ConstantPad2d", "Softplus", "Softsign")


class Unknown(Exception):
    pass


def _value(call: cst.Call, index: int, name: str, default=None):
    expr = argument(call, index, name)
    if expr is None:
        if default is None:
            raise Unknown(name)
        return default
    return _constant(expr, name)


_ARITHMETIC = {cst.Add: lambda a, b: a + b, cst.Subtract: lambda a, b: a - b, cst.Multiply: lambda a, b: a * b,
               cst.FloorDivide: lambda a, b: a // b}


def _constant(expr: cst.BaseExpression, name: str):
    """A literal, or integer arithmetic on literals (``16 + 8``, ``4 * 64``)."""
    if isinstance(expr, cst.BinaryOperation) and type(expr.operator) in _ARITHMETIC:
        left, right = _constant(expr.left, name), _constant(expr.right, name)
        if isinstance(left, int) and isinstance(right, int):
            return _ARITHMETIC[type(expr.operator)](left, right)
        raise Unknown(name)
    try:
        return literal_value(expr)
    except (ValueError, SyntaxError, TypeError):
        raise Unknown(name) from None


def _flag(call, index, name, default=True) -> bool:
    return bool(_value(call, index, name, default))


def _prod(value) -> int:
    return math.prod(value) if isinstance(value, (tuple, list)) else int(value)


def _conv(call, ndim: int, transposed: bool) -> int:
    c_in, c_out = _value(call, 0, "in_channels"), _value(call, 1, "out_channels")
    kernel = _value(call, 2, "kernel_size")
    kernel = _prod(kernel) if isinstance(kernel, (tuple, list)) else int(kernel) ** ndim
    groups = _value(call, 6 if not transposed else 7, "groups", 1)
    weight = (c_in * c_out // groups) * kernel
    return weight + (c_out if _flag(call, 7 if not transposed else 6, "bias") else 0)


def _recurrent(call, gates: int) -> int:
    size_in, hidden = _value(call, 0, "input_size"), _value(call, 1, "hidden_size")
    layers = _value(call, 2, "num_layers", 1)
    bias = _flag(call, 3, "bias")
    directions = 2 if _value(call, 99, "bidirectional", False) else 1
    total = 0
    for layer in range(layers):
        width = size_in if layer == 0 else hidden * directions
        total += directions * (gates * hidden * (width + hidden) + (2 * gates * hidden if bias else 0))
    return total


def _layer(short: str, call: cst.Call) -> int:
    if short in _FREE:
        return 0
    if short in ("Linear", "LazyLinear"):
        c_in, c_out = _value(call, 0, "in_features"), _value(call, 1, "out_features")
        return c_in * c_out + (c_out if _flag(call, 2, "bias") else 0)
    if short in ("Bilinear",):
        a, b, out = _value(call, 0, "in1_features"), _value(call, 1, "in2_features"), _value(call, 2, "out_features")
        return a * b * out + (out if _flag(call, 3, "bias") else 0)
    for ndim in (1, 2, 3):
        if short == f"Conv{ndim}d":
            return _conv(call, ndim, False)
        if short == f"ConvTranspose{ndim}d":
            return _conv(call, ndim, True)
        if short in (f"BatchNorm{ndim}d", f"InstanceNorm{ndim}d"):
            default_affine = short.startswith("Batch")
            return 2 * _value(call, 0, "num_features") if _flag(call, 3, "affine", default_affine) else 0
    if short == "LayerNorm":
        return 2 * _prod(_value(call, 0, "normalized_shape")) if _flag(call, 2, "elementwise_affine") else 0
    if short == "GroupNorm":
        return 2 * _value(call, 1, "num_channels") if _flag(call, 3, "affine") else 0
    if short == "Embedding":
        return _value(call, 0, "num_embeddings") * _value(call, 1, "embedding_dim")
    if short == "LSTM":
        return _recurrent(call, 4)
    if short == "GRU":
        return _recurrent(call, 3)
    if short == "RNN":
        return _recurrent(call, 1)
    if short == "MultiheadAttention":
        embed = _value(call, 0, "embed_dim")
        bias = _flag(call, 3, "bias")
        return 4 * embed * embed + (4 * embed if bias else 0)
    if short == "PReLU":
        return _value(call, 0, "num_parameters", 1)
    raise Unknown(short)


class Estimator:
    """Estimates per Cell class of a file; local classes used as submodules count too."""

    def __init__(self, facts: FileFacts):
        self.facts = facts
        self.classes = {s.node.name.value: s.node for s in facts.classes
                        if s.node.name.value in facts.analysis.cell_classes}
        self._memo: dict[str, tuple[int, bool]] = {}

    def of_class(self, name: str, depth: int = 0) -> tuple[int, bool]:
        """(count, complete): complete is False when some layer's size is unknown."""
        if name in self._memo:
            return self._memo[name]
        if depth > 10 or name not in self.classes:
            return 0, False
        total, complete = 0, True
        for call in submodule_calls(self.facts, self.classes[name]):
            count, known = self.of_call(call, depth)
            total += count
            complete = complete and known
        self._memo[name] = (total, complete)
        return total, complete

    def of_call(self, call: cst.Call, depth: int = 0) -> tuple[int, bool]:
        qualified = self.facts.callee(call)
        if qualified is None:
            if isinstance(call.func, cst.Name) and call.func.value in self.classes:
                return self.of_class(call.func.value, depth + 1)
            return 0, False
        short = qualified.rsplit(".", 1)[-1]
        if short in ("Sequential", "ModuleList"):
            total, complete = 0, True
            inner = [a.value for a in call.args] if short == "Sequential" else _list_items(call)
            if inner is None:
                return 0, False
            for value in inner:
                if not isinstance(value, cst.Call):
                    return total, False
                count, known = self.of_call(value, depth)
                total, complete = total + count, complete and known
            return total, complete
        if not qualified.startswith("torch.nn."):
            return 0, False
        try:
            return _layer(short, call), True
        except (Unknown, TypeError, ZeroDivisionError):
            return 0, False


def _list_items(call: cst.Call) -> list[cst.BaseExpression] | None:
    """The literal items of ``nn.ModuleList([...])``; None for a comprehension or a variable."""
    if call.args and isinstance(call.args[0].value, (cst.List, cst.Tuple)):
        return [e.value for e in call.args[0].value.elements]
    return None if call.args else []


def submodule_calls(facts: FileFacts, cls: cst.ClassDef) -> list[cst.Call]:
    """``self.x = Layer(...)`` calls in the class's ``__init__``."""
    calls = []
    for site in facts.assigns:
        fn = site.function
        if site.cls is not cls or fn is None or fn.name.value != "__init__":
            continue
        node = site.node
        targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        if isinstance(node.value, cst.Call) and any(_is_self_attribute(t) for t in targets):
            calls.append(node.value)
    return calls


def _is_self_attribute(target) -> bool:
    return isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name) and target.value.value == "self"
