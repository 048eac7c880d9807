"""MLPerf Tiny ResNet-8 (image classification, CIFAR-10 sized 1x3x32x32), random weights."""

import torch
from torch import nn

from winohdl.network.seeded import randomise_batch_norm


class _Block(nn.Module):
    """Two 3x3 convolutions with batch norm; a 1x1 strided projection when the shape changes."""

    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu1 = nn.ReLU()
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Conv2d(cin, cout, 1, stride=stride) if stride != 1 or cin != cout else None
        self.relu2 = nn.ReLU()

    def forward(self, x):
        y = self.bn2(self.conv2(self.relu1(self.bn1(self.conv1(x)))))
        s = x if self.shortcut is None else self.shortcut(x)
        return self.relu2(y + s)


class ResNet8(nn.Module):
    """conv3x3 16 + BN + ReLU, stacks of 16, 32 (stride 2), 64 (stride 2), global average pool, linear 10."""

    def __init__(self, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.stack1 = _Block(16, 16, 1)
        self.stack2 = _Block(16, 32, 2)
        self.stack3 = _Block(32, 64, 2)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(64, classes)

    def forward(self, x):
        x = self.stack3(self.stack2(self.stack1(self.stem(x))))
        return self.fc(self.flatten(self.pool(x)))


def resnet8() -> nn.Module:
    """ResNet-8 with seeded random weights and non-trivial batch-norm statistics, in eval mode."""
    torch.manual_seed(0)
    return randomise_batch_norm(ResNet8())
