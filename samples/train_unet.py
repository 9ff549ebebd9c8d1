"""Train a UNet for semantic segmentation on image/mask files, Pytorch-UNet
style: mixed precision (autocast + GradScaler, gradient clipping on the
unscaled gradients), a seeded train/validation split, a Dice score
evaluation that drives ReduceLROnPlateau, TensorBoard logging and a
checkpoint per epoch.

    python train_unet.py --data-dir data/seg --epochs 5 --batch-size 4 --amp
"""

import argparse
import logging
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.utils.data import DataLoader, Dataset, random_split
from torch.utils.tensorboard import SummaryWriter
from torchvision.utils import make_grid, save_image


class DoubleConv(nn.Module):
    """(convolution => [BN] => ReLU) * 2"""

    def __init__(self, in_channels, out_channels, mid_channels=None):
        super().__init__()
        if not mid_channels:
            mid_channels = out_channels
        self.double_conv = nn.Sequential(
            nn.Conv2d(in_channels, mid_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(mid_channels),
            nn.ReLU(inplace=True),
            nn.Conv2d(mid_channels, out_channels, kernel_size=3, padding=1, bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(inplace=True),
        )

    def forward(self, x):
        return self.double_conv(x)


class Down(nn.Module):
    """Downscaling with maxpool then double conv"""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.maxpool_conv = nn.Sequential(nn.MaxPool2d(2), DoubleConv(in_channels, out_channels))

    def forward(self, x):
        return self.maxpool_conv(x)


class Up(nn.Module):
    """Upscaling then double conv"""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.up = nn.ConvTranspose2d(in_channels, in_channels // 2, kernel_size=2, stride=2)
        self.conv = DoubleConv(in_channels, out_channels)

    def forward(self, x1, x2):
        x1 = self.up(x1)
        # input is CHW
        diffY = x2.size()[2] - x1.size()[2]
        diffX = x2.size()[3] - x1.size()[3]
        x1 = F.pad(x1, [diffX // 2, diffX - diffX // 2, diffY // 2, diffY - diffY // 2])
        x = torch.cat([x2, x1], dim=1)
        return self.conv(x)


class UNet(nn.Module):
    def __init__(self, n_channels, n_classes, width=8):
        super().__init__()
        self.n_channels = n_channels
        self.n_classes = n_classes
        self.inc = DoubleConv(n_channels, width)
        self.down1 = Down(width, width * 2)
        self.down2 = Down(width * 2, width * 4)
        self.up1 = Up(width * 4, width * 2)
        self.up2 = Up(width * 2, width)
        self.outc = nn.Conv2d(width, n_classes, kernel_size=1)

    def forward(self, x):
        x1 = self.inc(x)
        x2 = self.down1(x1)
        x3 = self.down2(x2)
        x = self.up1(x3, x2)
        x = self.up2(x, x1)
        return self.outc(x)


def dice_coeff(input, target, reduce_batch_first=False, epsilon=1e-6):
    # Average of Dice coefficient for all batches, or for a single mask
    sum_dim = (-1, -2) if input.dim() == 2 or not reduce_batch_first else (-1, -2, -3)
    inter = 2 * (input * target).sum(dim=sum_dim)
    sets_sum = input.sum(dim=sum_dim) + target.sum(dim=sum_dim)
    sets_sum = torch.where(sets_sum == 0, inter, sets_sum)
    dice = (inter + epsilon) / (sets_sum + epsilon)
    return dice.mean()


def multiclass_dice_coeff(input, target, reduce_batch_first=False, epsilon=1e-6):
    # Average of Dice coefficient for all classes
    return dice_coeff(input.flatten(0, 1), target.flatten(0, 1), reduce_batch_first, epsilon)


def dice_loss(input, target):
    # Dice loss (objective to minimize) between 0 and 1
    return 1 - multiclass_dice_coeff(input, target, reduce_batch_first=True)


class SegmentationDataset(Dataset):
    """images/<name>.npy (H, W, 3) uint8 and masks/<name>.npy (H, W) class ids."""

    def __init__(self, data_dir):
        self.images_dir = Path(data_dir) / "images"
        self.masks_dir = Path(data_dir) / "masks"
        self.ids = sorted(p.stem for p in self.images_dir.glob("*.npy"))
        if not self.ids:
            raise RuntimeError(f"No input file found in {self.images_dir}")
        logging.info(f"Creating dataset with {len(self.ids)} examples")

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, idx):
        name = self.ids[idx]
        img = np.transpose(np.load(self.images_dir / f"{name}.npy"), (2, 0, 1)) / 255.0
        mask = np.load(self.masks_dir / f"{name}.npy")
        return torch.as_tensor(img.copy()).float().contiguous(), torch.as_tensor(mask.copy()).long().contiguous()


@torch.inference_mode()
def evaluate(net, dataloader, device, amp):
    net.eval()
    num_val_batches = len(dataloader)
    dice_score = 0
    # iterate over the validation set
    with torch.autocast(device.type if device.type != "mps" else "cpu", enabled=amp):
        for image, mask_true in dataloader:
            image = image.to(device=device, dtype=torch.float32, memory_format=torch.channels_last)
            mask_true = mask_true.to(device=device, dtype=torch.long)
            mask_pred = net(image).argmax(dim=1)
            mask_true = F.one_hot(mask_true, net.n_classes).permute(0, 3, 1, 2).float()
            mask_pred = F.one_hot(mask_pred, net.n_classes).permute(0, 3, 1, 2).float()
            # compute the Dice score, ignoring background
            dice_score += multiclass_dice_coeff(mask_pred[:, 1:], mask_true[:, 1:], reduce_batch_first=False)
    net.train()
    return dice_score / max(num_val_batches, 1)


def train_model(model, device, data_dir, epochs=5, batch_size=1, learning_rate=1e-5, val_percent=0.1,
                save_checkpoint=True, amp=False, weight_decay=1e-8, momentum=0.999, gradient_clipping=1.0,
                checkpoint_dir="checkpoints", log_dir="runs/unet"):
    # 1. Create dataset and split into train / validation partitions
    dataset = SegmentationDataset(data_dir)
    n_val = int(len(dataset) * val_percent)
    n_train = len(dataset) - n_val
    train_set, val_set = random_split(dataset, [n_train, n_val], generator=torch.Generator().manual_seed(0))

    # 2. Create data loaders
    loader_args = dict(batch_size=batch_size, num_workers=0, pin_memory=True)
    train_loader = DataLoader(train_set, shuffle=True, **loader_args)
    val_loader = DataLoader(val_set, shuffle=False, drop_last=True, **loader_args)

    logging.info(f"""Starting training:
        Epochs:          {epochs}
        Batch size:      {batch_size}
        Learning rate:   {learning_rate}
        Training size:   {n_train}
        Validation size: {n_val}
        Mixed Precision: {amp}
    """)

    # 3. Set up the optimizer, the loss, the learning rate scheduler and the loss scaling for AMP
    optimizer = optim.RMSprop(model.parameters(), lr=learning_rate, weight_decay=weight_decay,
                              momentum=momentum, foreach=True)
    scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer, "max", patience=5)  # goal: maximize Dice score
    grad_scaler = torch.cuda.amp.GradScaler(enabled=amp)
    criterion = nn.CrossEntropyLoss()
    writer = SummaryWriter(log_dir)
    global_step = 0

    # 4. Begin training
    for epoch in range(1, epochs + 1):
        model.train()
        epoch_loss = 0
        for images, true_masks in train_loader:
            images = images.to(device=device, dtype=torch.float32, memory_format=torch.channels_last)
            true_masks = true_masks.to(device=device, dtype=torch.long)

            with torch.autocast(device.type if device.type != "mps" else "cpu", enabled=amp):
                masks_pred = model(images)
                loss = criterion(masks_pred, true_masks)
                loss += dice_loss(
                    F.softmax(masks_pred, dim=1).float(),
                    F.one_hot(true_masks, model.n_classes).permute(0, 3, 1, 2).float(),
                )

            optimizer.zero_grad(set_to_none=True)
            grad_scaler.scale(loss).backward()
            grad_scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), gradient_clipping)
            grad_scaler.step(optimizer)
            grad_scaler.update()

            global_step += 1
            epoch_loss += loss.item()
            writer.add_scalar("train/loss", loss.item(), global_step)

        val_score = evaluate(model, val_loader, device, amp)
        scheduler.step(val_score)
        logging.info(f"Validation Dice score: {val_score:.4f}")
        writer.add_scalar("val/dice", val_score, epoch)
        writer.add_scalar("train/epoch_loss", epoch_loss / len(train_loader), epoch)

        # a look at the predicted foreground on the first validation batch
        model.eval()
        with torch.no_grad():
            images, _ = next(iter(val_loader))
            probs = F.softmax(model(images.to(device=device, dtype=torch.float32)), dim=1)[:, 1:]
        writer.add_image("val/foreground", make_grid(probs, nrow=4, normalize=True), epoch)

        if save_checkpoint:
            Path(checkpoint_dir).mkdir(parents=True, exist_ok=True)
            save_image(probs, str(Path(checkpoint_dir) / f"foreground_epoch{epoch}.png"), nrow=4)
            state_dict = model.state_dict()
            torch.save(state_dict, str(Path(checkpoint_dir) / f"checkpoint_epoch{epoch}.pth"))
            logging.info(f"Checkpoint {epoch} saved!")
    writer.close()


def get_args(argv=None):
    parser = argparse.ArgumentParser(description="Train the UNet on images and target masks")
    parser.add_argument("--data-dir", default="data/seg", help="Folder with images/ and masks/")
    parser.add_argument("--epochs", "-e", metavar="E", type=int, default=5, help="Number of epochs")
    parser.add_argument("--batch-size", "-b", dest="batch_size", metavar="B", type=int, default=1, help="Batch size")
    parser.add_argument("--learning-rate", "-l", metavar="LR", type=float, default=1e-5, dest="lr")
    parser.add_argument("--load", "-f", type=str, default=False, help="Load model from a .pth file")
    parser.add_argument("--validation", "-v", dest="val", type=float, default=10.0,
                        help="Percent of the data that is used as validation (0-100)")
    parser.add_argument("--amp", action="store_true", default=False, help="Use mixed precision")
    parser.add_argument("--classes", "-c", type=int, default=2, help="Number of classes")
    parser.add_argument("--checkpoint-dir", default="checkpoints")
    parser.add_argument("--log-dir", default="runs/unet")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def main(argv=None):
    args = get_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s: %(message)s")
    torch.manual_seed(args.seed)
    torch.backends.cudnn.benchmark = True
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    logging.info(f"Using device {device}")

    model = UNet(n_channels=3, n_classes=args.classes)
    model = model.to(memory_format=torch.channels_last)
    logging.info(f"Network: {model.n_channels} input channels, {model.n_classes} output channels (classes)")

    if args.load:
        state_dict = torch.load(args.load, map_location=device)
        model.load_state_dict(state_dict)
        logging.info(f"Model loaded from {args.load}")

    model.to(device=device)
    try:
        train_model(model=model, device=device, data_dir=args.data_dir, epochs=args.epochs,
                    batch_size=args.batch_size, learning_rate=args.lr, val_percent=args.val / 100, amp=args.amp,
                    checkpoint_dir=args.checkpoint_dir, log_dir=args.log_dir)
    except torch.cuda.OutOfMemoryError:
        logging.error("Detected OutOfMemoryError! Try a smaller batch size or --amp")
        torch.cuda.empty_cache()
        raise


if __name__ == "__main__":
    main()
