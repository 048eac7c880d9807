"""The requantisation of a sum of two activations at their own trained scales, proven on every pair.

A residual block adds two quantised tensors, ``a`` at scale ``s_a`` and ``b`` at ``s_b`` (Brevitas: two
quantisers' outputs added as floats, a third quantiser after the sum), and quantises the sum at
``s_out``. The specification is ``sat(round((a * s_a + b * s_b) / s_out))`` with both ratios
``r_a = s_a / s_out`` and ``r_b = s_b / s_out`` computed exactly from the float32 scales (rationals),
rounding half to even, ``sat`` the output's range (at 0 below after a fused ReLU). The hardware computes
``sat(round((a * M_a + b * M_b) / 2**shift))``: two constant multiplications, one add, one rounding
shift. :func:`choose` takes the smallest ``shift`` (the narrowest multipliers, ``M = round(r * 2**shift)``)
for which the two are equal on **every** pair of the inputs' ranges (at most 2**9 x 2**9 values: all of
them are checked, in integers, against the exact rational reference). Where no pair of multipliers up to
:data:`~winohdl.network.multiplier.MAX_BITS` bits is exact (a sum that lands exactly on a half-integer
the multipliers cannot reproduce), the one with the fewest differing pairs is kept and they are counted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from winohdl.core.fixed import shift_round

from .multiplier import MAX_BITS, MAX_SHIFT


@dataclass(frozen=True)
class SumMultiplier:
    """``M`` (one per input) and ``shift``: the requantisation ``round((a * M[0] + b * M[1]) / 2**shift)``.

    Attributes
    ----------
    M : tuple of int
        The multipliers of the two inputs, in the node's input order (each >= 1).
    shift : int
        The rounding shift right (>= 0).
    checked : int
        Input pairs compared with the specification (every pair of the two ranges).
    differ : int
        Pairs where the result differs from the specification (0: exact for every reachable pair).
    """

    M: tuple[int, int]
    shift: int
    checked: int
    differ: int

    @property
    def bits(self) -> int:
        """The wider multiplier's width (unsigned)."""
        return max(m.bit_length() for m in self.M)


def reference(ratios: tuple[Fraction, Fraction], a: np.ndarray, b: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """The specification on integer arrays ``a``, ``b``: ``a * r_a + b * r_b`` rounded half to even
    (exactly: over the ratios' common denominator, in Python integers), clamped to ``[lo, hi]``."""
    den = math.lcm(*(r.denominator for r in ratios))
    num = [r.numerator * (den // r.denominator) for r in ratios]
    n = a.astype(object) * num[0] + b.astype(object) * num[1]
    floor = n // den
    twice = 2 * (n - floor * den)                            # twice the remainder, in [0, 2 * den)
    up = (twice > den) | ((twice == den) & (floor % 2 == 1))
    return np.clip((floor + up.astype(object)).astype(np.int64), lo, hi)


def implemented(M: tuple[int, int], shift: int, a: np.ndarray, b: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """What the hardware computes: ``sat(round((a * M[0] + b * M[1]) / 2**shift))`` (int64: exact while
    the multipliers stay within :data:`MAX_BITS` bits and the inputs within 9)."""
    return np.clip(shift_round(a.astype(np.int64) * M[0] + b.astype(np.int64) * M[1], shift), lo, hi)


def pairs(range_a: tuple[int, int], range_b: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of whole numbers of the two ranges, as two flat int64 arrays."""
    a, b = np.meshgrid(np.arange(range_a[0], range_a[1] + 1), np.arange(range_b[0], range_b[1] + 1), indexing="ij")
    return a.reshape(-1).astype(np.int64), b.reshape(-1).astype(np.int64)


def choose(ratios: tuple[Fraction, Fraction], range_a: tuple[int, int], range_b: tuple[int, int],
           lo: int, hi: int) -> SumMultiplier:
    """The smallest ``shift`` whose rounded multipliers give the specification on every pair of ``range_a``
    x ``range_b`` (see the module docstring); where none up to :data:`MAX_BITS` bits does, the one with the
    fewest differing pairs, counted."""
    if min(ratios) <= 0:
        raise ValueError(f"the ratios of a sum must be positive, got {ratios}")
    a, b = pairs(range_a, range_b)
    want = reference(ratios, a, b, lo, hi)
    best = None
    for shift in range(MAX_SHIFT + 1):
        M = tuple(round(r * (1 << shift)) for r in ratios)
        if min(M) < 1:
            continue
        if max(m.bit_length() for m in M) > MAX_BITS:
            break
        differ = int(np.count_nonzero(implemented(M, shift, a, b, lo, hi) != want))
        if best is None or differ < best.differ:
            best = SumMultiplier(M, shift, len(a), differ)
        if differ == 0:
            break
    return best
