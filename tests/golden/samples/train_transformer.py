"""A small transformer classifier of token sequences trained with AdamW and a
linear warmup schedule stepped every batch, with a checkpoint saved and
restored at the end."""

import math

import numpy as np
import mindspore
from mindspore import nn, ops


class SelfAttention(nn.Cell):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Dense(dim, 3 * dim)
        self.proj = nn.Dense(dim, dim)

    def construct(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, -1)
        q = q.reshape(b, t, self.heads, d // self.heads).swapaxes(1, 2)
        k = k.reshape(b, t, self.heads, d // self.heads).swapaxes(1, 2)
        v = v.reshape(b, t, self.heads, d // self.heads).swapaxes(1, 2)
        scores = ops.matmul(q, k.swapaxes(-2, -1)) / math.sqrt(d // self.heads)
        out = ops.matmul(ops.softmax(scores, axis=-1), v)
        return self.proj(out.swapaxes(1, 2).reshape(b, t, d))


class Block(nn.Cell):
    def __init__(self, dim, heads, dropout):
        super().__init__()
        self.norm1 = nn.LayerNorm((dim,), epsilon=1e-05)
        self.attn = SelfAttention(dim, heads)
        self.norm2 = nn.LayerNorm((dim,), epsilon=1e-05)
        self.mlp = nn.SequentialCell(
            nn.Dense(dim, 4 * dim), nn.GELU(approximate=False), nn.Dense(4 * dim, dim)
        )
        self.drop = nn.Dropout(p=dropout)

    def construct(self, x):
        x = x + self.drop(self.attn(self.norm1(x)))
        return x + self.drop(self.mlp(self.norm2(x)))


class TransformerClassifier(nn.Cell):
    def __init__(self, vocab=20, dim=32, heads=4, depth=2, seq_len=16, classes=2, dropout=0.1):
        super().__init__()
        self.tokens = nn.Embedding(
            vocab, dim, embedding_table=mindspore.common.initializer.Normal(1.0)
        )
        self.positions = nn.Embedding(
            seq_len, dim, embedding_table=mindspore.common.initializer.Normal(1.0)
        )
        self.blocks = nn.CellList([Block(dim, heads, dropout) for _ in range(depth)])
        self.norm = nn.LayerNorm((dim,), epsilon=1e-05)
        self.head = nn.Dense(dim, classes)

    def construct(self, tokens):
        positions = ops.arange(tokens.shape[1])
        x = self.tokens(tokens) + self.positions(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x).mean(dim=1))


def make_data(count=512, vocab=20, seq_len=16, seed=0):
    """Label: does token 1 occur more often than token 2?"""
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, vocab, size=(count, seq_len))
    labels = ((tokens == 1).sum(axis=1) > (tokens == 2).sum(axis=1)).astype(np.int64)
    return mindspore.Tensor(tokens, dtype=mindspore.int64), mindspore.Tensor(
        labels, dtype=mindspore.int64
    )


def build_models(dropout=0.1):
    return (TransformerClassifier(dropout=dropout),)


def train(model, epochs=3, batch_size=32, warmup=20, shuffle=True, checkpoint=None, log=print):
    tokens, labels = make_data()
    loader = mindspore.dataset.GeneratorDataset(
        list(zip(np.asarray(tokens), np.asarray(labels))),
        column_names=["data", "label"],
        shuffle=shuffle,
    ).batch(batch_size, drop_remainder=False)
    criterion = lambda input, target: ops.cross_entropy(input, target)
    optimizer = mindspore.experimental.optim.AdamW(
        model.trainable_params(), lr=3e-3, weight_decay=0.01
    )
    scheduler = mindspore.experimental.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / warmup)
    )
    losses = []
    def forward_fn(x, y):
        logits = model(x)
        loss = criterion(logits, y)
        return loss
    grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
    for epoch in range(epochs):
        model.set_train(True)
        for x, y in loader:
            loss, grads = grad_fn(x, y)
            optimizer(grads)
            scheduler.step()
            losses.append(loss.item())
        log(f"epoch {epoch}: loss {losses[-1]:.4f}")
    if checkpoint is not None:
        mindspore.save_checkpoint(model, checkpoint)
        mindspore.load_param_into_net(
            model,
            mindspore.load_checkpoint(str(checkpoint).removesuffix(".ckpt") + ".ckpt"),
        )
    return losses


if __name__ == "__main__":
    mindspore.set_seed(0)
    train(*build_models())
