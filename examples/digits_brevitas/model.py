"""The digits CNN of ``examples/digits`` trained with quantisation in the loop (Brevitas): a signed int8
input, after the ReLUs signed int8 activations or (``unsigned``) Brevitas's default ``QuantReLU``,
unsigned at ``act_bits`` (0 to 255 at 8 bits), weights at ``weight_bits`` per tensor or per output
channel, biases int32 at ``s_in * s_w``; the final linear layer per tensor (its arg-max compares
accumulators at one scale)."""

import torch
from torch import nn


def brevitas_digits(weight_bits: int = 4, per_channel: bool = False, unsigned: bool = False,
                    act_bits: int = 8) -> nn.Module:
    """quant input, conv3x3 8 + ReLU, conv3x3 16 + ReLU, maxpool 2, flatten, linear 10 (input 1x1x8x8);
    ``unsigned``: the ReLUs are ``QuantReLU`` as Brevitas makes it by default (unsigned, ``act_bits``)."""
    import brevitas.nn as qnn
    from brevitas.quant import (Int8ActPerTensorFloat, Int8WeightPerChannelFloat, Int8WeightPerTensorFloat,
                                Int32Bias)

    torch.manual_seed(0)
    conv_w = Int8WeightPerChannelFloat if per_channel else Int8WeightPerTensorFloat

    def conv(i, o):
        return qnn.QuantConv2d(i, o, 3, padding=1, weight_quant=conv_w, weight_bit_width=weight_bits,
                               bias_quant=Int32Bias, return_quant_tensor=True)

    def relu():
        if unsigned:        # Brevitas's default act_quant: Uint8ActPerTensorFloat
            return qnn.QuantReLU(bit_width=act_bits, return_quant_tensor=True)
        return qnn.QuantReLU(act_quant=Int8ActPerTensorFloat, return_quant_tensor=True)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = qnn.QuantIdentity(act_quant=Int8ActPerTensorFloat, return_quant_tensor=True)
            self.conv1, self.relu1 = conv(1, 8), relu()
            self.conv2, self.relu2 = conv(8, 16), relu()
            self.pool = nn.MaxPool2d(2)      # on a QuantTensor: its integers and scale pass through
            self.fc = qnn.QuantLinear(16 * 4 * 4, 10, weight_quant=Int8WeightPerTensorFloat,
                                      weight_bit_width=weight_bits, bias_quant=Int32Bias)

        def forward(self, x):
            x = self.pool(self.relu2(self.conv2(self.relu1(self.conv1(self.inp(x))))))
            return self.fc(x.flatten(1))

    return Net().eval()
