"""Train (or fine-tune) an image classifier, in the style of the PyTorch
ImageNet example: train()/validate() functions with AverageMeter and
top-k accuracy, SGD with a StepLR schedule, optional mixed precision,
DataParallel, a frozen backbone with a new head, TensorBoard logging and a
checkpoint with the best model kept aside.

    python train_classifier.py DATA_DIR --epochs 90 -b 256 --lr 0.1 --amp
    python train_classifier.py DATA_DIR --pretrained model_best.pth.tar --freeze-features --num-classes 10
"""

import argparse
import os
import pathlib
import pickle
import random
import shutil
import time

import numpy as np
import mindspore
import tensorboardX  # new requirement: pip install tensorboardX (torch.utils.tensorboard's SummaryWriter as a package of its own)
from mindspore import nn, ops

parser = argparse.ArgumentParser(description="Image classifier training")
parser.add_argument("data", metavar="DIR", help="path to dataset (train.npz and val.npz)")
parser.add_argument("--epochs", default=90, type=int, metavar="N", help="number of total epochs to run")
parser.add_argument("-b", "--batch-size", default=256, type=int, metavar="N", help="mini-batch size")
parser.add_argument("--lr", "--learning-rate", default=0.1, type=float, metavar="LR", dest="lr")
parser.add_argument("--momentum", default=0.9, type=float, metavar="M", help="momentum")
parser.add_argument("--wd", "--weight-decay", default=1e-4, type=float, metavar="W", dest="weight_decay")
parser.add_argument("-p", "--print-freq", default=10, type=int, metavar="N", help="print frequency")
parser.add_argument("--resume", default="", type=str, metavar="PATH", help="path to latest checkpoint")
parser.add_argument("--pretrained", default="", type=str, help="start from these weights")
parser.add_argument("--freeze-features", action="store_true", help="train the classifier head only")
parser.add_argument("--num-classes", default=None, type=int, help="replace the head for this many classes")
parser.add_argument("--seed", default=None, type=int, help="seed for initializing training")
parser.add_argument("--amp", action="store_true", help="use mixed precision")
parser.add_argument("--log-dir", default="runs/classifier")
parser.add_argument("--out-dir", default=".")

best_acc1 = 0


class SmallResNet(nn.Cell):
    def __init__(self, num_classes=10, width=16):
        super().__init__()
        # .set_train(): torch builds a layer in training mode, MindSpore a Cell in inference mode
        self.features = nn.SequentialCell(
            nn.Conv2d(
                3, width, kernel_size=3, pad_mode="pad", padding=1, has_bias=False
            ),
            nn.BatchNorm2d(width, momentum=0.9).set_train(),
            nn.ReLU(),
            nn.Conv2d(
                width,
                width * 2,
                kernel_size=3,
                stride=2,
                pad_mode="pad",
                padding=1,
                has_bias=False,
            ),
            nn.BatchNorm2d(width * 2, momentum=0.9).set_train(),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d((1, 1)),
        )
        self.fc = nn.Dense(width * 2, num_classes)

    def construct(self, x):
        return self.fc(ops.flatten(self.features(x), start_dim=1))


class ArrayDataset:
    """Images (N, H, W, 3) uint8 and labels (N,) from an .npz file, normalised per channel."""

    def __init__(self, path, mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225)):
        data = np.load(path)
        self.images = data["images"]
        self.labels = data["labels"]
        self.mean = np.array(mean, dtype=np.float32)[:, None, None]
        self.std = np.array(std, dtype=np.float32)[:, None, None]

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, index):
        index = int(index)
        image = self.images[index].transpose(2, 0, 1).astype(np.float32) / 255.0
        image = (image - self.mean) / self.std
        return np.asarray(mindspore.Tensor(image)), np.asarray(int(self.labels[index]))


def main(argv=None):
    args = parser.parse_args(argv)
    if args.seed is not None:
        random.seed(args.seed)
        mindspore.set_seed(args.seed)
        mindspore.set_deterministic(True)
    main_worker(args)


def main_worker(args):
    global best_acc1
    device = "cuda" if mindspore.get_context("device_target") == "GPU" else "cpu"
    writer = tensorboardX.SummaryWriter(args.log_dir)

    model = SmallResNet()
    if args.pretrained:
        print(f"=> using pre-trained weights from '{args.pretrained}'")
        mindspore.load_param_into_net(
            model,
            mindspore.load_checkpoint(
                str(args.pretrained).removesuffix(".ckpt") + ".ckpt"
            ),
        )
    if args.num_classes is not None:
        # fine-tuning: a new head for the new classes
        model.fc = nn.Dense(model.fc.in_channels, args.num_classes)
    if args.freeze_features:
        for param in model.features.get_parameters():
            param.requires_grad = False

    criterion = lambda input, target: ops.cross_entropy(input, target)
    optimizer = mindspore.experimental.optim.SGD(
        model.trainable_params(),
        args.lr,
        momentum=args.momentum,
        weight_decay=args.weight_decay,
    )
    scheduler = mindspore.experimental.optim.lr_scheduler.StepLR(
        optimizer, step_size=30, gamma=0.1
    )
    scaler = (
        mindspore.amp.DynamicLossScaler(
            scale_value=65536.0, scale_factor=2, scale_window=2000
        )
        if args.amp and mindspore.get_context("device_target") != "CPU"
        else mindspore.amp.StaticLossScaler(scale_value=1.0)
    )
    start_epoch = 0

    if args.resume:
        if os.path.isfile(str(args.resume).removesuffix(".ckpt") + ".ckpt"):
            print(f"=> loading checkpoint '{args.resume}'")
            checkpoint = mindspore.load_checkpoint(
                str(args.resume).removesuffix(".ckpt") + ".ckpt"
            )
            checkpoint = {
                "state_dict": {
                    name.removeprefix("state_dict."): value
                    for name, value in checkpoint.items()
                    if name.startswith("state_dict.")
                },
                "optimizer": {
                    name.removeprefix("optimizer."): value
                    for name, value in checkpoint.items()
                    if name.startswith("optimizer.")
                },
                **pickle.loads(pathlib.Path(str(args.resume) + ".pkl").read_bytes()),
            }
            start_epoch = checkpoint["epoch"]
            best_acc1 = checkpoint["best_acc1"]
            mindspore.load_param_into_net(model, checkpoint["state_dict"])
            mindspore.load_param_into_net(optimizer, checkpoint["optimizer"])
            print(f"=> loaded checkpoint '{args.resume}' (epoch {checkpoint['epoch']})")
        else:
            print(f"=> no checkpoint found at '{args.resume}'")

    train_dataset = ArrayDataset(os.path.join(args.data, "train.npz"))
    val_dataset = ArrayDataset(os.path.join(args.data, "val.npz"))
    train_loader = mindspore.dataset.GeneratorDataset(
        train_dataset, column_names=["data", "label"], shuffle=True
    ).batch(args.batch_size, drop_remainder=False)
    val_loader = mindspore.dataset.GeneratorDataset(
        val_dataset, column_names=["data", "label"], shuffle=False
    ).batch(args.batch_size, drop_remainder=False)

    for epoch in range(start_epoch, args.epochs):
        train(train_loader, model, criterion, optimizer, scaler, epoch, device, args, writer)
        acc1 = validate(val_loader, model, criterion, args)
        writer.add_scalar("val/acc1", np.asarray(acc1), epoch)
        scheduler.step()

        is_best = acc1 > best_acc1
        best_acc1 = max(acc1, best_acc1)
        save_checkpoint(
            {
                "epoch": epoch + 1,
                "arch": "small_resnet",
                "state_dict": model.parameters_dict(),
                "best_acc1": best_acc1,
                "optimizer": optimizer.parameters_dict(),
            },
            is_best,
            os.path.join(args.out_dir, "checkpoint.pth.tar"),
        )
        if mindspore.get_context("device_target") == "GPU":
            mindspore.runtime.empty_cache()
    writer.close()


def train(train_loader, model, criterion, optimizer, scaler, epoch, device, args, writer):
    batch_time = AverageMeter("Time", ":6.3f")
    losses = AverageMeter("Loss", ":.4e")
    top1 = AverageMeter("Acc@1", ":6.2f")
    progress = ProgressMeter(len(train_loader), [batch_time, losses, top1], prefix=f"Epoch: [{epoch}]")

    # switch to train mode
    model.set_train(True)
    end = time.time()
    if args.amp:
        model = mindspore.amp.auto_mixed_precision(
            model, "auto", dtype=mindspore.float16
        )
    def forward_fn(images, target):

        # compute output
        output = model(images)
        loss = criterion(output, target)
        return scaler.scale(loss), loss, output
    grad_fn = mindspore.value_and_grad(
        forward_fn, None, optimizer.parameters, has_aux=True
    )
    for i, (images, target) in enumerate(train_loader):

        # compute gradient and do SGD step
        (scaled_loss, loss, output), grads = grad_fn(images, target)

        # measure accuracy and record loss
        acc1, = accuracy(output, target, topk=(1,))
        losses.update(loss.item(), images.shape[0])
        top1.update(acc1[0].item(), images.shape[0])
        grads = scaler.unscale(grads)
        grads_finite = mindspore.amp.all_finite(grads)
        if grads_finite:
            optimizer(grads)
        scaler.adjust(grads_finite)

        step = epoch * len(train_loader) + i
        writer.add_scalar("train/loss", loss.item(), step)
        batch_time.update(time.time() - end)
        end = time.time()
        if i % args.print_freq == 0:
            progress.display(i + 1)
    print(
        f"epoch {epoch}: {len(train_loader.children[0].source)} images in batches of {train_loader.batch_size}, "
        f"loss {float(loss):.4f}"
    )


def validate(val_loader, model, criterion, args):
    losses = AverageMeter("Loss", ":.4e")
    top1 = AverageMeter("Acc@1", ":6.2f")

    # switch to evaluate mode
    model.set_train(False)
    for images, target in val_loader:
        output = model(images)
        loss = criterion(output, target)
        acc1, = accuracy(output, target, topk=(1,))
        losses.update(loss.item(), images.shape[0])
        top1.update(acc1[0].item(), images.shape[0])
    print(f" * Acc@1 {float(top1.avg):.3f} Loss {float(losses.avg):.4f}")
    return top1.avg


def save_checkpoint(state, is_best, filename="checkpoint.pth.tar"):
    mindspore.save_checkpoint(
        {
            **{
                "state_dict." + name: value
                for name, value in state["state_dict"].items()
            },
            **{
                "optimizer." + name: value for name, value in state["optimizer"].items()
            },
        },
        filename,
    )
    pathlib.Path(str(filename) + ".pkl").write_bytes(
        pickle.dumps(
            {
                "epoch": state["epoch"],
                "arch": state["arch"],
                "best_acc1": state["best_acc1"],
            }
        )
    )
    if is_best:
        shutil.copyfile(
            str(filename).removesuffix(".ckpt") + ".ckpt",
            os.path.join(os.path.dirname(filename), "model_best.pth.tar.ckpt"),
        )
        shutil.copyfile(
            str(filename) + ".pkl",
            os.path.join(os.path.dirname(filename), "model_best.pth.tar") + ".pkl",
        )


class AverageMeter:
    """Computes and stores the average and current value"""

    def __init__(self, name, fmt=":f"):
        self.name = name
        self.fmt = fmt
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count

    def __str__(self):
        fmtstr = "{name} {val" + self.fmt + "} ({avg" + self.fmt + "})"
        return fmtstr.format(**self.__dict__)


class ProgressMeter:
    def __init__(self, num_batches, meters, prefix=""):
        self.batch_fmtstr = self._get_batch_fmtstr(num_batches)
        self.meters = meters
        self.prefix = prefix

    def display(self, batch):
        entries = [self.prefix + self.batch_fmtstr.format(batch)]
        entries += [str(meter) for meter in self.meters]
        print("\t".join(entries))

    def _get_batch_fmtstr(self, num_batches):
        num_digits = len(str(num_batches // 1))
        fmt = "{:" + str(num_digits) + "d}"
        return "[" + fmt + "/" + fmt.format(num_batches) + "]"


def accuracy(output, target, topk=(1,)):
    """Computes the accuracy over the k top predictions for the specified values of k"""
    maxk = max(topk)
    batch_size = target.shape[0]
    _, pred = tuple(
        t.astype(mindspore.int64) if i else t
        for i, t in enumerate(ops.topk(output, maxk, 1, True, True))
    )
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    res = []
    for k in topk:
        correct_k = correct[:k].reshape(-1).to(mindspore.float32).sum(0, keepdim=True)
        res.append(correct_k * (100.0 / batch_size))
    return res


if __name__ == "__main__":
    main()
