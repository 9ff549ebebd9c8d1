"""LeNet-5 style classifier trained on synthetic 28x28 images."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class LeNet(nn.Module):
    def __init__(self, num_classes=10):
        super(LeNet, self).__init__()
        # feature extractor: two conv/pool stages
        self.conv1 = nn.Conv2d(1, 6, kernel_size=5, padding=2)
        self.pool = nn.MaxPool2d(2)
        self.conv2 = nn.Conv2d(6, 16, kernel_size=5)
        # classifier head
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, num_classes)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)  # keep the batch dimension
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


def make_model():
    return LeNet()


def make_inputs():
    return (torch.randn(4, 1, 28, 28),)


def train(steps=20, batch_size=16):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = LeNet().to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    images = torch.randn(batch_size * 4, 1, 28, 28)
    labels = torch.randint(0, 10, (batch_size * 4,))
    model.train()
    for step in range(steps):
        start = (step % 4) * batch_size
        x = images[start : start + batch_size].to(device)
        y = labels[start : start + batch_size].to(device)
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        if step % 5 == 0:
            print(f"step {step}: loss {loss.item():.4f}")
    return loss.item()


if __name__ == "__main__":
    train()
