"""Attention: scaled dot-product self-attention, a pre-norm transformer block,
torch's MultiheadAttention, and an attention returning (output, weights)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention(nn.Module):
    def __init__(self, dim=16, heads=2):
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
        weights = F.softmax(scores, dim=-1)
        out = torch.matmul(weights, v).transpose(1, 2).reshape(b, t, d)
        return self.proj(out)


class TransformerBlock(nn.Module):
    def __init__(self, dim=16, heads=2, hidden=32):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim), nn.Dropout(0.1))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyEncoder(nn.Module):
    def __init__(self, vocab=40, dim=16, depth=2):
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList([TransformerBlock(dim) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)

    def forward(self, ids):
        x = self.tokens(ids)
        for layer in self.layers:
            x = layer(x)
        return self.norm(x)


class TorchMHA(nn.Module):
    def __init__(self, dim=16, heads=4):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        out, _ = self.attn(x, x, x)
        return self.norm(out + x)


class AttentionWithWeights(nn.Module):
    """Single-head attention returning (output, attention weights)."""

    def __init__(self, dim=8):
        super().__init__()
        self.query = nn.Linear(dim, dim, bias=False)
        self.key = nn.Linear(dim, dim, bias=False)
        self.value = nn.Linear(dim, dim)
        self.scale = dim**-0.5

    def forward(self, x):
        scores = torch.bmm(self.query(x), self.key(x).transpose(1, 2)) * self.scale
        attn = torch.softmax(scores, dim=-1)
        return torch.bmm(attn, self.value(x)), attn


VERIFY = {
    "SelfAttention": ["2,5,16"],
    "TransformerBlock": ["2,5,16"],
    "TinyEncoder": ["2,6:int64:0-40"],
    "TorchMHA": ["2,5,16"],
    "AttentionWithWeights": ["2,4,8"],
}
