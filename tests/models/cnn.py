"""Convolutional networks: BatchNorm, residual, depthwise, grouped, 1-d, dilated."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class BNConvNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Linear(16 * 4 * 4, num_classes)

    def forward(self, x):
        x = self.pool(F.relu(self.bn1(self.conv1(x))))
        x = self.pool(F.relu(self.bn2(self.conv2(x))))
        x = x.view(x.size(0), -1)
        return self.head(x)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResidualNet(nn.Module):
    def __init__(self, width=8, num_classes=5):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        self.blocks = nn.Sequential(BasicBlock(width, width), BasicBlock(width, width * 2, stride=2))
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 2, num_classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        x = torch.flatten(self.pool(x), 1)
        return self.fc(x)


class DepthwiseSeparableNet(nn.Module):
    """MobileNet-style: depthwise 3x3 then pointwise 1x1."""

    def __init__(self, channels=8, num_classes=4):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, stride=2, padding=1)
        self.depthwise = nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=False)
        self.bn_dw = nn.BatchNorm2d(channels)
        self.pointwise = nn.Conv2d(channels, channels * 2, 1, bias=False)
        self.bn_pw = nn.BatchNorm2d(channels * 2)
        self.act = nn.ReLU6()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(channels * 2, num_classes)

    def forward(self, x):
        x = self.act(self.stem(x))
        x = self.act(self.bn_dw(self.depthwise(x)))
        x = self.act(self.bn_pw(self.pointwise(x)))
        x = self.pool(x).flatten(1)
        return self.classifier(x)


class GroupedConvNet(nn.Module):
    """ResNeXt-style grouped convolution in a bottleneck with SiLU."""

    def __init__(self, channels=16, groups=4):
        super().__init__()
        self.reduce = nn.Conv2d(3, channels, 1)
        self.grouped = nn.Conv2d(channels, channels, 3, padding=1, groups=groups)
        self.expand = nn.Conv2d(channels, channels, 1)
        self.bn = nn.BatchNorm2d(channels)
        self.act = nn.SiLU()

    def forward(self, x):
        y = self.act(self.reduce(x))
        y = self.act(self.grouped(y))
        return self.bn(self.expand(y)) + y


class Conv1dNet(nn.Module):
    """Sequence classifier over (batch, channels, length): Conv1d weights are 4-D in MindSpore."""

    def __init__(self, channels=4, hidden=8, num_classes=3):
        super().__init__()
        self.conv1 = nn.Conv1d(channels, hidden, 5, padding=2)
        self.bn = nn.BatchNorm1d(hidden)
        self.conv2 = nn.Conv1d(hidden, hidden, 3, stride=2)
        self.fc = nn.Linear(hidden, num_classes)

    def forward(self, x):
        x = F.relu(self.bn(self.conv1(x)))
        x = F.relu(self.conv2(x))
        return self.fc(x.mean(dim=-1))


class DilatedConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=2, dilation=2),
            nn.LeakyReLU(0.1),
            nn.Conv2d(8, 8, 3, stride=2, padding=1),
            nn.Dropout(0.3),
            nn.Hardswish(),
        )
        self.out = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        return self.out(self.features(x))


class SqueezeExcite(nn.Module):
    def __init__(self, channels=8, reduction=4):
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, padding=1)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Linear(channels, channels // reduction)
        self.fc2 = nn.Linear(channels // reduction, channels)
        self.gate = nn.Sigmoid()

    def forward(self, x):
        x = self.conv(x)
        b, c = x.shape[0], x.shape[1]
        s = self.pool(x).view(b, c)
        s = self.gate(self.fc2(F.relu(self.fc1(s))))
        return x * s.view(b, c, 1, 1)


VERIFY = {
    "BNConvNet": ["2,3,16,16"],
    "ResidualNet": ["2,3,16,16"],
    "DepthwiseSeparableNet": ["2,3,16,16"],
    "GroupedConvNet": ["2,3,8,8"],
    "Conv1dNet": ["2,4,20"],
    "DilatedConvNet": ["2,3,12,12"],
    "SqueezeExcite": ["2,3,8,8"],
}
