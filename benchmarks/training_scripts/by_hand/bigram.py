"""karpathy/ng-video-lecture's bigram.py written by hand in MindSpore, as a MindSpore
engineer would: the same model, hyperparameters, data and printed lines; batches cut
with NumPy and handed over as one tensor each; the training step (value_and_grad and
the optimizer) and the evaluation step compiled with ``mindspore.jit``, as the
migration guide's Trainer does. The training-script benchmark runs it in the
converted script's directory (the same input.txt) and times it as it times the
converted script: the hand-written side of issue 26's speed target. Nothing here
is converted code."""

import os

import numpy as np

import mindspore
from mindspore import nn, ops

# the setting `convert --jit` writes (benchmarks/README.md): compiled steps run in the calling
# thread, not through a queue whose worker spins between them
os.environ.setdefault("MS_DEV_HOST_BLOCKING_RUN", "1")

# hyperparameters
batch_size = 32
block_size = 8
max_iters = 3000
eval_interval = 300
learning_rate = 1e-2
eval_iters = 200

mindspore.set_seed(1337)
rng = np.random.default_rng(1337)

with open("input.txt", "r", encoding="utf-8") as f:
    text = f.read()

chars = sorted(list(set(text)))
vocab_size = len(chars)
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for i, ch in enumerate(chars)}
encode = lambda s: [stoi[c] for c in s]  # noqa: E731
decode = lambda l: "".join([itos[i] for i in l])  # noqa: E731

data = np.array(encode(text), dtype=np.int32)
n = int(0.9 * len(data))
train_data = data[:n]
val_data = data[n:]
offsets = np.arange(block_size)


def get_batch(split):
    source = train_data if split == "train" else val_data
    ix = rng.integers(0, len(source) - block_size, size=(batch_size, 1))
    return mindspore.Tensor(source[ix + offsets]), mindspore.Tensor(source[ix + 1 + offsets])


class BigramLanguageModel(nn.Cell):
    def __init__(self, vocab_size):
        super().__init__()
        self.token_embedding_table = nn.Embedding(vocab_size, vocab_size,
                                                  embedding_table=mindspore.common.initializer.Normal(1.0))

    def construct(self, idx, targets):
        logits = self.token_embedding_table(idx)
        B, T, C = logits.shape
        return ops.cross_entropy(logits.view(B * T, C), targets.view(B * T))


model = BigramLanguageModel(vocab_size)
optimizer = mindspore.experimental.optim.AdamW(model.trainable_params(), lr=learning_rate)
grad_fn = mindspore.value_and_grad(model, None, optimizer.parameters)


@mindspore.jit
def train_step(xb, yb):
    loss, grads = grad_fn(xb, yb)
    optimizer(grads)
    return loss


@mindspore.jit
def eval_step(xb, yb):
    return model(xb, yb)


def estimate_loss():
    out = {}
    model.set_train(False)
    for split in ["train", "val"]:
        losses = np.zeros(eval_iters, dtype=np.float32)
        for k in range(eval_iters):
            losses[k] = eval_step(*get_batch(split)).asnumpy()
        out[split] = losses.mean()
    model.set_train(True)
    return out


model.set_train(True)
for iter in range(max_iters):
    if iter % eval_interval == 0:
        losses = estimate_loss()
        print(f"step {iter}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}", flush=True)
    train_step(*get_batch("train"))
