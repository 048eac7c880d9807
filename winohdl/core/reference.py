"""Reference convolution with torch's own conv1d/conv2d/conv3d (stride, dilation, no padding)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from .geometry import Geometry

_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def reference_conv(geometry: Geometry, d, g, dtype=torch.float64):
    """Convolve a batch of tiles with torch.

    Parameters
    ----------
    d : array-like, shape (batch, |d|) or (|d|,), flattened row-major input tiles
    g : array-like, shape (batch, |g|) or (|g|,), flattened row-major kernels

    Returns
    -------
    torch.Tensor, shape (batch, |y|) (or (|y|,) for unbatched input), in ``dtype``.
    Each sample has its own kernel (a grouped convolution, one group per sample).
    """
    d_t = torch.as_tensor(np.asarray(d) if not torch.is_tensor(d) else d).to(dtype)
    g_t = torch.as_tensor(np.asarray(g) if not torch.is_tensor(g) else g).to(dtype)
    single = d_t.dim() == 1
    if single:
        d_t, g_t = d_t[None], g_t[None]
    b = d_t.shape[0]
    x = d_t.reshape(1, b, *geometry.input)
    w = g_t.reshape(b, 1, *geometry.kernel)
    y = _CONV[geometry.axes](x, w, stride=geometry.stride, dilation=geometry.dilation, groups=b)
    y = y.reshape(b, geometry.n_y)
    return y[0] if single else y


def exact_in_float64(data_bits: int, kernel_bits: int, geometry: Geometry) -> bool:
    """True when every product and partial sum of a signed data_bits x kernel_bits
    convolution is an integer below 2^53, so float64 torch is exact."""
    worst = 2 ** (data_bits - 1) * 2 ** (kernel_bits - 1) * geometry.n_g
    return worst < 2**53
