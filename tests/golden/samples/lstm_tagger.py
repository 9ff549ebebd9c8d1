"""An LSTM sequence tagger: embeddings, a 2-layer LSTM, a per-token classifier."""

import mindspore
from mindspore import nn, ops


class LSTMTagger(nn.Cell):
    def __init__(self, vocab_size=100, embed_dim=32, hidden_dim=64, num_tags=5, dropout=0.1):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.embedding = nn.Embedding(
            vocab_size,
            embed_dim,
            embedding_table=mindspore.common.initializer.Normal(1.0),
        )
        self.lstm = nn.LSTM(
            embed_dim,
            hidden_dim,
            num_layers=2,
            batch_first=True,
            dropout=float(dropout),
        )
        self.dropout = nn.Dropout(p=dropout)
        self.classifier = nn.Dense(hidden_dim, num_tags)

    def construct(self, tokens):
        embedded = self.dropout(self.embedding(tokens))
        batch = tokens.shape[0]
        h0 = ops.zeros((2, batch, self.hidden_dim))
        c0 = ops.zeros((2, batch, self.hidden_dim))
        output, (hn, cn) = self.lstm(embedded, (h0, c0))
        scores = self.classifier(self.dropout(output))
        return ops.log_softmax(scores, -1)


def make_model():
    return LSTMTagger()


def make_inputs():
    return (ops.randint(0, 100, (3, 12)),)


if __name__ == "__main__":
    model = make_model()
    model.set_train(False)
    tag_scores = model(*make_inputs())
    print("tag scores", tuple(tag_scores.shape))
    print("predicted", tag_scores.argmax(-1)[0].tolist())
