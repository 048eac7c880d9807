"""MLPerf Tiny DS-CNN (keyword spotting: 49 x 10 MFCC features), random weights.

The reference model's layers: a 10x4 convolution of stride 2 to 64 channels, four depthwise-separable
blocks (a depthwise 3x3 and a pointwise 1x1 convolution, each with batch norm and ReLU), a global
average over the 25 x 5 map and a linear layer to the 12 keywords. TensorFlow's "same" padding of the
first convolution is asymmetric; here it is the symmetric (5, 1), which gives the same 25 x 5 map.
"""

import torch
from torch import nn

from winohdl.network.seeded import randomise_batch_norm


def _separable(channels: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(channels, channels, 3, padding=1, groups=channels), nn.BatchNorm2d(channels),
                         nn.ReLU(), nn.Conv2d(channels, channels, 1), nn.BatchNorm2d(channels), nn.ReLU())


class DSCNN(nn.Module):
    def __init__(self, channels: int = 64, keywords: int = 12):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(1, channels, (10, 4), stride=2, padding=(5, 1)),
                                  nn.BatchNorm2d(channels), nn.ReLU())
        self.blocks = nn.Sequential(*(_separable(channels) for _ in range(4)))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Linear(channels, keywords)

    def forward(self, x):
        return self.fc(self.flatten(self.pool(self.blocks(self.stem(x)))))


def dscnn() -> nn.Module:
    """DS-CNN with seeded random weights and batch-norm statistics, in eval mode (input 1x1x49x10)."""
    torch.manual_seed(0)
    return randomise_batch_norm(DSCNN(), mean=0.1, var=(0.5, 1.5), affine=False)
