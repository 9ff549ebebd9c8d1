import torch
import torch.nn as nn
from mylib.layers import ConvBNAct


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = ConvBNAct(3, 16, stride=2)  # downsample
        self.head = nn.Linear(16, 10, bias=False)
        self.norm = nn.LayerNorm(16, eps=1e-6)

    def forward(self, x):
        x = self.stem(x).mean((2, 3))
        return self.head(self.norm(x))
