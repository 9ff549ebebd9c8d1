"""A small classifier with the constructs the analysis must find."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class ClipGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad.clamp(-1.0, 1.0)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(16)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.embed = nn.Embedding(100, 8, sparse=True)
        self.fc = nn.Linear(16 + 8, 10)
        nn.init.kaiming_normal_(self.conv.weight, mode="fan_out")
        nn.init.zeros_(self.fc.bias)

    def forward(self, x, tokens):
        h = F.relu(self.bn(self.conv(x)))
        h = self.pool(h).flatten(1)
        if h.mean() > 0:
            h = torch.cat([h, h], dim=1)[:, :16]
        e = self.embed(tokens).mean(dim=1)
        picked = e[e > 0]
        return self.fc(torch.cat([h, e], dim=1)), picked.shape


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(8, 16, num_layers=2, bidirectional=True, batch_first=True)
        self.head = nn.Sequential(nn.Linear(32, 32), nn.GELU(), nn.Linear(32, 4))
        self.norm = nn.LayerNorm(32)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(self.norm(out))
