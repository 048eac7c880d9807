"""A small CNN for 1x1x8x8 digit images; ``train.py`` beside it trains it on scikit-learn's digits."""

import torch
from torch import nn

from winohdl.network.seeded import randomise_batch_norm


def digits_cnn() -> nn.Module:
    """conv3x3 8 + BN + ReLU, conv3x3 16 + ReLU, maxpool 2, flatten, linear 10 (input 1x1x8x8).

    Seeded random weights and non-trivial batch-norm statistics (so that folding batch norm is
    really tested), in eval mode; ``train.py`` trains it and saves its ``state_dict``.
    """
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * 4 * 4, 10),
    )
    return randomise_batch_norm(model)

