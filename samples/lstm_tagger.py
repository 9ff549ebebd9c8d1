"""An LSTM sequence tagger: embeddings, a 2-layer LSTM, a per-token classifier."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class LSTMTagger(nn.Module):
    def __init__(self, vocab_size=100, embed_dim=32, hidden_dim=64, num_tags=5, dropout=0.1):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.lstm = nn.LSTM(embed_dim, hidden_dim, num_layers=2, batch_first=True, dropout=dropout)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(hidden_dim, num_tags)

    def forward(self, tokens):
        embedded = self.dropout(self.embedding(tokens))
        batch = tokens.size(0)
        h0 = torch.zeros(2, batch, self.hidden_dim)
        c0 = torch.zeros(2, batch, self.hidden_dim)
        output, (hn, cn) = self.lstm(embedded, (h0, c0))
        scores = self.classifier(self.dropout(output))
        return F.log_softmax(scores, dim=-1)


def make_model():
    return LSTMTagger()


def make_inputs():
    return (torch.randint(0, 100, (3, 12)),)


if __name__ == "__main__":
    model = make_model()
    model.eval()
    with torch.no_grad():
        tag_scores = model(*make_inputs())
    print("tag scores", tuple(tag_scores.shape))
    print("predicted", tag_scores.argmax(-1)[0].tolist())
