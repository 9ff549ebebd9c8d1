"""torch dtypes -> MindSpore dtypes, and torch.Tensor as a type."""

from __future__ import annotations

from rewrite_rules.spec import AttributeRule, Example

_SAME = ["float16", "float32", "float64", "bfloat16", "int8", "int16", "int32", "int64", "uint8",
         "complex64", "complex128", "uint16", "uint32", "uint64"]
_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "int": "int32", "long": "int64",
            "short": "int16", "bool": "bool_", "cfloat": "complex64", "cdouble": "complex128"}

RULES = [
    *(AttributeRule(f"torch.{name}", f"mindspore.{name}") for name in _SAME),
    *(AttributeRule(f"torch.{name}", f"mindspore.{target}") for name, target in _ALIASES.items()),
    AttributeRule(
        "torch.dtype",
        "mindspore.Type",
        examples=(Example("ok = isinstance(torch.float16, torch.dtype)", "ok = isinstance(mindspore.float16, mindspore.Type)",
                          inputs={}, results=("ok",)),),
    ),
    AttributeRule(
        "torch.Tensor",
        "mindspore.Tensor",
        examples=(Example("ok = isinstance(x, torch.Tensor)", "ok = isinstance(x, mindspore.Tensor)"),),
    ),
]
