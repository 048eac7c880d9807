"""A residual digits CNN trained with quantisation in the loop (Brevitas), as a Brevitas ResNet has it: the
block's input quantised once (``QuantReLU``, signed 8-bit) and read by both branches, the main branch's
output by its own ``QuantIdentity``, the two added at their two trained scales and quantised again
(``QuantReLU``), then a global average pool quantised by a ``QuantIdentity`` and the linear layer."""

import torch
from torch import nn


def brevitas_residual(weight_bits: int = 8, per_channel: bool = True, channels: int = 16) -> nn.Module:
    """quant input, conv3x3 ``channels`` + ReLU (the block input), [conv3x3 ``channels``, quant] + shortcut,
    ReLU, global average pool, quant, linear 10 (input 1x1x8x8)."""
    import brevitas.nn as qnn
    from brevitas.quant import (Int8ActPerTensorFloat, Int8WeightPerChannelFloat, Int8WeightPerTensorFloat,
                                Int32Bias)

    from brevitas.quant_tensor import QuantTensor

    def value(t):        # a QuantTensor's float value (in export, the quantisers give plain tensors)
        return t.value if isinstance(t, QuantTensor) else t

    torch.manual_seed(0)
    conv_w = Int8WeightPerChannelFloat if per_channel else Int8WeightPerTensorFloat

    def conv(i, o):
        return qnn.QuantConv2d(i, o, 3, padding=1, weight_quant=conv_w, weight_bit_width=weight_bits,
                               bias_quant=Int32Bias, return_quant_tensor=True)

    def act(relu: bool):
        cls = qnn.QuantReLU if relu else qnn.QuantIdentity
        return cls(act_quant=Int8ActPerTensorFloat, return_quant_tensor=True)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = act(False)
            self.conv1, self.relu1 = conv(1, channels), act(True)
            self.conv2, self.main = conv(channels, channels), act(False)
            self.relu2 = act(True)                     # after the sum
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.pooled = act(False)
            self.fc = qnn.QuantLinear(channels, 10, weight_quant=Int8WeightPerTensorFloat, weight_bit_width=weight_bits,
                                      bias_quant=Int32Bias)

        def forward(self, x):
            x = self.relu1(self.conv1(self.inp(x)))
            # the two branches at their own scales: added as floats, quantised again after the sum
            y = self.relu2(value(self.main(self.conv2(x))) + value(x))
            return self.fc(self.pooled(self.pool(value(y))).flatten(1))

    return Net().eval()
