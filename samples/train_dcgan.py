"""DCGAN on synthetic 16x16 images: a generator and a discriminator, two Adam
optimizers, a discriminator step and a generator step per batch (least-squares
GAN objective)."""

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

NZ = 8  # latent size


class Generator(nn.Module):
    def __init__(self, nz=NZ, ngf=16):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),  # 4x4
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),  # 8x8
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, 1, 4, 2, 1, bias=False),  # 16x16
            nn.Tanh(),
        )

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self, ndf=16):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(1, ndf, 4, 2, 1, bias=False),  # 8x8
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),  # 4x4
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),  # 1x1
        )

    def forward(self, x):
        return self.main(x).view(-1)


def real_images(count=256, seed=0):
    """Blobs at random positions, scaled to [-1, 1] like normalised images."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:16, 0:16]
    centres = rng.uniform(4, 12, size=(count, 2))
    images = np.exp(-((yy - centres[:, 0, None, None]) ** 2 + (xx - centres[:, 1, None, None]) ** 2) / 8.0)
    return (images[:, None] * 2.0 - 1.0).astype(np.float32)


def build_models():
    return Generator(), Discriminator()


def train(netG, netD, epochs=2, batch_size=32, shuffle=True, seed=0, log=print):
    rng = np.random.default_rng(seed)
    loader = DataLoader(TensorDataset(torch.tensor(real_images())), batch_size=batch_size, shuffle=shuffle)
    criterion = nn.MSELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    losses = []
    for epoch in range(epochs):
        for i, (real,) in enumerate(loader):
            b = real.shape[0]
            ones = torch.ones(b)
            zeros = torch.zeros(b)
            noise = torch.tensor(rng.standard_normal((b, NZ, 1, 1)), dtype=torch.float32)
            # (1) update D: real images towards 1, generated towards 0
            optimizerD.zero_grad()
            fake = netG(noise)
            errD_real = criterion(netD(real), ones)
            errD_fake = criterion(netD(fake.detach()), zeros)
            errD = errD_real + errD_fake
            errD.backward()
            optimizerD.step()
            # (2) update G: make D call the fakes real
            optimizerG.zero_grad()
            errG = criterion(netD(fake), ones)
            errG.backward()
            optimizerG.step()
            losses.append((errD.item(), errG.item()))
        log(f"epoch {epoch}: loss D {losses[-1][0]:.4f} (real {errD_real.item():.4f}), loss G {losses[-1][1]:.4f}")
    return losses


if __name__ == "__main__":
    torch.manual_seed(0)
    train(*build_models())
