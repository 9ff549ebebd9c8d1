"""graykode/nlp-tutorial's Seq2Seq written by hand in MindSpore, as a MindSpore engineer
would: the same network (a tanh RNN encoder whose last state starts a tanh RNN decoder
over one-hot letters, and a dense layer), the same six word pairs as one batch, a zero
initial state each step, Adam with the same learning rate, the training step
(value_and_grad and the optimizer) compiled with ``mindspore.jit`` as the migration
guide's Trainer does, and the same printed lines. The loss is torch's sum over the
batch of each pair's mean cross-entropy, taken as one cross-entropy over every letter
times the batch size (the pairs are padded to one length). The training-script
benchmark runs it in the converted script's directory and times it as it times the
converted script: the hand-written side of issue 26's speed target. Nothing here is
converted code."""

import os

import numpy as np

import mindspore
from mindspore import nn, ops

# the setting `convert --jit` writes (benchmarks/README.md): compiled steps run in the calling
# thread, not through a queue whose worker spins between them
os.environ.setdefault("MS_DEV_HOST_BLOCKING_RUN", "1")

n_step = 5
n_hidden = 128
char_arr = list("SEPabcdefghijklmnopqrstuvwxyz")
num_dic = {n: i for i, n in enumerate(char_arr)}
seq_data = [["man", "women"], ["black", "white"], ["king", "queen"], ["girl", "boy"], ["up", "down"], ["high", "low"]]
n_class = len(num_dic)
batch_size = len(seq_data)


def padded(word: str) -> str:
    return word + "P" * (n_step - len(word))


one_hot = np.eye(n_class, dtype=np.float32)
enc_input = mindspore.Tensor(one_hot[[[num_dic[c] for c in padded(a)] for a, _ in seq_data]])
dec_input = mindspore.Tensor(one_hot[[[num_dic[c] for c in "S" + padded(b)] for _, b in seq_data]])
target = mindspore.Tensor(np.array([[num_dic[c] for c in padded(b) + "E"] for _, b in seq_data], dtype=np.int32))
hidden = mindspore.Tensor(np.zeros((1, batch_size, n_hidden), dtype=np.float32))


class Seq2Seq(nn.Cell):
    def __init__(self):
        super().__init__()
        self.enc_cell = nn.RNN(input_size=n_class, hidden_size=n_hidden, batch_first=True)
        self.dec_cell = nn.RNN(input_size=n_class, hidden_size=n_hidden, batch_first=True)
        self.fc = nn.Dense(n_hidden, n_class)

    def construct(self, enc_input, enc_hidden, dec_input):
        _, enc_states = self.enc_cell(enc_input, enc_hidden)
        outputs, _ = self.dec_cell(dec_input, enc_states)
        return self.fc(outputs)  # [batch, n_step + 1, n_class]


model = Seq2Seq()
optimizer = mindspore.experimental.optim.Adam(model.trainable_params(), lr=0.001)


def forward_fn(h):
    logits = model(enc_input, h, dec_input)
    return ops.cross_entropy(logits.reshape(-1, n_class), target.reshape(-1)) * batch_size


grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)


@mindspore.jit
def train_step(h):
    loss, grads = grad_fn(h)
    optimizer(grads)
    return loss


model.set_train(True)
for epoch in range(5000):
    loss = train_step(hidden)
    if (epoch + 1) % 1000 == 0:
        print("Epoch:", "%04d" % (epoch + 1), "cost =", "{:.6f}".format(float(loss)), flush=True)
