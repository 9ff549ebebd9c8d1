"""LSTM language model on a synthetic token stream: truncated backpropagation
through time with the hidden state carried across batches, gradient clipping
and a StepLR schedule stepped every epoch."""

import numpy as np
import torch
import torch.nn as nn


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
    return torch.tensor(tokens[: steps * batch_size].reshape(batch_size, steps), dtype=torch.long)


def get_batch(data, i, bptt):
    seq_len = min(bptt, data.shape[1] - 1 - i)
    return data[:, i : i + seq_len], data[:, i + 1 : i + 1 + seq_len]


def repackage_hidden(hidden):
    """Cut the graph between batches (truncated BPTT)."""
    return tuple(h.detach() for h in hidden)


class LanguageModel(nn.Module):
    def __init__(self, vocab=16, embed=32, hidden=64, layers=2, dropout=0.2):
        super().__init__()
        self.hidden_size = hidden
        self.layers = layers
        self.embedding = nn.Embedding(vocab, embed)
        self.drop = nn.Dropout(dropout)
        self.lstm = nn.LSTM(embed, hidden, num_layers=layers, batch_first=True)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, tokens, hidden):
        emb = self.drop(self.embedding(tokens))
        output, hidden = self.lstm(emb, hidden)
        return self.decoder(self.drop(output)), hidden

    def init_hidden(self, batch_size):
        return (torch.zeros(self.layers, batch_size, self.hidden_size),
                torch.zeros(self.layers, batch_size, self.hidden_size))


def build_models(dropout=0.2):
    return (LanguageModel(dropout=dropout),)


def train(model, epochs=3, batch_size=8, bptt=20, clip=0.5, vocab=16, log=print):
    data = batchify(make_corpus(vocab=vocab), batch_size)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    losses = []
    for epoch in range(epochs):
        model.train()
        hidden = model.init_hidden(batch_size)
        for i in range(0, data.shape[1] - 1, bptt):
            inputs, targets = get_batch(data, i, bptt)
            hidden = repackage_hidden(hidden)
            optimizer.zero_grad()
            output, hidden = model(inputs, hidden)
            loss = criterion(output.reshape(-1, vocab), targets.reshape(-1))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()
            losses.append(loss.item())
        scheduler.step()
        log(f"epoch {epoch}: loss {losses[-1]:.3f}, lr {float(scheduler.get_last_lr()[0]):.3f}")
    return losses


if __name__ == "__main__":
    torch.manual_seed(0)
    train(*build_models())
