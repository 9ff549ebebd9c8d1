"""torch dtypes -> MindSpore dtypes, and torch.Tensor as a type."""

from __future__ import annotations

from rewrite_rules.api import AttributeRule, Example

_SAME = ["float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64", "uint8",
         "complex64", "complex128", "uint16", "uint32", "uint64"]
_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "int": "int32", "long": "int64",
            "short": "int16", "bool": "bool_", "cfloat": "complex64", "cdouble": "complex128"}
DTYPE_NAMES = frozenset(_SAME) | frozenset(_ALIASES)  # every torch.<name> that is a dtype

# Execution case: a cast to the dtype (values and dtype compared) and the dtype itself.
# Unsigned casts get no negative values (torch leaves their result undefined).
_VALUES = {"x": "tensor([[0.0, 1.5, -2.75], [3.25, -0.5, 7.0]])"}
_UNSIGNED_VALUES = {"x": "tensor([[0.0, 1.5, 2.75], [3.25, 0.5, 7.0]])"}


def _dtype_rule(name: str, target: str) -> AttributeRule:
    inputs = _UNSIGNED_VALUES if target.startswith("uint") else _VALUES
    case = Example(f"result = (x.to(torch.{name}), torch.{name})", inputs=inputs)
    return AttributeRule(f"torch.{name}", f"mindspore.{target}", examples=(case,))


RULES = [
    *(_dtype_rule(name, name) for name in _SAME),
    *(_dtype_rule(name, target) for name, target in _ALIASES.items()),
    AttributeRule(
        "torch.dtype",
        "mindspore.Type",
        examples=(Example("ok = isinstance(torch.float16, torch.dtype)", "ok = isinstance(mindspore.float16, mindspore.Type)",
                          inputs={}, results=("ok",)),),
    ),
    AttributeRule(
        "torch.Tensor",
        "mindspore.Tensor",
        examples=(Example("ok = isinstance(x, torch.Tensor)", "ok = isinstance(x, mindspore.Tensor)"),
                  Example("result = (isinstance(x, torch.Tensor), isinstance(3.0, torch.Tensor))", inputs=_VALUES)),
    ),
]
