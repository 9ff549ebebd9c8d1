"""graykode/nlp-tutorial's 4-1.Seq2Seq/Seq2Seq.py written by hand in MindSpore, as a
MindSpore engineer would: the same RNN encoder-decoder, hyperparameters, data and
printed lines; the batch built once with NumPy; the loss over the whole batch as one
cross-entropy (the per-sample sum the original loops over, times the batch size);
the training step (value_and_grad and the optimizer) compiled with ``mindspore.jit``,
as the migration guide's Trainer does. The training-script benchmark runs it in the
converted script's directory and times it as it times the converted script: the
hand-written side of issue 26's speed target. Nothing here is converted code."""

import numpy as np

import mindspore
from mindspore import nn, ops

n_step = 5
n_hidden = 128

char_arr = [c for c in "SEPabcdefghijklmnopqrstuvwxyz"]
num_dic = {n: i for i, n in enumerate(char_arr)}
seq_data = [["man", "women"], ["black", "white"], ["king", "queen"], ["girl", "boy"], ["up", "down"],
            ["high", "low"]]
n_class = len(num_dic)
batch_size = len(seq_data)


def make_batch():
    eye = np.eye(n_class, dtype=np.float32)
    inputs, outputs, targets = [], [], []
    for source, target in seq_data:
        source = source + "P" * (n_step - len(source))
        target = target + "P" * (n_step - len(target))
        inputs.append(eye[[num_dic[n] for n in source]])
        outputs.append(eye[[num_dic[n] for n in "S" + target]])
        targets.append([num_dic[n] for n in target + "E"])
    return (mindspore.Tensor(np.stack(inputs)), mindspore.Tensor(np.stack(outputs)),
            mindspore.Tensor(np.array(targets, dtype=np.int32)))


class Seq2Seq(nn.Cell):
    def __init__(self):
        super().__init__()
        self.enc_cell = nn.RNN(n_class, n_hidden, batch_first=True)
        self.dec_cell = nn.RNN(n_class, n_hidden, batch_first=True)
        self.fc = nn.Dense(n_hidden, n_class)

    def construct(self, enc_input, enc_hidden, dec_input):
        _, enc_states = self.enc_cell(enc_input, enc_hidden)
        outputs, _ = self.dec_cell(dec_input, enc_states)
        return self.fc(outputs)  # [batch_size, n_step + 1, n_class]


model = Seq2Seq()
optimizer = mindspore.experimental.optim.AdamW(model.trainable_params(), lr=0.001, weight_decay=0.0)
input_batch, output_batch, target_batch = make_batch()
hidden = ops.zeros((1, batch_size, n_hidden), mindspore.float32)


def forward_fn(enc_input, enc_hidden, dec_input, target):
    logits = model(enc_input, enc_hidden, dec_input)
    return ops.cross_entropy(logits.reshape(-1, n_class), target.reshape(-1)) * batch_size


grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)


@mindspore.jit
def train_step(enc_input, enc_hidden, dec_input, target):
    loss, grads = grad_fn(enc_input, enc_hidden, dec_input, target)
    optimizer(grads)
    return loss


model.set_train(True)
for epoch in range(5000):
    loss = train_step(input_batch, hidden, output_batch, target_batch)
    if (epoch + 1) % 1000 == 0:
        print("Epoch:", "%04d" % (epoch + 1), "cost =", "{:.6f}".format(float(loss)), flush=True)
