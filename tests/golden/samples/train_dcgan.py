"""DCGAN on synthetic 16x16 images: a generator and a discriminator, two Adam
optimizers, a discriminator step and a generator step per batch (least-squares
GAN objective)."""

import numpy as np
import mindspore
from mindspore import nn, ops

NZ = 8  # latent size


class Generator(nn.Cell):
    def __init__(self, nz=NZ, ngf=16):
        super().__init__()
        # .set_train(): torch builds a layer in training mode, MindSpore a Cell in inference mode
        self.main = nn.SequentialCell(
            nn.Conv2dTranspose(
                nz, ngf * 2, 4, 1, pad_mode="valid", has_bias=False
            ),  # 4x4
            nn.BatchNorm2d(ngf * 2, momentum=0.9).set_train(),
            nn.ReLU(),
            nn.Conv2dTranspose(
                ngf * 2, ngf, 4, 2, pad_mode="pad", padding=1, has_bias=False
            ),  # 8x8
            nn.BatchNorm2d(ngf, momentum=0.9).set_train(),
            nn.ReLU(),
            nn.Conv2dTranspose(
                ngf, 1, 4, 2, pad_mode="pad", padding=1, has_bias=False
            ),  # 16x16
            nn.Tanh(),
        )

    def construct(self, z):
        return self.main(z)


class Discriminator(nn.Cell):
    def __init__(self, ndf=16):
        super().__init__()
        self.main = nn.SequentialCell(
            nn.Conv2d(1, ndf, 4, 2, pad_mode="pad", padding=1, has_bias=False),  # 8x8
            nn.LeakyReLU(alpha=0.2),
            nn.Conv2d(
                ndf, ndf * 2, 4, 2, pad_mode="pad", padding=1, has_bias=False
            ),  # 4x4
            nn.BatchNorm2d(ndf * 2, momentum=0.9).set_train(),
            nn.LeakyReLU(alpha=0.2),
            nn.Conv2d(ndf * 2, 1, 4, 1, pad_mode="valid", has_bias=False),  # 1x1
        )

    def construct(self, x):
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
    loader = mindspore.dataset.GeneratorDataset(
        list(zip(np.asarray(mindspore.Tensor(real_images())))),
        column_names=["data"],
        shuffle=shuffle,
    ).batch(batch_size, drop_remainder=False)
    criterion = nn.MSELoss()
    optimizerD = mindspore.experimental.optim.AdamW(
        netD.trainable_params(), lr=2e-4, betas=(0.5, 0.999), weight_decay=0.0
    )
    optimizerG = mindspore.experimental.optim.AdamW(
        netG.trainable_params(), lr=2e-4, betas=(0.5, 0.999), weight_decay=0.0
    )
    losses = []
    netD.set_train(True)
    def forward_fn_d(real, ones, fake, zeros):
        errD_real = criterion(netD(real), ones)
        errD_fake = criterion(netD(ops.stop_gradient(fake)), zeros)
        errD = errD_real + errD_fake
        return errD, errD_real
    grad_fn_d = mindspore.value_and_grad(
        forward_fn_d, None, optimizerD.parameters, has_aux=True
    )
    netG.set_train(True)
    def forward_fn_g(noise, ones):
        fake = netG(noise)
        errG = criterion(netD(fake), ones)
        return errG
    grad_fn_g = mindspore.value_and_grad(
        forward_fn_g, None, optimizerG.parameters
    )
    for epoch in range(epochs):
        for i, (real,) in enumerate(loader):
            # (1) update D: real images towards 1, generated towards 0
            b = real.shape[0]
            ones = ops.ones(b)
            zeros = ops.zeros(b)
            noise = mindspore.Tensor(
                rng.standard_normal((b, NZ, 1, 1)), dtype=mindspore.float32
            )
            fake = netG(noise)
            (errD, errD_real), grads = grad_fn_d(real, ones, fake, zeros)
            optimizerD(grads)
            # (2) update G: make D call the fakes real
            errG, grads = grad_fn_g(noise, ones)
            optimizerG(grads)
            losses.append((errD.item(), errG.item()))
        log(f"epoch {epoch}: loss D {losses[-1][0]:.4f} (real {errD_real.item():.4f}), loss G {losses[-1][1]:.4f}")
    return losses


if __name__ == "__main__":
    mindspore.set_seed(0)
    train(*build_models())
