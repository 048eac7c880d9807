"""VGG-16 (ImageNet sized 1x3x224x224), random weights, in plain torch.nn.

The layers and their shapes are torchvision's ``vgg16()`` (``weights=None``, configuration "D"):
thirteen 3x3 convolutions with bias and padding 1 (64, 64, 128, 128, 256 x 3, 512 x 3, 512 x 3
channels), each followed by ReLU, five 2x2 stride-2 max poolings, then three linear layers
(25088 -> 4096 -> 4096 -> 1000, ReLU between). torchvision is not installed here, so the
architecture is written out. Left out, and why: torchvision's ``AdaptiveAvgPool2d((7, 7))`` is the
identity on the 7x7 map that a 224x224 input leaves (the importer takes adaptive pooling to one
output only), and the two ``Dropout`` layers are the identity in eval mode.
"""

import torch
from torch import nn

CONFIG = (64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M")
"""torchvision's configuration "D": output channels of each 3x3 convolution, "M" a max pooling."""


def vgg16() -> nn.Module:
    """VGG-16 with seeded random weights, in eval mode (input 1x3x224x224)."""
    torch.manual_seed(0)
    layers, cin = [], 3
    for item in CONFIG:
        if item == "M":
            layers.append(nn.MaxPool2d(2, stride=2))
        else:
            layers += [nn.Conv2d(cin, item, 3, padding=1), nn.ReLU()]
            cin = item
    features = nn.Sequential(*layers)
    classifier = nn.Sequential(nn.Linear(512 * 7 * 7, 4096), nn.ReLU(), nn.Linear(4096, 4096), nn.ReLU(),
                               nn.Linear(4096, 1000))
    return nn.Sequential(features, nn.Flatten(), classifier).eval()
