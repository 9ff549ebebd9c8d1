"""A small transformer classifier of token sequences trained with AdamW and a
linear warmup schedule stepped every batch, with a checkpoint saved and
restored at the end."""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


class SelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)
        k = k.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)
        v = v.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d // self.heads)
        out = torch.matmul(F.softmax(scores, dim=-1), v)
        return self.proj(out.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, dim, heads, dropout):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        x = x + self.drop(self.attn(self.norm1(x)))
        return x + self.drop(self.mlp(self.norm2(x)))


class TransformerClassifier(nn.Module):
    def __init__(self, vocab=20, dim=32, heads=4, depth=2, seq_len=16, classes=2, dropout=0.1):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Embedding(seq_len, dim)
        self.blocks = nn.ModuleList([Block(dim, heads, dropout) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens):
        positions = torch.arange(tokens.shape[1])
        x = self.tokens(tokens) + self.positions(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x).mean(dim=1))


def make_data(count=512, vocab=20, seq_len=16, seed=0):
    """Label: does token 1 occur more often than token 2?"""
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, vocab, size=(count, seq_len))
    labels = ((tokens == 1).sum(axis=1) > (tokens == 2).sum(axis=1)).astype(np.int64)
    return torch.tensor(tokens, dtype=torch.long), torch.tensor(labels, dtype=torch.long)


def build_models(dropout=0.1):
    return (TransformerClassifier(dropout=dropout),)


def train(model, epochs=3, batch_size=32, warmup=20, shuffle=True, checkpoint=None, log=print):
    tokens, labels = make_data()
    loader = DataLoader(TensorDataset(tokens, labels), batch_size=batch_size, shuffle=shuffle)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / warmup))
    losses = []
    for epoch in range(epochs):
        model.train()
        for x, y in loader:
            logits = model(x)
            loss = criterion(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
        log(f"epoch {epoch}: loss {losses[-1]:.4f}")
    if checkpoint is not None:
        torch.save(model.state_dict(), checkpoint)
        model.load_state_dict(torch.load(checkpoint))
    return losses


if __name__ == "__main__":
    torch.manual_seed(0)
    train(*build_models())
