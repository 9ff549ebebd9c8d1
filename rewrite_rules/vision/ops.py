"""torchvision.ops layers that model zoos build on."""

from __future__ import annotations

from rewrite_rules.api import ApiRule, Example

_FROZEN_BN_WEIGHTS = {"weight": "gamma", "bias": "beta", "running_mean": "moving_mean", "running_var": "moving_variance"}

RULES = [
    ApiRule(
        "torchvision.ops.misc.FrozenBatchNorm2d",
        "mindspore.nn.BatchNorm2d",
        signature="num_features, eps=1e-05",
        args={"eps": "eps"},
        hook=lambda call, ctx: call.add_keyword("use_batch_statistics", "False"),
        after_init=("self.gamma.requires_grad = False", "self.beta.requires_grad = False"),
        weights=_FROZEN_BN_WEIGHTS,
        aliases=("torchvision.ops.FrozenBatchNorm2d",),
        notes="BatchNorm2d that always normalises with its stored statistics and never trains its affine "
        "parameters (torch keeps all four as buffers)",
        # torchvision's compiled part does not load beside the CPU torch here, its Python part does:
        # that test runs torchvision's own layer (random buffers) against the converted one
        proven_by=("tests/rules/test_frozen_batch_norm.py::test_frozen_batch_norm_matches_torchvision",),
        examples=(
            Example(
                "from torchvision.ops.misc import FrozenBatchNorm2d\nlayer = FrozenBatchNorm2d(4, eps=0.001)",
                "class torchvision_ops_misc:\n"
                '    """torchvision.ops.misc signatures over MindSpore (written by ms-migrate)."""\n\n'
                "    class FrozenBatchNorm2d(nn.BatchNorm2d):\n"
                "        def __init__(self, num_features, eps=1e-05):\n"
                "            super().__init__(num_features, eps=eps, use_batch_statistics=False)\n"
                "            self.gamma.requires_grad = False\n"
                "            self.beta.requires_grad = False\n\n"
                + "".join(f"        @property\n        def {torch_name}(self):\n            return self.{ms_name}\n\n"
                          f"        @{torch_name}.setter\n        def {torch_name}(self, value):\n"
                          f"            self.{ms_name} = value\n\n"
                          for torch_name, ms_name in _FROZEN_BN_WEIGHTS.items())
                + "\n"
                "layer = torchvision_ops_misc.FrozenBatchNorm2d(4, eps=0.001)",
            ),
        ),
    ),
]
