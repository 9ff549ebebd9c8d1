"""Embeddings: bag-of-embeddings classifier, token + learned position
embeddings with a registered buffer, and a multi-task model with a dict output."""

import torch
import torch.nn as nn


class EmbeddingBagClassifier(nn.Module):
    def __init__(self, vocab=30, dim=8, num_classes=4):
        super().__init__()
        self.embedding = nn.Embedding(vocab, dim)
        self.fc = nn.Linear(dim, num_classes)

    def forward(self, ids):
        return self.fc(self.embedding(ids).mean(dim=1))


class PositionalEmbedding(nn.Module):
    def __init__(self, vocab=20, dim=8, max_len=16):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Parameter(torch.randn(1, max_len, dim) * 0.02)
        self.register_buffer("scale", torch.ones(1) * 2.0)
        self.norm = nn.LayerNorm(dim)

    def forward(self, ids):
        t = ids.shape[1]
        x = self.tokens(ids) * self.scale + self.positions[:, :t]
        return self.norm(x)


class MultiTaskHeads(nn.Module):
    """A shared trunk and a ModuleDict of heads; returns a dict."""

    def __init__(self, dim=6):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(dim, 12), nn.Tanh())
        self.heads = nn.ModuleDict({"score": nn.Linear(12, 1), "labels": nn.Linear(12, 3)})

    def forward(self, x):
        h = self.trunk(x)
        return {"score": self.heads["score"](h), "labels": self.heads["labels"](h)}


VERIFY = {
    "EmbeddingBagClassifier": ["3,5:int64:0-30"],
    "PositionalEmbedding": ["2,10:int64:0-20"],
    "MultiTaskHeads": ["4,6"],
}
