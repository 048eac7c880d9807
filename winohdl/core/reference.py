"""The one call of torch's own conv1d/conv2d/conv3d, the reference every check compares with:
batches of tiles (:func:`reference_conv`) and whole layers with padding (:func:`exact_conv`)."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from .errors import WinohdlError
from .geometry import Geometry

_CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}


def _tensor(a, dtype) -> torch.Tensor:
    return (a if torch.is_tensor(a) else torch.as_tensor(np.asarray(a))).to(dtype)


def torch_conv(x, w, stride, dilation, padding=0, groups: int = 1, dtype=torch.float64) -> torch.Tensor:
    """torch's convolution of x (N, C, *F) with w (K, C / groups, *kernel), in ``dtype``."""
    x_t, w_t = _tensor(x, dtype), _tensor(w, dtype)
    return _CONV[x_t.dim() - 2](x_t, w_t, stride=stride, dilation=dilation, padding=padding, groups=groups)


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
    d_t, g_t = _tensor(d, dtype), _tensor(g, dtype)
    single = d_t.dim() == 1
    if single:
        d_t, g_t = d_t[None], g_t[None]
    b = d_t.shape[0]
    y = torch_conv(d_t.reshape(1, b, *geometry.input), g_t.reshape(b, 1, *geometry.kernel), geometry.stride,
                   geometry.dilation, groups=b, dtype=dtype)
    y = y.reshape(b, geometry.n_y)
    return y[0] if single else y


def worst_partial_sum(data_bits: int, kernel_bits: int, terms: int) -> int:
    """The largest magnitude a sum of ``terms`` signed data_bits x kernel_bits products reaches."""
    return (1 << (data_bits - 1)) * (1 << (kernel_bits - 1)) * terms


def exact_in_float64(data_bits: int, kernel_bits: int, geometry: Geometry) -> bool:
    """True when every product and partial sum of a signed data_bits x kernel_bits
    convolution is an integer below 2^53, so float64 torch is exact."""
    return worst_partial_sum(data_bits, kernel_bits, geometry.n_g) < 2**53


def exact_conv(x, w, data_bits: int, kernel_bits: int, stride, dilation, padding) -> np.ndarray:
    """torch's convolution of one integer layer x (C, *F) with w (K, C, *kernel), exactly: float64 while
    every partial sum is provably below 2^53, else int64 (torch's integer convolution, CPU-only); a
    Python-integer array (K, *O). A layer whose partial sums need more than 62 bits is refused."""
    x, w = np.asarray(x), np.asarray(w)
    worst = worst_partial_sum(data_bits, kernel_bits, int(np.prod(w.shape[1:])))
    if worst >= 2**62:
        raise WinohdlError(f"the reference for {worst.bit_length()}-bit partial sums is not exact in int64")
    dtype = torch.float64 if worst < 2**53 else torch.int64
    y = torch_conv(x.astype(np.int64)[None], w.astype(np.int64), stride, dilation, padding, dtype=dtype)[0]
    return np.array(y.to(torch.int64).tolist(), dtype=object)
