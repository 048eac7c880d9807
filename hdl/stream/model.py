"""The stream units' golden models: plain numpy on :mod:`winohdl.core.fixed`, the specification.

Feature maps are integer arrays ``[H, W, C]`` (channels last, as the streams carry them). Each
function gives what its unit streams out, as integers; the tests compare the units against them
beat for beat, and the models themselves against torch's pooling and linear layers.
"""

from __future__ import annotations

import numpy as np

from winohdl.core.errors import WinohdlError
from winohdl.core.fixed import requantise, shift_round, saturate

from .axis import log2_exact


def requantise_channels(acc, bias, shift, relu: bool = False, bits: int = 8) -> np.ndarray:
    """``requantise(acc[..., c] + bias[c], shift[c], bits, relu)`` for every channel c (last axis)."""
    acc = np.asarray(acc, dtype=np.int64)
    out = np.empty_like(acc)
    for c in range(acc.shape[-1]):
        out[..., c] = requantise(acc[..., c] + int(bias[c]), int(shift[c]), bits, relu)
    return out


def pool_windows(x, kernel: int, stride: int, padding: int, fill: int) -> np.ndarray:
    """Every pooling window of ``x`` ``[H, W, C]``, padded with ``fill``: ``[OH, OW, k, k, C]``
    (torch's output size, floor mode)."""
    x = np.asarray(x, dtype=np.int64)
    H, W, C = x.shape
    padded = np.full((H + 2 * padding, W + 2 * padding, C), fill, dtype=np.int64)
    padded[padding:padding + H, padding:padding + W] = x
    OH, OW = (H + 2 * padding - kernel) // stride + 1, (W + 2 * padding - kernel) // stride + 1
    out = np.empty((OH, OW, kernel, kernel, C), dtype=np.int64)
    for oy in range(OH):
        for ox in range(OW):
            out[oy, ox] = padded[oy * stride:oy * stride + kernel, ox * stride:ox * stride + kernel]
    return out


def max_pool(x, kernel: int, stride: int, padding: int, bits: int = 8) -> np.ndarray:
    """2D max pooling (torch's, padding never wins: it is below every ``bits``-bit value)."""
    return pool_windows(x, kernel, stride, padding, -(1 << bits)).max(axis=(2, 3))


def avg_pool(x, kernel: int, stride: int, padding: int, extra_shift: int = 0, bits: int = 8) -> np.ndarray:
    """2D average pooling, padding counted (torch's ``count_include_pad``): the window's exact sum
    shifted by ``log2(kernel**2) + extra_shift`` with rounding half to even, saturated to ``bits``."""
    if log2_exact(kernel * kernel) is None:
        raise WinohdlError(f"avg_pool: the window count {kernel * kernel} is not a power of two")
    total = pool_windows(x, kernel, stride, padding, 0).sum(axis=(2, 3))
    return requantise(total, log2_exact(kernel * kernel) + extra_shift, bits)


def global_avg_pool(x, extra_shift: int = 0, bits: int = 8, divide: bool = True) -> np.ndarray:
    """Per channel of ``x`` ``[H, W, C]``: the frame's sum shifted by ``log2(H*W) + extra_shift``
    (rounding half to even), saturated to ``bits``; shape ``[C]``. ``divide=False``: the sum shifted by
    ``extra_shift`` alone (any H*W: the 1/(H*W) went elsewhere)."""
    x = np.asarray(x, dtype=np.int64)
    count = log2_exact(x.shape[0] * x.shape[1]) if divide else 0
    if count is None:
        raise WinohdlError(f"global_avg_pool: H*W = {x.shape[0] * x.shape[1]} is not a power of two")
    return requantise(x.sum(axis=(0, 1)), count + extra_shift, bits)


def residual_add(a, b, shift_a: int, shift_b: int, out_shift: int, relu: bool = False,
                 bits: int = 8) -> np.ndarray:
    """``requantise((a << shift_a) + (b << shift_b), out_shift, bits, relu)``: both inputs aligned
    to the smaller exponent by exact left shifts, the sum requantised to the output's exponent."""
    total = shift_round(np.asarray(a, dtype=np.int64), -shift_a) + shift_round(np.asarray(b, dtype=np.int64),
                                                                               -shift_b)
    return saturate(shift_round(total, out_shift), bits, 0 if relu else None)


def linear(x, weights, bias) -> tuple[np.ndarray, int]:
    """The exact logits ``weights @ x + bias`` (int64) and the arg-max class (lowest index on ties)."""
    logits = np.asarray(weights, dtype=np.int64) @ np.asarray(x, dtype=np.int64) + np.asarray(bias, dtype=np.int64)
    return logits, int(np.argmax(logits))
