"""Stochastic models: dropout in training mode, sampling in the forward pass."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class DropoutMLP(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.fc1 = nn.Linear(16, width)
        self.drop = nn.Dropout(0.3)
        self.fc2 = nn.Linear(width, 4)

    def forward(self, x):
        h = self.drop(F.relu(self.fc1(x)))
        return self.fc2(F.dropout(h, 0.2, self.training))


class ConvDropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.drop = nn.Dropout2d(0.25)
        self.head = nn.Linear(8, 5)

    def forward(self, x):
        h = self.drop(F.relu(self.conv(x)))
        return self.head(h.mean(dim=(2, 3)))


class SamplingHead(nn.Module):
    """A policy head: logits, sampled actions and their log-probabilities."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(12, 6)

    def forward(self, x):
        logits = self.fc(x)
        actions = torch.multinomial(F.softmax(logits, dim=-1), 2, replacement=True)
        log_probs = torch.gather(F.log_softmax(logits, dim=-1), 1, actions)
        return logits, actions, log_probs


class NoisyEncoder(nn.Module):
    """Reparameterised Gaussian latent plus a Gumbel-softmax code."""

    def __init__(self):
        super().__init__()
        self.mu = nn.Linear(10, 6)
        self.logvar = nn.Linear(10, 6)
        self.code = nn.Linear(10, 4)

    def forward(self, x):
        mu, logvar = self.mu(x), self.logvar(x)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        code = F.gumbel_softmax(self.code(x), tau=0.5, hard=False)
        return z, code


VERIFY = {
    "DropoutMLP": ["4,16"],
    "ConvDropout": ["2,3,8,8"],
    "SamplingHead": ["5,12"],
    "NoisyEncoder": ["3,10"],
}
# also verified in training mode
TRAIN = ["DropoutMLP", "ConvDropout"]
