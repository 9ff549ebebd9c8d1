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
                "            self.beta.requires_grad = False\n\n\n"
                "layer = torchvision_ops_misc.FrozenBatchNorm2d(4, eps=0.001)",
            ),
            # code that reads torch's names on the layer gets them (properties over MindSpore's)
            Example(
                "from torchvision.ops.misc import FrozenBatchNorm2d\nlayer = FrozenBatchNorm2d(4)\n"
                "scale = layer.weight * (layer.running_var + layer.eps).rsqrt()",
                "class torchvision_ops_misc:\n"
                '    """torchvision.ops.misc signatures over MindSpore (written by ms-migrate)."""\n\n'
                "    class FrozenBatchNorm2d(nn.BatchNorm2d):\n"
                "        def __init__(self, num_features, eps=1e-05):\n"
                "            super().__init__(num_features, eps=eps, use_batch_statistics=False)\n"
                "            self.gamma.requires_grad = False\n"
                "            self.beta.requires_grad = False\n\n"
                "        @property\n        def weight(self):\n            return self.gamma\n\n"
                "        @weight.setter\n        def weight(self, value):\n            self.gamma = value\n\n"
                "        @property\n        def running_var(self):\n            return self.moving_variance\n\n"
                "        @running_var.setter\n        def running_var(self, value):\n"
                "            self.moving_variance = value\n\n\n"
                "layer = torchvision_ops_misc.FrozenBatchNorm2d(4)\n"
                "scale = layer.weight * (layer.running_var + layer.eps).rsqrt()",
            ),
        ),
    ),
]
