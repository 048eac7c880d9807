"""Power-of-two fixed-point arithmetic: the integer primitives of a quantised network.

The one definition of rounding and saturation that the integer reference model
(:mod:`winohdl.network`), the hardware units (:mod:`hdl.stream`) and their tests share. A value
``q`` with exponent ``e`` stands for ``q * 2**e``. Requantisation from exponent ``e_in`` to
``e_out`` is :func:`shift_round` by ``e_out - e_in`` (an arithmetic shift right, rounding half
to even, as ONNX ``QuantizeLinear`` and IEEE round-to-nearest do, or an exact shift left when
the count is negative), then :func:`saturate`; ReLU is the lower clamp at 0.

Everything works on Python ints or on numpy integer arrays (int64 and object); results are exact.
"""

from __future__ import annotations

import numpy as np


def shift_round(x, shift: int):
    """``x / 2**shift`` rounded to the nearest integer, ties to even; ``x * 2**-shift`` for shift <= 0.

    >>> [shift_round(v, 1) for v in (-3, -2, -1, 0, 1, 2, 3, 5)]
    [-2, -1, 0, 0, 0, 1, 2, 2]
    """
    shift = int(shift)
    if shift <= 0:
        return x * (1 << -shift)
    half = 1 << (shift - 1)
    floor = x >> shift
    rem = x - (floor << shift)          # in [0, 2**shift)
    up = (rem > half) | ((rem == half) & (floor & 1 == 1))
    if isinstance(up, np.ndarray):
        return floor + up.astype(floor.dtype if floor.dtype != object else object)
    return floor + int(up)


def saturate(x, bits: int = 8, lower: int | None = None):
    """``x`` clamped to the signed ``bits``-bit range; with ``lower`` (ReLU: 0), clamped below there too."""
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if lower is not None:
        lo = max(lo, lower)
    if isinstance(x, np.ndarray):
        return np.minimum(np.maximum(x, lo), hi)
    return min(max(x, lo), hi)


def requantise(acc, shift: int, bits: int = 8, relu: bool = False):
    """An accumulator at exponent ``e_in`` as a ``bits``-bit value at ``e_in + shift``: shift with
    rounding half to even, then saturation (at 0 below with ``relu``)."""
    return saturate(shift_round(acc, shift), bits, 0 if relu else None)


def quantise(x, exponent: int, bits: int = 8):
    """Real values ``x`` (floats) as ``bits``-bit integers at ``exponent``: ``x / 2**exponent``
    rounded half to even and saturated, as ONNX ``QuantizeLinear`` with scale ``2**exponent``."""
    q = np.rint(np.asarray(x, dtype=np.float64) * 2.0 ** -exponent)
    return saturate(q.astype(np.int64), bits)
