"""A small GPT-style decoder: causal self-attention, MLP with GELU, pre-LayerNorm."""

import math

import mindspore
from mindspore import nn, ops


class CausalSelfAttention(nn.Cell):
    def __init__(self, n_embd, n_head, block_size, dropout=0.0):
        super().__init__()
        assert n_embd % n_head == 0
        self.n_head = n_head
        # query, key, value projections for all heads, in a batch
        self.c_attn = nn.Dense(n_embd, 3 * n_embd)
        self.c_proj = nn.Dense(n_embd, n_embd)
        self.attn_dropout = nn.Dropout(p=dropout)
        self.resid_dropout = nn.Dropout(p=dropout)
        mask = ops.tril(ops.ones((block_size, block_size)))
        self.bias = mindspore.Parameter(
            mask.view(1, 1, block_size, block_size), name="bias", requires_grad=False
        )

    def construct(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).swapaxes(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).swapaxes(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).swapaxes(1, 2)
        att = (q @ k.swapaxes(-2, -1)) * (1.0 / math.sqrt(k.shape[-1]))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = ops.softmax(att, axis=-1)
        att = self.attn_dropout(att)
        y = att @ v
        y = y.swapaxes(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Cell):
    def __init__(self, n_embd, dropout=0.0):
        super().__init__()
        self.c_fc = nn.Dense(n_embd, 4 * n_embd)
        self.gelu = nn.GELU(approximate=False)
        self.c_proj = nn.Dense(4 * n_embd, n_embd)
        self.dropout = nn.Dropout(p=dropout)

    def construct(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Cell):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.ln_1 = nn.LayerNorm((n_embd,), epsilon=1e-05)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size)
        self.ln_2 = nn.LayerNorm((n_embd,), epsilon=1e-05)
        self.mlp = MLP(n_embd)

    def construct(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class TinyGPT(nn.Cell):
    def __init__(self, vocab_size=64, block_size=16, n_embd=32, n_head=4, n_layer=2):
        super().__init__()
        self.tok_emb = nn.Embedding(
            vocab_size, n_embd, embedding_table=mindspore.common.initializer.Normal(1.0)
        )
        self.pos_emb = nn.Embedding(
            block_size, n_embd, embedding_table=mindspore.common.initializer.Normal(1.0)
        )
        self.blocks = nn.SequentialCell(
            *[Block(n_embd, n_head, block_size) for _ in range(n_layer)]
        )
        self.ln_f = nn.LayerNorm((n_embd,), epsilon=1e-05)
        self.head = nn.Dense(n_embd, vocab_size, has_bias=False)

    def construct(self, idx):
        b, t = idx.shape
        pos = ops.arange(0, t, dtype=mindspore.int64)
        x = self.tok_emb(idx) + self.pos_emb(pos)
        x = self.blocks(x)
        return self.head(self.ln_f(x))


def make_model():
    return TinyGPT()


def make_inputs():
    return (ops.randint(0, 64, (2, 16)),)


if __name__ == "__main__":
    model = make_model()
    model.set_train(False)
    logits = model(*make_inputs())
    print("logits", tuple(logits.shape))
