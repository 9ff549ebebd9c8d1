"""vinhkhuc/PyTorch-Mini-Tutorials' 2_logistic_regression.py (``--hidden 0``) and
3_neural_net.py (``--hidden 512``) written by hand in MindSpore, as a MindSpore
engineer would: the same network (a linear softmax regression, or 784-512-10 with a
sigmoid; no biases), SGD with momentum, minibatches of 100 sliced from the training
set in NumPy, the training step (value_and_grad and the optimizer) compiled with
``mindspore.jit`` as the migration guide's Trainer does, and the same printed lines.
The training-script benchmark runs it in the converted script's directory (the same
data files) and times it as it times the converted script: the hand-written side of
issue 26's speed target. Nothing here is converted code."""

import argparse
import os

import numpy as np

import mindspore
from mindspore import nn, ops

from data_util import load_mnist

# the setting `convert --jit` writes (benchmarks/README.md): compiled steps run in the calling
# thread, not through a queue whose worker spins between them
os.environ.setdefault("MS_DEV_HOST_BLOCKING_RUN", "1")


def build_model(input_dim, hidden, output_dim):
    if hidden:
        return nn.SequentialCell(nn.Dense(input_dim, hidden, has_bias=False), nn.Sigmoid(),
                                 nn.Dense(hidden, output_dim, has_bias=False))
    return nn.SequentialCell(nn.Dense(input_dim, output_dim, has_bias=False))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hidden", type=int, default=512, help="hidden units (0: softmax regression)")
    args = parser.parse_args()
    mindspore.set_seed(42)
    trX, teX, trY, teY = load_mnist(onehot=False)
    trX, teX, trY = trX.astype(np.float32), teX.astype(np.float32), trY.astype(np.int32)
    n_examples, n_features = trX.shape
    model = build_model(n_features, args.hidden, 10)
    optimizer = mindspore.experimental.optim.SGD(model.trainable_params(), lr=0.01, momentum=0.9)

    def forward_fn(x, y):
        return ops.cross_entropy(model(x), y)

    grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)

    @mindspore.jit
    def train_step(x, y):
        loss, grads = grad_fn(x, y)
        optimizer(grads)
        return loss

    batch_size = 100
    for i in range(100):
        model.set_train(True)
        cost = 0.
        num_batches = n_examples // batch_size
        for k in range(num_batches):
            start, end = k * batch_size, (k + 1) * batch_size
            cost += train_step(mindspore.Tensor(trX[start:end]), mindspore.Tensor(trY[start:end])).asnumpy()
        model.set_train(False)
        predY = model(mindspore.Tensor(teX)).asnumpy().argmax(axis=1)
        print("Epoch %d, cost = %f, acc = %.2f%%" % (i + 1, cost / num_batches, 100. * np.mean(predY == teY)),
              flush=True)


if __name__ == "__main__":
    main()
