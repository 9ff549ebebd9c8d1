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
import mindspore
import tensorboardX  # new requirement: pip install tensorboardX (torch.utils.tensorboard's SummaryWriter as a package of its own)
from PIL import Image
from mindspore import nn, ops


class DoubleConv(nn.Cell):
    """(convolution => [BN] => ReLU) * 2"""

    def __init__(self, in_channels, out_channels, mid_channels=None):
        super().__init__()
        if not mid_channels:
            mid_channels = out_channels
        # .set_train(): torch builds a layer in training mode, MindSpore a Cell in inference mode
        self.double_conv = nn.SequentialCell(
            nn.Conv2d(
                in_channels,
                mid_channels,
                kernel_size=3,
                pad_mode="pad",
                padding=1,
                has_bias=False,
            ),
            nn.BatchNorm2d(mid_channels, momentum=0.9).set_train(),
            nn.ReLU(),
            nn.Conv2d(
                mid_channels,
                out_channels,
                kernel_size=3,
                pad_mode="pad",
                padding=1,
                has_bias=False,
            ),
            nn.BatchNorm2d(out_channels, momentum=0.9).set_train(),
            nn.ReLU(),
        )

    def construct(self, x):
        return self.double_conv(x)


class Down(nn.Cell):
    """Downscaling with maxpool then double conv"""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.maxpool_conv = nn.SequentialCell(
            nn.MaxPool2d(2, stride=2), DoubleConv(in_channels, out_channels)
        )

    def construct(self, x):
        return self.maxpool_conv(x)


class Up(nn.Cell):
    """Upscaling then double conv"""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.up = nn.Conv2dTranspose(
            in_channels,
            in_channels // 2,
            kernel_size=2,
            stride=2,
            pad_mode="valid",
            has_bias=True,
        )
        self.conv = DoubleConv(in_channels, out_channels)

    def construct(self, x1, x2):
        x1 = self.up(x1)
        # input is CHW
        diffY = x2.shape[2] - x1.shape[2]
        diffX = x2.shape[3] - x1.shape[3]
        x1 = ops.pad(
            x1, [diffX // 2, diffX - diffX // 2, diffY // 2, diffY - diffY // 2]
        )
        x = ops.cat([x2, x1], axis=1)
        return self.conv(x)


class UNet(nn.Cell):
    def __init__(self, n_channels, n_classes, width=8):
        super().__init__()
        self.n_channels = n_channels
        self.n_classes = n_classes
        self.inc = DoubleConv(n_channels, width)
        self.down1 = Down(width, width * 2)
        self.down2 = Down(width * 2, width * 4)
        self.up1 = Up(width * 4, width * 2)
        self.up2 = Up(width * 2, width)
        self.outc = nn.Conv2d(
            width, n_classes, kernel_size=1, pad_mode="valid", has_bias=True
        )

    def construct(self, x):
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
    sets_sum = ops.where(sets_sum == 0, inter, sets_sum)
    dice = (inter + epsilon) / (sets_sum + epsilon)
    return dice.mean()


def multiclass_dice_coeff(input, target, reduce_batch_first=False, epsilon=1e-6):
    # Average of Dice coefficient for all classes
    return dice_coeff(input.flatten(0, 1), target.flatten(0, 1), reduce_batch_first, epsilon)


def dice_loss(input, target):
    # Dice loss (objective to minimize) between 0 and 1
    return 1 - multiclass_dice_coeff(input, target, reduce_batch_first=True)


class SegmentationDataset:
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
        idx = int(idx)
        name = self.ids[idx]
        img = np.transpose(np.load(self.images_dir / f"{name}.npy"), (2, 0, 1)) / 255.0
        mask = np.load(self.masks_dir / f"{name}.npy")
        return np.asarray(
            mindspore.Tensor(img.copy()).to(mindspore.float32).contiguous()
        ), np.asarray(mindspore.Tensor(mask.copy()).long().contiguous())


def evaluate(net, dataloader, device, amp):
    net.set_train(False)
    num_val_batches = len(dataloader)
    dice_score = 0
    # iterate over the validation set
    for image, mask_true in dataloader:
        image = image.to(dtype=mindspore.float32)
        mask_true = mask_true.to(dtype=mindspore.int64)
        mask_pred = net(image).argmax(dim=1)
        mask_true = (
            ops.one_hot(
                mask_true,
                net.n_classes if net.n_classes >= 0 else int(mask_true.max()) + 1,
            )
            .permute(0, 3, 1, 2)
            .to(mindspore.float32)
        )
        mask_pred = (
            ops.one_hot(
                mask_pred,
                net.n_classes if net.n_classes >= 0 else int(mask_pred.max()) + 1,
            )
            .permute(0, 3, 1, 2)
            .to(mindspore.float32)
        )
        # compute the Dice score, ignoring background
        dice_score += multiclass_dice_coeff(mask_pred[:, 1:], mask_true[:, 1:], reduce_batch_first=False)
    net.set_train(True)
    return dice_score / max(num_val_batches, 1)


def train_model(model, device, data_dir, epochs=5, batch_size=1, learning_rate=1e-5, val_percent=0.1,
                save_checkpoint=True, amp=False, weight_decay=1e-8, momentum=0.999, gradient_clipping=1.0,
                checkpoint_dir="checkpoints", log_dir="runs/unet"):
    # 1. Create dataset and split into train / validation partitions
    dataset = SegmentationDataset(data_dir)
    n_val = int(len(dataset) * val_percent)
    n_train = len(dataset) - n_val
    mindspore.dataset.config.set_seed(0)
    train_set, val_set = mindspore.dataset.GeneratorDataset(
        dataset, column_names=["data", "label"], shuffle=False
    ).split([n_train, n_val], randomize=True)

    # 2. Create data loaders
    loader_args = dict(batch_size=batch_size, num_workers=0, pin_memory=True)
    train_loader = train_set.shuffle(train_set.get_dataset_size()).batch(
        loader_args["batch_size"], drop_remainder=False
    )
    val_loader = val_set.batch(loader_args["batch_size"], drop_remainder=True)

    logging.info(f"""Starting training:
        Epochs:          {epochs}
        Batch size:      {batch_size}
        Learning rate:   {learning_rate}
        Training size:   {n_train}
        Validation size: {n_val}
        Mixed Precision: {amp}
    """)

    # 3. Set up the optimizer, the loss, the learning rate scheduler and the loss scaling for AMP
    optimizer = mindspore.experimental.optim.RMSprop(
        model.trainable_params(),
        lr=learning_rate,
        weight_decay=weight_decay,
        momentum=momentum,
    )
    scheduler = mindspore.experimental.optim.lr_scheduler.ReduceLROnPlateau(
        optimizer, "max", patience=5
    )  # goal: maximize Dice score
    grad_scaler = (
        mindspore.amp.DynamicLossScaler(
            scale_value=65536.0, scale_factor=2, scale_window=2000
        )
        if amp and mindspore.get_context("device_target") != "CPU"
        else mindspore.amp.StaticLossScaler(scale_value=1.0)
    )
    criterion = lambda input, target: ops.cross_entropy(input, target)
    writer = tensorboardX.SummaryWriter(log_dir)
    global_step = 0

    # 4. Begin training
    if amp:
        model = mindspore.amp.auto_mixed_precision(
            model, "auto", dtype=mindspore.float16
        )
    def forward_fn(images, true_masks):

        masks_pred = model(images)
        loss = criterion(masks_pred, true_masks)
        loss += dice_loss(
            ops.softmax(masks_pred, axis=1).to(mindspore.float32),
            ops.one_hot(
                true_masks,
                model.n_classes if model.n_classes >= 0 else int(true_masks.max()) + 1,
            )
            .permute(0, 3, 1, 2)
            .to(mindspore.float32),
        )
        return grad_scaler.scale(loss), loss
    grad_fn = mindspore.value_and_grad(
        forward_fn, None, optimizer.parameters, has_aux=True
    )
    for epoch in range(1, epochs + 1):
        model.set_train(True)
        epoch_loss = 0
        for images, true_masks in train_loader:

            images = images.to(dtype=mindspore.float32)
            true_masks = true_masks.to(dtype=mindspore.int64)
            (scaled_loss, loss), grads = grad_fn(images, true_masks)
            grads = grad_scaler.unscale(grads)
            grads = ops.clip_by_global_norm(grads, gradient_clipping)
            grads_finite = mindspore.amp.all_finite(grads)
            if grads_finite:
                optimizer(grads)
            grad_scaler.adjust(grads_finite)

            global_step += 1
            epoch_loss += loss.item()
            writer.add_scalar("train/loss", loss.item(), global_step)

        val_score = evaluate(model, val_loader, device, amp)
        scheduler.step(val_score)
        logging.info(f"Validation Dice score: {float(val_score):.4f}")
        writer.add_scalar("val/dice", np.asarray(val_score), epoch)
        writer.add_scalar("train/epoch_loss", epoch_loss / len(train_loader), epoch)

        # a look at the predicted foreground on the first validation batch
        model.set_train(False)
        images, _ = next(iter(val_loader))
        probs = ops.softmax(model(images.to(dtype=mindspore.float32)), axis=1)[:, 1:]
        grid_images = np.asarray(probs, dtype=np.float32)
        grid_images = grid_images.reshape((-1,) + grid_images.shape[-3:])
        grid_images = grid_images.repeat(3 if grid_images.shape[1] == 1 else 1, axis=1)
        grid_images = (grid_images - grid_images.min()) / max(
            grid_images.max() - grid_images.min(), 1e-5
        )
        grid_columns = min(4, len(grid_images))
        grid_padding = 2 if len(grid_images) > 1 else 0
        grid = np.pad(
            grid_images,
            (
                (0, -len(grid_images) % grid_columns),
                (0, 0),
                (grid_padding, 0),
                (grid_padding, 0),
            ),
            constant_values=0.0,
        )
        grid = grid.reshape((-1, grid_columns) + grid.shape[1:]).transpose(
            0, 3, 1, 4, 2
        )
        grid = grid.reshape(
            grid.shape[0] * grid.shape[1], grid.shape[2] * grid.shape[3], grid.shape[4]
        )
        grid = np.pad(
            grid, ((0, grid_padding), (0, grid_padding), (0, 0)), constant_values=0.0
        )
        writer.add_image(
            "val/foreground",
            np.asarray(mindspore.Tensor(grid.transpose(2, 0, 1))),
            epoch,
        )

        if save_checkpoint:
            Path(checkpoint_dir).mkdir(parents=True, exist_ok=True)
            grid_images = np.asarray(probs, dtype=np.float32)
            grid_images = grid_images.reshape((-1,) + grid_images.shape[-3:])
            grid_images = grid_images.repeat(
                3 if grid_images.shape[1] == 1 else 1, axis=1
            )
            grid_columns = min(4, len(grid_images))
            grid_padding = 2 if len(grid_images) > 1 else 0
            grid = np.pad(
                grid_images,
                (
                    (0, -len(grid_images) % grid_columns),
                    (0, 0),
                    (grid_padding, 0),
                    (grid_padding, 0),
                ),
                constant_values=0.0,
            )
            grid = grid.reshape((-1, grid_columns) + grid.shape[1:]).transpose(
                0, 3, 1, 4, 2
            )
            grid = grid.reshape(
                grid.shape[0] * grid.shape[1],
                grid.shape[2] * grid.shape[3],
                grid.shape[4],
            )
            grid = np.pad(
                grid,
                ((0, grid_padding), (0, grid_padding), (0, 0)),
                constant_values=0.0,
            )
            Image.fromarray((grid * 255 + 0.5).clip(0, 255).astype(np.uint8)).save(
                str(Path(checkpoint_dir) / f"foreground_epoch{epoch}.png")
            )
            state_dict = model.parameters_dict()
            mindspore.save_checkpoint(
                state_dict, str(Path(checkpoint_dir) / f"checkpoint_epoch{epoch}.pth")
            )
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
    mindspore.set_seed(args.seed)
    device = "cuda" if mindspore.get_context("device_target") == "GPU" else "cpu"
    logging.info(f"Using device {device}")

    model = UNet(n_channels=3, n_classes=args.classes)
    logging.info(f"Network: {model.n_channels} input channels, {model.n_classes} output channels (classes)")

    if args.load:
        state_dict = mindspore.load_checkpoint(
            str(args.load).removesuffix(".ckpt") + ".ckpt"
        )
        mindspore.load_param_into_net(model, state_dict)
        logging.info(f"Model loaded from {args.load}")

    try:
        train_model(model=model, device=device, data_dir=args.data_dir, epochs=args.epochs,
                    batch_size=args.batch_size, learning_rate=args.lr, val_percent=args.val / 100, amp=args.amp,
                    checkpoint_dir=args.checkpoint_dir, log_dir=args.log_dir)
    except MemoryError:
        logging.error("Detected OutOfMemoryError! Try a smaller batch size or --amp")
        mindspore.runtime.empty_cache()
        raise


if __name__ == "__main__":
    main()
