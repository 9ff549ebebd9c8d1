"""A small ResNet: BatchNorm, residual blocks with projection shortcuts."""

import torch
from torch import nn
from torch.nn import functional as F


def conv3x3(in_planes, out_planes, stride=1):
    """3x3 convolution with padding."""
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = conv3x3(in_planes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_planes != planes:
            # projection shortcut to match shapes
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_planes, planes, kernel_size=1, stride=stride, bias=False),
                nn.BatchNorm2d(planes),
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out = out + self.shortcut(x)
        return F.relu(out)


class ResNet(nn.Module):
    def __init__(self, num_blocks=(2, 2, 2), num_classes=10, width=16):
        super().__init__()
        self.in_planes = width
        self.stem = nn.Sequential(conv3x3(3, width), nn.BatchNorm2d(width), nn.ReLU(inplace=True))
        layers = []
        for i, blocks in enumerate(num_blocks):
            stride = 1 if i == 0 else 2
            layers.append(self._make_layer(width * 2**i, blocks, stride))
        self.layers = nn.ModuleList(layers)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 2 ** (len(num_blocks) - 1), num_classes)

    def _make_layer(self, planes, blocks, stride):
        strides = [stride] + [1] * (blocks - 1)
        layers = []
        for s in strides:
            layers.append(BasicBlock(self.in_planes, planes, s))
            self.in_planes = planes
        return nn.Sequential(*layers)

    def forward(self, x):
        out = self.stem(x)
        for layer in self.layers:
            out = layer(out)
        out = self.pool(out)
        out = out.view(out.size(0), -1)
        return self.fc(out)


def make_model():
    return ResNet()


def make_inputs():
    return (torch.randn(2, 3, 32, 32),)


if __name__ == "__main__":
    model = make_model()
    model.eval()
    with torch.no_grad():
        logits = model(*make_inputs())
    print("logits", tuple(logits.shape))
    print("parameters", sum(p.numel() for p in model.parameters()))
