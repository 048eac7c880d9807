"""A small CNN for 1x1x8x8 digit images; ``train.py`` beside it trains it on scikit-learn's digits."""

import torch
from torch import nn


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
    _randomise_batch_norm(model)
    return model.eval()


def _randomise_batch_norm(model: nn.Module) -> None:
    """Non-trivial running statistics, so that folding batch norm is really tested."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            with torch.no_grad():
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
