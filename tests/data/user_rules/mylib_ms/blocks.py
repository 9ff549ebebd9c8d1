import mindspore.nn as nn


class ConvNormAct(nn.Cell):
    """Like mylib_ms.layers.ConvBNAct, with its BatchNorm called ``norm``: the rule says how weights move."""

    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, activation=True):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride, pad_mode="pad",
                              padding=kernel_size // 2, has_bias=False)
        self.norm = nn.BatchNorm2d(out_channels, momentum=0.9)
        self.act = nn.SiLU() if activation else nn.Identity()

    def construct(self, x):
        return self.act(self.norm(self.conv(x)))
