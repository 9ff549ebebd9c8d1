"""A training script with the usual tricks."""

import argparse
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.transforms as T
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader, Dataset

from models.net import Classifier

EPOCHS = 30


class Pairs(Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.randn(3, 8, 8), torch.randint(0, 100, (i % 5 + 1,)), i % 10


def collate(items):
    images = torch.stack([it[0] for it in items])
    tokens = pad_sequence([it[1] for it in items], batch_first=True)
    labels = torch.tensor([it[2] for it in items])
    return images, tokens, labels


def gradient_penalty(model, x, tokens):
    x = x.clone().requires_grad_(True)
    out, _ = model(x, tokens)
    grad = torch.autograd.grad(out.sum(), x, create_graph=True)[0]
    return ((grad.norm(2, dim=1) - 1) ** 2).mean()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=EPOCHS)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--accum-steps", type=int, default=4)
    args = parser.parse_args()

    transform = T.Compose([T.RandomResizedCrop(32), T.RandomHorizontalFlip(), T.Normalize((0.5,), (0.5,))])
    loader = DataLoader(Pairs(64), batch_size=args.batch_size, shuffle=True, collate_fn=collate)
    model = Classifier()
    ema_model = copy.deepcopy(model)
    ema_decay = 0.999
    model = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.05, betas=(0.9, 0.95))
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    scaler = torch.cuda.amp.GradScaler()
    handle = model.register_forward_hook(lambda m, i, o: None)
    for epoch in range(args.epochs):
        for step, (images, tokens, labels) in enumerate(loader):
            with torch.autocast("cuda", dtype=torch.float16):
                logits, _ = model(transform(images), tokens)
                loss = criterion(logits, labels) + 0.1 * gradient_penalty(model, images, tokens)
            scaler.scale(loss / args.accum_steps).backward()
            if (step + 1) % args.accum_steps == 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
                optimizer.step()
        scheduler.step()
    handle.remove()
    scripted = torch.jit.script(model)
    return scripted


if __name__ == "__main__":
    main()
