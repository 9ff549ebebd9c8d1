"""Normalisation layers and a model returning (loss, logits)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class LayerNormMLP(nn.Module):
    def __init__(self, dim=10, hidden=16):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-6)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(torch.tanh(self.norm(self.fc1(x))))


class BatchNormMLP(nn.Module):
    def __init__(self, dim=8, hidden=12):
        super().__init__()
        self.fc = nn.Linear(dim, hidden)
        self.bn = nn.BatchNorm1d(hidden, momentum=0.05)
        self.act = nn.PReLU(hidden)
        self.out = nn.Linear(hidden, 2)

    def forward(self, x):
        return self.out(self.act(self.bn(self.fc(x))))


class GroupNormNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.gn = nn.GroupNorm(4, 8)
        self.inorm = nn.InstanceNorm2d(8, affine=True)

    def forward(self, x):
        return self.inorm(F.relu(self.gn(self.conv(x))))


class RegressorWithLoss(nn.Module):
    """Returns (loss, prediction) like many training-ready models."""

    def __init__(self, dim=5):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, 8), nn.Linear(8, 8), nn.Linear(8, 1)])
        self.loss = nn.MSELoss()

    def forward(self, x, target):
        for layer in self.layers[:-1]:
            x = F.relu(layer(x))
        pred = self.layers[-1](x)
        return self.loss(pred, target), pred


VERIFY = {
    "LayerNormMLP": ["3,10"],
    "BatchNormMLP": ["4,8"],
    "GroupNormNet": ["2,3,6,6"],
    "RegressorWithLoss": ["4,5", "4,1"],
}
