"""Seeded stand-ins for trained batch-norm statistics, for the examples that ship an architecture with
random weights (ResNet-8, ResNet-18, DS-CNN, MobileNet): folding batch norm is only tested when the
statistics are not the identity."""

from __future__ import annotations


def randomise_batch_norm(model, mean: float = 0.5, var: tuple[float, float] = (0.5, 2.0),
                         affine: bool = True):
    """Draw every ``BatchNorm2d``'s running mean from U(-mean, mean) and its running variance from
    U(*var) (and, with ``affine``, its weight from U(0.5, 1.5) and bias from U(-0.5, 0.5)), in module
    order, from torch's global generator (seed it first); returns the model in eval mode."""
    import torch
    from torch import nn

    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-mean, mean)
                m.running_var.uniform_(*var)
                if affine:
                    m.weight.uniform_(0.5, 1.5)
                    m.bias.uniform_(-0.5, 0.5)
    return model.eval()
