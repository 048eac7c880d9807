"""What the design says, written from the geometry and the documentation's words alone.

Nothing here is shared with the generator or its model: the convolution is re-derived
from the four per-axis tuples, and the output quantisation is docs/interfaces.md's definition (the tile) in
exact rational arithmetic:

    y is shifted right by ``output_shift`` bits (truncate = floor, an arithmetic shift;
    round-half-up = floor(x / 2^s + 1/2); round-half-even = ties to even), then
    saturated to ``output_width`` bits.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product

TRUNCATE, HALF_UP, HALF_EVEN = "truncate", "round-half-up", "round-half-even"


def convolution_taps(output, kernel, stride, dilation) -> list[list[tuple[int, int]]]:
    """Per output word (row-major), the (input word, kernel word) pairs it sums:
    ``y[o] = sum_k d[o * stride + k * dilation] * g[k]`` per axis, cross-correlation without padding."""
    tile = [(o - 1) * s + (k - 1) * dl + 1 for o, k, s, dl in zip(output, kernel, stride, dilation)]

    def flat(index, dims) -> int:
        i = 0
        for x, n in zip(index, dims):
            i = i * n + x
        return i
    taps = []
    for o in product(*(range(n) for n in output)):
        row = []
        for k in product(*(range(n) for n in kernel)):
            pos = [oo * s + kk * dl for oo, kk, s, dl in zip(o, k, stride, dilation)]
            row.append((flat(pos, tile), flat(k, kernel)))
        taps.append(row)
    return taps


def round_shift(y: int, shift: int, rounding: str) -> int:
    """``y / 2^shift`` rounded by the named mode (exact rationals)."""
    x = Fraction(y, 1 << shift)
    if rounding == TRUNCATE:
        return math.floor(x)
    if rounding == HALF_UP:
        return math.floor(x + Fraction(1, 2))
    if rounding == HALF_EVEN:
        f = math.floor(x)
        frac = x - f
        if frac > Fraction(1, 2):
            return f + 1
        if frac < Fraction(1, 2):
            return f
        return f if f % 2 == 0 else f + 1
    raise ValueError(f"no rounding mode {rounding!r}")


def saturate(y: int, width: int) -> int:
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    return lo if y < lo else hi if y > hi else y


def quantise_reference(y: int, shift: int, rounding: str, width: int | None) -> int:
    """The output word the design declares for the exact convolution value ``y``."""
    if width is None:
        return y
    return saturate(round_shift(y, shift, rounding), width)
