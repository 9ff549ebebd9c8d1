"""Recurrent networks: LSTM (stacked, bidirectional), GRU, Elman RNN."""

import torch
import torch.nn as nn


class BiLSTMClassifier(nn.Module):
    def __init__(self, input_size=6, hidden=8, num_classes=3):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, num_classes)

    def forward(self, x):
        out, (h, c) = self.lstm(x)
        return self.fc(out[:, -1, :])


class LSTMWithState(nn.Module):
    """Returns the output sequence and the final states (a nested tuple)."""

    def __init__(self, input_size=5, hidden=7):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden)

    def forward(self, x):
        return self.lstm(x)


class GRUTagger(nn.Module):
    def __init__(self, vocab=50, dim=8, hidden=12, tags=4):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.gru = nn.GRU(dim, hidden, batch_first=True)
        self.out = nn.Linear(hidden, tags)

    def forward(self, tokens):
        states, _ = self.gru(self.embed(tokens))
        return self.out(states)


class ElmanRNN(nn.Module):
    def __init__(self, input_size=4, hidden=6):
        super().__init__()
        self.rnn = nn.RNN(input_size, hidden, num_layers=2, batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        out, h = self.rnn(x)
        return self.head(out), h


VERIFY = {
    "BiLSTMClassifier": ["2,5,6"],
    "LSTMWithState": ["5,2,5"],
    "GRUTagger": ["2,7:int64:0-50"],
    "ElmanRNN": ["3,5,4"],
}
