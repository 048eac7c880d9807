"""MLPerf Tiny MobileNetV1 0.25x (visual wake words: 96 x 96 RGB, 2 classes), random weights.

MobileNetV1 at a width multiplier of 0.25: a 3x3 convolution of stride 2 to 8 channels, thirteen
depthwise-separable blocks (a depthwise 3x3 and a pointwise 1x1 convolution, each with batch norm and
ReLU6) to 256 channels at 3 x 3, a global average and a linear layer to the two classes.
"""

import torch
from torch import nn

from winohdl.network.seeded import randomise_batch_norm

# (output channels, stride) of each depthwise-separable block, MobileNetV1's at width 0.25
BLOCKS = ((16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2), (128, 1), (128, 1), (128, 1), (128, 1), (128, 1),
          (256, 2), (256, 1))


def _separable(cin: int, cout: int, stride: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cin, 3, stride=stride, padding=1, groups=cin), nn.BatchNorm2d(cin),
                         nn.ReLU6(), nn.Conv2d(cin, cout, 1), nn.BatchNorm2d(cout), nn.ReLU6())


class MobileNetV1(nn.Module):
    def __init__(self, classes: int = 2):
        super().__init__()
        layers, cin = [nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.ReLU6()], 8
        for cout, stride in BLOCKS:
            layers.append(_separable(cin, cout, stride))
            cin = cout
        self.features = nn.Sequential(*layers)
        self.pool, self.flatten, self.fc = nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(self.flatten(self.pool(self.features(x))))


def mobilenet_v1() -> nn.Module:
    """MobileNetV1 0.25x with seeded random weights and batch-norm statistics, in eval mode (input
    1x3x96x96)."""
    torch.manual_seed(0)
    return randomise_batch_norm(MobileNetV1(), mean=0.1, var=(0.5, 1.5), affine=False)
