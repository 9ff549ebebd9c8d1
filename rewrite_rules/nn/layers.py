"""torch.nn.Module and Linear -> mindspore.nn.Cell and Dense.

The other layer families have a module each: nn_conv, nn_pooling,
nn_normalization, nn_activations, nn_dropout, nn_embedding, nn_recurrent,
nn_transformer, nn_padding, nn_upsampling, nn_losses, nn_misc."""

from __future__ import annotations

from rewrite_rules.helpers import DEVICE
from rewrite_rules.nn.shared import DTYPE, KAIMING_RESET, P, layer_cases, reset_example
from rewrite_rules.api import ApiRule, AttributeRule, Example
from rewrite_rules.nn.module_paths import with_module_paths

RULES = [
    AttributeRule("torch.nn.Module", "mindspore.nn.Cell", aliases=("torch.nn.modules.module.Module",),
                  examples=(Example("class Net(nn.Module):\n"
                                    "    def __init__(self):\n        super().__init__()\n"
                                    "        self.fc = nn.Linear(3, 2)\n\n"
                                    "    def forward(self, x):\n        return torch.relu(self.fc(x)) * 2\n\n\n"
                                    "net = Net()\nresult = (net(x), isinstance(net, nn.Module), isinstance(x, nn.Module))",
                                    inputs={"x": "randn(4, 3)"}),)),
    ApiRule(
        "torch.nn.Linear",
        "mindspore.nn.Dense",
        signature="in_features, out_features, bias=True, device=None, dtype=None",
        args={"in_features": "in_channels", "out_features": "out_channels", "bias": "has_bias", "device": DEVICE,
              "dtype": DTYPE},
        positional=2,
        attributes={"in_features": "in_channels", "out_features": "out_channels"},
        reset_parameters=KAIMING_RESET,
        examples=(
            Example("fc = nn.Linear(4, 3)", "fc = nn.Dense(4, 3)"),
            Example("fc = nn.Linear(in_features=4, out_features=3, bias=False)",
                    "fc = nn.Dense(in_channels=4, out_channels=3, has_bias=False)"),
            *layer_cases("Linear", [P("in_features", "4"), P("out_features", "3"), P("bias", "False", default=True)],
                         {"x": "randn(2, 5, 4)"}),
            reset_example("Linear", "4, 3", "randn(2, 5, 4)"),
            reset_example("Linear", "4, 3, bias=False", "randn(2, 5, 4)"),
        ),
    ),
]

RULES = with_module_paths(RULES)  # torch.nn.modules.X and torch.nn.modules.<submodule>.X too
