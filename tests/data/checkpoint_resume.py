"""Resumable training: two models (same class, so the same parameter names) with
Adam and SGD with momentum, each with a step learning-rate schedule, train a
few steps, one combined checkpoint is saved (the schedulers' states with it),
training continues; then fresh models and optimizers load the checkpoint and
train the same steps again. Resuming must continue exactly like the run that was
never interrupted. Run by tests/training/test_checkpoints.py through tests/training/runner.py."""

import numpy as np
import torch
import torch.nn as nn

STEPS, RESUME_AT = 8, 4


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(6, 16)
        self.out = nn.Linear(16, 3)

    def forward(self, x):
        return self.out(torch.relu(self.hidden(x)))


def build_models():
    return Classifier(), Classifier()


def make_batches():
    rng = np.random.default_rng(0)
    images = rng.normal(size=(STEPS, 8, 6)).astype(np.float32)
    labels = rng.integers(0, 3, size=(STEPS, 8))
    return [(torch.tensor(images[i]), torch.tensor(labels[i], dtype=torch.long)) for i in range(STEPS)]


def fit(model, optimizer, scheduler, batches, start, stop):
    criterion = nn.CrossEntropyLoss()
    losses = []
    for step in range(start, stop):
        x, y = batches[step]
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses.append(loss.item())
    return losses


def train(first, second, path="resume.ckpt", log=print):
    batches = make_batches()
    adam = torch.optim.Adam(first.parameters(), lr=0.01)
    sgd = torch.optim.SGD(second.parameters(), lr=0.05, momentum=0.9)
    adam_schedule = torch.optim.lr_scheduler.StepLR(adam, step_size=3, gamma=0.5)
    sgd_schedule = torch.optim.lr_scheduler.StepLR(sgd, step_size=2, gamma=0.5)
    fit(first, adam, adam_schedule, batches, 0, RESUME_AT)
    loss = float(fit(second, sgd, sgd_schedule, batches, 0, RESUME_AT)[-1])
    epoch = RESUME_AT
    torch.save(
        {
            "epoch": epoch,
            "first": first.state_dict(),
            "adam": adam.state_dict(),
            "second": second.state_dict(),
            "sgd": sgd.state_dict(),
            "adam_schedule": adam_schedule.state_dict(),
            "sgd_schedule": sgd_schedule.state_dict(),
            "loss": loss,
        },
        path,
    )
    uninterrupted = (fit(first, adam, adam_schedule, batches, RESUME_AT, STEPS)
                     + fit(second, sgd, sgd_schedule, batches, RESUME_AT, STEPS))

    first, second = Classifier(), Classifier()
    adam = torch.optim.Adam(first.parameters(), lr=0.01)
    sgd = torch.optim.SGD(second.parameters(), lr=0.05, momentum=0.9)
    adam_schedule = torch.optim.lr_scheduler.StepLR(adam, step_size=3, gamma=0.5)
    sgd_schedule = torch.optim.lr_scheduler.StepLR(sgd, step_size=2, gamma=0.5)
    checkpoint = torch.load(path)
    first.load_state_dict(checkpoint["first"])
    adam.load_state_dict(checkpoint["adam"])
    second.load_state_dict(checkpoint["second"])
    sgd.load_state_dict(checkpoint["sgd"])
    adam_schedule.load_state_dict(checkpoint["adam_schedule"])
    sgd_schedule.load_state_dict(checkpoint["sgd_schedule"])
    start = checkpoint["epoch"]
    log(f"resuming at step {start}, loss {checkpoint['loss']:.4f}")
    resumed = fit(first, adam, adam_schedule, batches, start, STEPS) + fit(second, sgd, sgd_schedule, batches, start, STEPS)
    return [(a, b) for a, b in zip(uninterrupted, resumed)]
