"""graykode/nlp-tutorial's NNLM written by hand in MindSpore, as a MindSpore engineer
would: the same network (an embedding, a tanh hidden layer, a direct connection and
two biases), the same three sentences as one batch, AdamW with the same learning
rate, the training step (value_and_grad and the optimizer) compiled with
``mindspore.jit`` as the migration guide's Trainer does, and the same printed lines.
The training-script benchmark runs it in the converted script's directory and times
it as it times the converted script: the hand-written side of issue 26's speed
target. Nothing here is converted code."""

import os

import numpy as np

import mindspore
from mindspore import nn, ops

# the setting `convert --jit` writes (benchmarks/README.md): compiled steps run in the calling
# thread, not through a queue whose worker spins between them
os.environ.setdefault("MS_DEV_HOST_BLOCKING_RUN", "1")

n_step = 2
n_hidden = 2
m = 2

sentences = ["i like dog", "i love coffee", "i hate milk"]
word_list = list(set(" ".join(sentences).split()))
word_dict = {w: i for i, w in enumerate(word_list)}
number_dict = {i: w for i, w in enumerate(word_list)}
n_class = len(word_dict)


class NNLM(nn.Cell):
    def __init__(self):
        super().__init__()
        self.C = nn.Embedding(n_class, m, embedding_table=mindspore.common.initializer.Normal(1.0))
        self.H = nn.Dense(n_step * m, n_hidden, has_bias=False)
        self.d = mindspore.Parameter(ops.ones(n_hidden))
        self.U = nn.Dense(n_hidden, n_class, has_bias=False)
        self.W = nn.Dense(n_step * m, n_class, has_bias=False)
        self.b = mindspore.Parameter(ops.ones(n_class))

    def construct(self, X):
        X = self.C(X).reshape(-1, n_step * m)
        return self.b + self.W(X) + self.U(ops.tanh(self.d + self.H(X)))


model = NNLM()
optimizer = mindspore.experimental.optim.AdamW(model.trainable_params(), lr=0.001, weight_decay=0.0)
words = [sen.split() for sen in sentences]
input_batch = mindspore.Tensor(np.array([[word_dict[n] for n in w[:-1]] for w in words], dtype=np.int32))
target_batch = mindspore.Tensor(np.array([word_dict[w[-1]] for w in words], dtype=np.int32))


def forward_fn(x, y):
    return ops.cross_entropy(model(x), y)


grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)


@mindspore.jit
def train_step(x, y):
    loss, grads = grad_fn(x, y)
    optimizer(grads)
    return loss


model.set_train(True)
for epoch in range(5000):
    loss = train_step(input_batch, target_batch)
    if (epoch + 1) % 1000 == 0:
        print("Epoch:", "%04d" % (epoch + 1), "cost =", "{:.6f}".format(float(loss)), flush=True)

model.set_train(False)
predict = model(input_batch).argmax(1).asnumpy()
print([w[:2] for w in words], "->", [number_dict[int(n)] for n in predict])
