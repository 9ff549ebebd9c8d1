"""MNIST-style CNN classification: a custom Dataset of synthetic 28x28 digits,
a DataLoader, Adam, accuracy bookkeeping, an evaluation loop and a checkpoint."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class SyntheticDigits(Dataset):
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
        image = torch.tensor(self.images[idx])
        label = torch.tensor(self.labels[idx], dtype=torch.long)
        return image, label


class ConvNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(16 * 7 * 7, num_classes)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        return self.fc(torch.flatten(x, 1))


def build_models():
    return (ConvNet(),)


def evaluate(model, loader):
    model.eval()
    correct, seen = 0, 0
    with torch.no_grad():
        for images, labels in loader:
            logits = model(images)
            correct += (logits.argmax(dim=1) == labels).sum().item()
            seen += labels.shape[0]
    return correct / seen


def train(model, epochs=3, batch_size=32, shuffle=True, checkpoint=None, log=print):
    train_loader = DataLoader(SyntheticDigits(320), batch_size=batch_size, shuffle=shuffle, drop_last=True)
    test_loader = DataLoader(SyntheticDigits(64, seed=1), batch_size=64)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for epoch in range(epochs):
        model.train()
        correct, seen = 0, 0
        for batch, (images, labels) in enumerate(train_loader):
            optimizer.zero_grad()
            logits = model(images)
            loss = criterion(logits, labels)
            loss.backward()
            optimizer.step()
            # bookkeeping after the step
            losses.append(loss.item())
            correct += (logits.argmax(dim=1) == labels).sum().item()
            seen += labels.shape[0]
        log(f"epoch {epoch}: {len(train_loader)} batches, loss {losses[-1]:.4f}, "
            f"train acc {correct / seen:.2f}, test acc {evaluate(model, test_loader):.2f}")
    if checkpoint is not None:
        # a resumable checkpoint: model and optimizer state, and where training stopped
        torch.save({"epoch": epoch, "model_state_dict": model.state_dict(),
                    "optimizer_state_dict": optimizer.state_dict(), "loss": loss}, checkpoint)
        state = torch.load(checkpoint)
        model.load_state_dict(state["model_state_dict"])
        optimizer.load_state_dict(state["optimizer_state_dict"])
        log(f"reloaded the checkpoint of epoch {state['epoch']} (loss {state['loss'].item():.4f})")
    return losses


if __name__ == "__main__":
    torch.manual_seed(0)
    train(*build_models())
