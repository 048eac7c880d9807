"""Sliding windows over the spatial axes of a batch ``(N, C, *spatial)``: convolution and pooling.

The one place that turns a window's kernel, stride, dilation and symmetric padding into array
views (torch's semantics, floor rounding), shared by the integer model and the pooling counts.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def windows(x: np.ndarray, kernel, stride, dilation, padding, pad_value) -> np.ndarray:
    """A read-only view ``(N, C, *out, *kernel)``: input values under each kernel tap per output position.

    ``x`` is padded with ``pad_value`` by ``padding`` on both sides of each spatial axis.
    """
    axes = len(kernel)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding], constant_values=pad_value)
    extent = [(k - 1) * d + 1 for k, d in zip(kernel, dilation)]
    view = sliding_window_view(xp, extent, axis=tuple(range(2, 2 + axes)))
    index = (slice(None),) * 2 + tuple(slice(None, None, s) for s in stride) \
        + tuple(slice(None, None, d) for d in dilation)
    return view[index]


def window_sum(x: np.ndarray, pool, pad_value=0) -> np.ndarray:
    """The sum of each pooling window (attributes ``pool``: kernel, stride, padding), ``(N, C, *out)``."""
    v = windows(x, pool.kernel, pool.stride, (1,) * len(pool.kernel), pool.padding, pad_value)
    return v.sum(axis=tuple(range(-len(pool.kernel), 0)))


def window_max(x: np.ndarray, pool) -> np.ndarray:
    """The maximum of each pooling window; padding never wins (it is the dtype's minimum)."""
    v = windows(x, pool.kernel, pool.stride, (1,) * len(pool.kernel), pool.padding, np.iinfo(x.dtype).min)
    return v.max(axis=tuple(range(-len(pool.kernel), 0)))
