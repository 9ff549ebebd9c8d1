"""LSTM language model on a synthetic token stream: truncated backpropagation
through time with the hidden state carried across batches, gradient clipping
and a StepLR schedule stepped every epoch."""

import numpy as np
import mindspore
from mindspore import nn, ops


def make_corpus(length=2400, vocab=16, seed=0):
    """A noisy repeating pattern: the next token is mostly predictable."""
    rng = np.random.default_rng(seed)
    pattern = rng.integers(0, vocab, size=12)
    tokens = np.tile(pattern, length // 12 + 1)[:length]
    noise = rng.random(length) < 0.1
    tokens[noise] = rng.integers(0, vocab, size=int(noise.sum()))
    return tokens


def batchify(tokens, batch_size):
    steps = len(tokens) // batch_size
    return mindspore.Tensor(
        tokens[: steps * batch_size].reshape(batch_size, steps), dtype=mindspore.int64
    )


def get_batch(data, i, bptt):
    seq_len = min(bptt, data.shape[1] - 1 - i)
    return data[:, i : i + seq_len], data[:, i + 1 : i + 1 + seq_len]


def repackage_hidden(hidden):
    """Cut the graph between batches (truncated BPTT)."""
    return tuple(ops.stop_gradient(h) for h in hidden)


class LanguageModel(nn.Cell):
    def __init__(self, vocab=16, embed=32, hidden=64, layers=2, dropout=0.2):
        super().__init__()
        self.hidden_size = hidden
        self.layers = layers
        self.embedding = nn.Embedding(
            vocab, embed, embedding_table=mindspore.common.initializer.Normal(1.0)
        )
        self.drop = nn.Dropout(p=dropout)
        self.lstm = nn.LSTM(embed, hidden, num_layers=layers, batch_first=True)
        self.decoder = nn.Dense(hidden, vocab)

    def construct(self, tokens, hidden):
        emb = self.drop(self.embedding(tokens))
        output, hidden = self.lstm(emb, hidden)
        return self.decoder(self.drop(output)), hidden

    def init_hidden(self, batch_size):
        return (
            ops.zeros((self.layers, batch_size, self.hidden_size)),
            ops.zeros((self.layers, batch_size, self.hidden_size)),
        )


def build_models(dropout=0.2):
    return (LanguageModel(dropout=dropout),)


def train(model, epochs=3, batch_size=8, bptt=20, clip=0.5, vocab=16, log=print):
    data = batchify(make_corpus(vocab=vocab), batch_size)
    criterion = lambda input, target: ops.cross_entropy(input, target)
    optimizer = mindspore.experimental.optim.SGD(
        model.trainable_params(), lr=1.0, momentum=0.9
    )
    scheduler = mindspore.experimental.optim.lr_scheduler.StepLR(
        optimizer, step_size=1, gamma=0.5
    )
    losses = []
    def forward_fn(inputs, hidden, targets):
        output, hidden = model(inputs, hidden)
        loss = criterion(output.reshape(-1, vocab), targets.reshape(-1))
        return loss, hidden
    grad_fn = mindspore.value_and_grad(
        forward_fn, None, optimizer.parameters, has_aux=True
    )
    for epoch in range(epochs):
        model.set_train(True)
        hidden = model.init_hidden(batch_size)
        for i in range(0, data.shape[1] - 1, bptt):
            inputs, targets = get_batch(data, i, bptt)
            hidden = repackage_hidden(hidden)
            (loss, hidden), grads = grad_fn(inputs, hidden, targets)
            grads = ops.clip_by_global_norm(grads, clip)
            optimizer(grads)
            losses.append(loss.item())
        scheduler.step()
        log(f"epoch {epoch}: loss {losses[-1]:.3f}, lr {float(scheduler.get_last_lr()[0]):.3f}")
    return losses


if __name__ == "__main__":
    mindspore.set_seed(0)
    train(*build_models())
