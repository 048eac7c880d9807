"""ResNet-18 (ImageNet sized 1x3x224x224), random weights, in plain torch.nn.

The layers and their shapes are torchvision's ``resnet18()`` (``weights=None``): a 7x7 stride-2 stem
without bias, batch norm, ReLU, 3x3 stride-2 max pooling, four stages of two basic blocks (64, 128,
256, 512 channels; the first block of stages 2 to 4 strides by 2 with a 1x1 stride-2 projection and
batch norm), global average pooling and a 512 -> 1000 linear layer. torchvision is not installed
here, so the architecture is written out; the module names follow torchvision's (``layer1.0.conv1``).
"""

import torch
from torch import nn

from winohdl.network.seeded import randomise_batch_norm


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with batch norm, the shortcut added before the last ReLU."""

    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))
                           if stride != 1 or cin != cout else None)

    def forward(self, x):
        y = self.bn2(self.conv2(self.relu(self.bn1(self.conv1(x)))))
        s = x if self.downsample is None else self.downsample(x)
        return self.relu(y + s)


class ResNet18(nn.Module):
    """torchvision's ResNet-18 layer for layer."""

    def __init__(self, classes: int = 1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        stages, cin = [], 64
        for i, cout in enumerate((64, 128, 256, 512)):
            stride = 1 if i == 0 else 2
            stages.append(nn.Sequential(BasicBlock(cin, cout, stride), BasicBlock(cout, cout, 1)))
            cin = cout
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def resnet18() -> nn.Module:
    """ResNet-18 with seeded random weights and batch-norm statistics, in eval mode (input 1x3x224x224)."""
    torch.manual_seed(0)
    return randomise_batch_norm(ResNet18())
