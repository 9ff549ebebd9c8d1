"""This project's rules: its own torch layers and their MindSpore twins.

A rule file is a Python module with a RULES list, written with ms-migrate's
public rule API (rewrite_rules.api), the same form as ms-migrate's own rules.
"""

from rewrite_rules.api import ApiRule, Example

X = {"x": "randn(2, 3, 9, 9)"}

RULES = [
    ApiRule(
        "mylib.layers.ConvBNAct",
        "mylib_ms.layers.ConvBNAct",
        signature="in_ch, out_ch, kernel_size=3, stride=1, act=True",
        args={"in_ch": "in_channels", "out_ch": "out_channels", "act": "activation"},
        positional=4,  # in_ch .. stride keep their place when passed positionally
        examples=(
            Example(
                "from mylib.layers import ConvBNAct\nlayer = ConvBNAct(3, 8, act=False)\nlayer.eval()\n"
                "result = layer(x)",
                mindspore="layer = mylib_ms.layers.ConvBNAct(3, 8, activation=False)\nlayer.set_train(False)\n"
                          "result = layer(x)",
                inputs=X,
            ),
            Example(
                "from mylib.layers import ConvBNAct\nlayer = ConvBNAct(in_ch=3, out_ch=4, kernel_size=5, stride=2)\n"
                "layer.train()\nresult = layer(x)",
                inputs=X,
            ),
        ),
    ),
]
