"""A small ResNet: BatchNorm, residual blocks with projection shortcuts."""

from mindspore import nn, ops


def conv3x3(in_planes, out_planes, stride=1):
    """3x3 convolution with padding."""
    return nn.Conv2d(
        in_planes,
        out_planes,
        kernel_size=3,
        stride=stride,
        pad_mode="pad",
        padding=1,
        has_bias=False,
    )


class BasicBlock(nn.Cell):
    expansion = 1

    def __init__(self, in_planes, planes, stride=1):
        super().__init__()
        self.conv1 = conv3x3(in_planes, planes, stride)
        # .set_train(): torch builds a layer in training mode, MindSpore a Cell in inference mode
        self.bn1 = nn.BatchNorm2d(planes, momentum=0.9).set_train()
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes, momentum=0.9).set_train()
        self.shortcut = nn.SequentialCell()
        if stride != 1 or in_planes != planes:
            # projection shortcut to match shapes
            self.shortcut = nn.SequentialCell(
                nn.Conv2d(
                    in_planes,
                    planes,
                    kernel_size=1,
                    stride=stride,
                    pad_mode="valid",
                    has_bias=False,
                ),
                nn.BatchNorm2d(planes, momentum=0.9).set_train(),
            )

    def construct(self, x):
        out = ops.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out = out + self.shortcut(x)
        return ops.relu(out)


class ResNet(nn.Cell):
    def __init__(self, num_blocks=(2, 2, 2), num_classes=10, width=16):
        super().__init__()
        self.in_planes = width
        self.stem = nn.SequentialCell(
            conv3x3(3, width),
            nn.BatchNorm2d(width, momentum=0.9).set_train(),
            nn.ReLU(),
        )
        layers = []
        for i, blocks in enumerate(num_blocks):
            stride = 1 if i == 0 else 2
            layers.append(self._make_layer(width * 2**i, blocks, stride))
        self.layers = nn.CellList(layers)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Dense(width * 2 ** (len(num_blocks) - 1), num_classes)

    def _make_layer(self, planes, blocks, stride):
        strides = [stride] + [1] * (blocks - 1)
        layers = []
        for s in strides:
            layers.append(BasicBlock(self.in_planes, planes, s))
            self.in_planes = planes
        return nn.SequentialCell(*layers)

    def construct(self, x):
        out = self.stem(x)
        for layer in self.layers:
            out = layer(out)
        out = self.pool(out)
        out = out.view(out.shape[0], -1)
        return self.fc(out)


def make_model():
    return ResNet()


def make_inputs():
    return (ops.randn(2, 3, 32, 32),)


if __name__ == "__main__":
    model = make_model()
    model.set_train(False)
    logits = model(*make_inputs())
    print("logits", tuple(logits.shape))
    print("parameters", sum(p.numel() for p in model.trainable_params()))
