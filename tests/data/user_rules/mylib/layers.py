import torch.nn as nn


class ConvBNAct(nn.Module):
    """Conv2d (same padding, no bias) -> BatchNorm2d -> SiLU."""

    def __init__(self, in_ch, out_ch, kernel_size=3, stride=1, act=True):
        super().__init__()
        self.conv = nn.Conv2d(in_ch, out_ch, kernel_size, stride, padding=kernel_size // 2, bias=False)
        self.bn = nn.BatchNorm2d(out_ch)
        self.act = nn.SiLU() if act else nn.Identity()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))
