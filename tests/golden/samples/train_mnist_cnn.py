"""MNIST-style CNN classification: a custom Dataset of synthetic 28x28 digits,
a DataLoader, Adam, accuracy bookkeeping, an evaluation loop and a checkpoint."""

import pathlib
import pickle

import numpy as np
import mindspore
from mindspore import nn, ops


class SyntheticDigits:
    """Noise images; the label brightens one band of rows, so it can be learned."""

    def __init__(self, count, seed=0):
        rng = np.random.default_rng(seed)
        self.labels = rng.integers(0, 10, size=count)
        images = rng.normal(0.0, 1.0, size=(count, 1, 28, 28)).astype(np.float32)
        for i, label in enumerate(self.labels):
            images[i, 0, label * 2 : label * 2 + 4, :] += 1.5
        self.images = images

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, idx):
        idx = int(idx)
        image = mindspore.Tensor(self.images[idx])
        label = mindspore.Tensor(self.labels[idx], dtype=mindspore.int64)
        return np.asarray(image), np.asarray(label)


class ConvNet(nn.Cell):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(
            1, 8, kernel_size=3, pad_mode="pad", padding=1, has_bias=True
        )
        self.conv2 = nn.Conv2d(
            8, 16, kernel_size=3, pad_mode="pad", padding=1, has_bias=True
        )
        self.pool = nn.MaxPool2d(2, stride=2)
        self.fc = nn.Dense(16 * 7 * 7, num_classes)

    def construct(self, x):
        x = self.pool(ops.relu(self.conv1(x)))
        x = self.pool(ops.relu(self.conv2(x)))
        return self.fc(ops.flatten(x, start_dim=1))


def build_models():
    return (ConvNet(),)


def evaluate(model, loader):
    model.set_train(False)
    correct, seen = 0, 0
    for images, labels in loader:
        logits = model(images)
        correct += (logits.argmax(dim=1) == labels).sum().item()
        seen += labels.shape[0]
    return correct / seen


def train(model, epochs=3, batch_size=32, shuffle=True, checkpoint=None, log=print):
    train_loader = mindspore.dataset.GeneratorDataset(
        SyntheticDigits(320), column_names=["image", "label"], shuffle=shuffle
    ).batch(batch_size, drop_remainder=True)
    test_loader = mindspore.dataset.GeneratorDataset(
        SyntheticDigits(64, seed=1), column_names=["image", "label"], shuffle=False
    ).batch(64, drop_remainder=False)
    criterion = lambda input, target: ops.cross_entropy(input, target)
    optimizer = mindspore.experimental.optim.AdamW(
        model.trainable_params(), lr=1e-3, weight_decay=0.0
    )
    losses = []
    def forward_fn(images, labels):
        logits = model(images)
        loss = criterion(logits, labels)
        return loss, logits
    grad_fn = mindspore.value_and_grad(
        forward_fn, None, optimizer.parameters, has_aux=True
    )
    for epoch in range(epochs):
        model.set_train(True)
        correct, seen = 0, 0
        for batch, (images, labels) in enumerate(train_loader):
            (loss, logits), grads = grad_fn(images, labels)
            optimizer(grads)
            # bookkeeping after the step
            losses.append(loss.item())
            correct += (logits.argmax(dim=1) == labels).sum().item()
            seen += labels.shape[0]
        log(f"epoch {epoch}: {len(train_loader)} batches, loss {losses[-1]:.4f}, "
            f"train acc {correct / seen:.2f}, test acc {evaluate(model, test_loader):.2f}")
    if checkpoint is not None:
        # a resumable checkpoint: model and optimizer state, and where training stopped
        mindspore.save_checkpoint(
            {
                **{
                    "model_state_dict." + name: value
                    for name, value in model.parameters_dict().items()
                },
                **{
                    "optimizer_state_dict." + name: value
                    for name, value in optimizer.parameters_dict().items()
                },
            },
            checkpoint,
        )
        pathlib.Path(str(checkpoint) + ".pkl").write_bytes(
            pickle.dumps({"epoch": epoch, "loss": loss})
        )
        state = mindspore.load_checkpoint(
            str(checkpoint).removesuffix(".ckpt") + ".ckpt"
        )
        state = {
            "model_state_dict": {
                name.removeprefix("model_state_dict."): value
                for name, value in state.items()
                if name.startswith("model_state_dict.")
            },
            "optimizer_state_dict": {
                name.removeprefix("optimizer_state_dict."): value
                for name, value in state.items()
                if name.startswith("optimizer_state_dict.")
            },
            **pickle.loads(pathlib.Path(str(checkpoint) + ".pkl").read_bytes()),
        }
        mindspore.load_param_into_net(model, state["model_state_dict"])
        mindspore.load_param_into_net(optimizer, state["optimizer_state_dict"])
        log(f"reloaded the checkpoint of epoch {state['epoch']} (loss {state['loss'].item():.4f})")
    return losses


if __name__ == "__main__":
    mindspore.set_seed(0)
    train(*build_models())
