"""LeNet-5 style classifier trained on synthetic 28x28 images."""

import mindspore
from mindspore import nn, ops


class LeNet(nn.Cell):
    def __init__(self, num_classes=10):
        super(LeNet, self).__init__()
        # feature extractor: two conv/pool stages
        self.conv1 = nn.Conv2d(
            1, 6, kernel_size=5, pad_mode="pad", padding=2, has_bias=True
        )
        self.pool = nn.MaxPool2d(2, stride=2)
        self.conv2 = nn.Conv2d(6, 16, kernel_size=5, pad_mode="valid", has_bias=True)
        # classifier head
        self.fc1 = nn.Dense(16 * 5 * 5, 120)
        self.fc2 = nn.Dense(120, 84)
        self.fc3 = nn.Dense(84, num_classes)

    def construct(self, x):
        x = self.pool(ops.relu(self.conv1(x)))
        x = self.pool(ops.relu(self.conv2(x)))
        x = ops.flatten(x, start_dim=1)  # keep the batch dimension
        x = ops.relu(self.fc1(x))
        x = ops.relu(self.fc2(x))
        return self.fc3(x)


def make_model():
    return LeNet()


def make_inputs():
    return (ops.randn(4, 1, 28, 28),)


def train(steps=20, batch_size=16):
    mindspore.set_seed(0)
    model = LeNet()
    criterion = lambda input, target: ops.cross_entropy(input, target)
    optimizer = mindspore.experimental.optim.SGD(
        model.trainable_params(), lr=0.05, momentum=0.9
    )
    images = ops.randn(batch_size * 4, 1, 28, 28)
    labels = ops.randint(0, 10, (batch_size * 4,))
    model.set_train(True)
    def forward_fn(x, y):
        loss = criterion(model(x), y)
        return loss
    grad_fn = mindspore.value_and_grad(forward_fn, None, optimizer.parameters)
    for step in range(steps):
        start = (step % 4) * batch_size
        x = images[start : start + batch_size]
        y = labels[start : start + batch_size]
        loss, grads = grad_fn(x, y)
        optimizer(grads)
        if step % 5 == 0:
            print(f"step {step}: loss {loss.item():.4f}")
    return loss.item()


if __name__ == "__main__":
    train()
