"""torch's mathematical constants are Python floats: math's."""

from __future__ import annotations

from rewrite_rules.api import AttributeRule, Example

RULES = [
    AttributeRule("torch.pi", "math.pi",
                  examples=(Example("result = x * torch.pi", "result = x * math.pi", inputs={"x": "randn(3)"}),)),
    AttributeRule("torch.e", "math.e",
                  examples=(Example("result = x * torch.e", "result = x * math.e", inputs={"x": "randn(3)"}),)),
    AttributeRule("torch.inf", "math.inf",
                  examples=(Example("result = x.clamp(max=torch.inf) + (x < torch.inf)",
                                    inputs={"x": "randn(3)"}),)),
    AttributeRule("torch.nan", "math.nan",
                  examples=(Example("result = x.nan_to_num(torch.nan)", inputs={"x": "randn(3)"}),)),
]
