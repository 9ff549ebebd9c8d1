"""graykode/nlp-tutorial's TextRNN written by hand in MindSpore, as a MindSpore engineer
would: the same network (a one-layer tanh RNN over one-hot words, a dense layer and a
bias), the same three sentences as one batch, a zero initial state each step, AdamW
with the same learning rate, the training step (value_and_grad and the optimizer)
compiled with ``mindspore.jit`` as the migration guide's Trainer does, and the same
printed lines. The training-script benchmark runs it in the converted script's
directory and times it as it times the converted script: the hand-written side of
issue 26's speed target. Nothing here is converted code."""

import os

import numpy as np

import mindspore
from mindspore import nn, ops

# the setting `convert --jit` writes (benchmarks/README.md): compiled steps run in the calling
# thread, not through a queue whose worker spins between them
os.environ.setdefault("MS_DEV_HOST_BLOCKING_RUN", "1")

n_step = 2
n_hidden = 5

sentences = ["i like dog", "i love coffee", "i hate milk"]
word_list = list(set(" ".join(sentences).split()))
word_dict = {w: i for i, w in enumerate(word_list)}
number_dict = {i: w for i, w in enumerate(word_list)}
n_class = len(word_dict)
batch_size = len(sentences)


class TextRNN(nn.Cell):
    def __init__(self):
        super().__init__()
        self.rnn = nn.RNN(input_size=n_class, hidden_size=n_hidden, batch_first=True)
        self.W = nn.Dense(n_hidden, n_class, has_bias=False)
        self.b = mindspore.Parameter(ops.ones([n_class]))

    def construct(self, hidden, X):
        outputs, _ = self.rnn(X, hidden)
        return self.W(outputs[:, -1]) + self.b


model = TextRNN()
optimizer = mindspore.experimental.optim.AdamW(model.trainable_params(), lr=0.001, weight_decay=0.0)
words = [sen.split() for sen in sentences]
input_batch = mindspore.Tensor(np.eye(n_class, dtype=np.float32)[[[word_dict[n] for n in w[:-1]] for w in words]])
target_batch = mindspore.Tensor(np.array([word_dict[w[-1]] for w in words], dtype=np.int32))
hidden = mindspore.Tensor(np.zeros((1, batch_size, n_hidden), dtype=np.float32))


def forward_fn(h, x, y):
    return ops.cross_entropy(model(h, x), y)


grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)


@mindspore.jit
def train_step(h, x, y):
    loss, grads = grad_fn(h, x, y)
    optimizer(grads)
    return loss


model.set_train(True)
for epoch in range(5000):
    loss = train_step(hidden, input_batch, target_batch)
    if (epoch + 1) % 1000 == 0:
        print("Epoch:", "%04d" % (epoch + 1), "cost =", "{:.6f}".format(float(loss)), flush=True)

model.set_train(False)
predict = model(hidden, input_batch).argmax(1).asnumpy()
print([w[:2] for w in words], "->", [number_dict[int(n)] for n in predict])
