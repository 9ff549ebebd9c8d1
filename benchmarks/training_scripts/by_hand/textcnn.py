"""graykode/nlp-tutorial's TextCNN written by hand in MindSpore, as a MindSpore engineer
would: the same network (an embedding, three 2x2 convolutions with max pooling over
the sentence, a dense layer and a bias), the same six sentences as one batch, AdamW
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

embedding_size = 2
sequence_length = 3
num_classes = 2
filter_sizes = [2, 2, 2]
num_filters = 3


class TextCNN(nn.Cell):
    def __init__(self, vocab_size):
        super().__init__()
        self.num_filters_total = num_filters * len(filter_sizes)
        self.W = nn.Embedding(vocab_size, embedding_size, embedding_table=mindspore.common.initializer.Normal(1.0))
        self.Weight = nn.Dense(self.num_filters_total, num_classes, has_bias=False)
        self.Bias = mindspore.Parameter(ops.ones([num_classes]))
        self.convs = nn.CellList([nn.Conv2d(1, num_filters, (size, embedding_size), pad_mode="valid", has_bias=True)
                                  for size in filter_sizes])
        self.pools = nn.CellList([nn.MaxPool2d((sequence_length - size + 1, 1)) for size in filter_sizes])

    def construct(self, X):
        embedded = self.W(X).unsqueeze(1)  # [batch, 1, sequence_length, embedding_size]
        pooled = [pool(ops.relu(conv(embedded))) for conv, pool in zip(self.convs, self.pools)]
        h_pool = ops.cat(pooled, 1).reshape(-1, self.num_filters_total)
        return self.Weight(h_pool) + self.Bias


sentences = ["i love you", "he loves me", "she likes baseball", "i hate you", "sorry for that", "this is awful"]
labels = [1, 1, 1, 0, 0, 0]
word_list = list(set(" ".join(sentences).split()))
word_dict = {w: i for i, w in enumerate(word_list)}

model = TextCNN(len(word_dict))
optimizer = mindspore.experimental.optim.AdamW(model.trainable_params(), lr=0.001, weight_decay=0.0)
inputs = mindspore.Tensor(np.array([[word_dict[n] for n in sen.split()] for sen in sentences], dtype=np.int32))
targets = mindspore.Tensor(np.array(labels, dtype=np.int32))


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
    loss = train_step(inputs, targets)
    if (epoch + 1) % 1000 == 0:
        print("Epoch:", "%04d" % (epoch + 1), "cost =", "{:.6f}".format(float(loss)), flush=True)

model.set_train(False)
test_text = "sorry hate you"
test_batch = mindspore.Tensor(np.array([[word_dict[n] for n in test_text.split()]], dtype=np.int32))
predict = model(test_batch).argmax(1)
print(test_text, "is Bad Mean..." if int(predict[0]) == 0 else "is Good Mean!!")
