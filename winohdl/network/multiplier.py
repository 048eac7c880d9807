"""Requantisation by an integer multiplier and a rounding shift, proven equal to the trained scale.

A layer trained with float scales maps its accumulator ``a`` (at scale ``s_in * s_w``) to its output
at scale ``s_out``: the specification is ``sat(round(a * r))`` with ``r = s_in * s_w / s_out`` computed
exactly from the float32 scales (a rational number), rounding half to even, ``sat`` the output's range
(and 0 below with a fused ReLU). The hardware computes ``sat(round(a * M / 2**s))`` (a multiply, then
:func:`~winohdl.core.fixed.requantise`'s rounding shift). :func:`choose` takes the narrowest ``M``
(fewest bits) for which the two are equal for **every** accumulator value ``|a| <= bound``, and proves
it: both sides are monotone in ``a`` and saturate, so only ``|a| <= A`` (the first value saturating
on both sides) can differ; they can differ only where ``a * r`` lies within ``|a| * |r - M / 2**s|`` of
a rounding boundary (a half-integer), and those few accumulators are checked in exact rational
arithmetic. Where no ``M`` up to :data:`MAX_BITS` bits is exact, the best one is kept and the accumulator
values where it differs are counted (each by one step).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

MAX_BITS = 32        # the widest multiplier tried (a 32-bit constant: two 18x18 DSP blocks at most)
MAX_SUSPECTS = 256  # accumulators checked exactly at most per try (a coarser M is skipped)
MAX_SHIFT = 52       # acc * M stays below 2**62 in the integer model (the accumulator is clipped first)


@dataclass(frozen=True)
class Multiplier:
    """``M`` and ``shift``: the requantisation ``round(a * M / 2**shift)``.

    Attributes
    ----------
    M : int
        The multiplier (> 0).
    shift : int
        The rounding shift right (>= 0).
    checked : int
        Accumulator values the proof had to check exactly (the others are far from a rounding boundary).
    differ : int
        Accumulator values in range where the result differs from the specification by one step
        (0: exact for every reachable accumulator).
    """

    M: int
    shift: int
    checked: int = 0
    differ: int = 0

    @property
    def bits(self) -> int:
        """The multiplier's width (unsigned)."""
        return self.M.bit_length()


def ratio(s_in: float, s_w: float, s_out: float) -> Fraction:
    """``s_in * s_w / s_out`` exactly, each scale taken as the float32 number it is."""
    f = [Fraction(float(np.float32(s))) for s in (s_in, s_w, s_out)]
    return f[0] * f[1] / f[2]


def round_half_even(x: Fraction) -> int:
    return round(x)          # Python rounds a Fraction half to even


def reference(a: int, r: Fraction, lo: int, hi: int) -> int:
    """The specification for one accumulator: ``a * r`` rounded half to even, clamped to ``[lo, hi]``."""
    return min(hi, max(lo, round_half_even(a * r)))


def implemented(a: int, M: int, shift: int, lo: int, hi: int) -> int:
    return min(hi, max(lo, round_half_even(Fraction(a * M, 1 << shift))))


def choose(r: Fraction, bound: int, lo: int, hi: int) -> Multiplier:
    """The narrowest ``(M, shift)`` with ``round(a * M / 2**shift)`` equal to ``round(a * r)`` after
    clamping to ``[lo, hi]`` for every whole ``|a| <= bound`` (see the module docstring); where none
    up to :data:`MAX_BITS` bits is, the widest tried with the count of values that differ."""
    if r <= 0:
        raise ValueError(f"a requantisation ratio must be positive, got {r}")
    reach = min(bound, math.ceil((max(abs(lo), abs(hi)) + 1) / r) + 1)   # beyond: both saturate
    a = np.arange(-reach, reach + 1, dtype=np.float64)
    near = np.abs((a * float(r)) % 1.0 - 0.5)        # distance of a * r to the nearest half-integer
    best = None
    first = max(0, -math.floor(math.log2(r)))        # where M has at least one bit
    for shift in range(first, MAX_SHIFT + 1):
        M = round_half_even(r * (1 << shift))
        if M < 1:
            continue
        if M.bit_length() > MAX_BITS:
            break
        delta = abs(float(r - Fraction(M, 1 << shift)))
        # float64 computes a * r within 1e-13 of the truth (|a * r| < 2**9 here): 1e-9 is a safe margin
        suspects = a[near <= np.abs(a) * delta + 1e-9].astype(np.int64)
        wider = round_half_even(r * (1 << (shift + 1))).bit_length() <= MAX_BITS and shift < MAX_SHIFT
        if len(suspects) > MAX_SUSPECTS and wider:
            continue                                 # too coarse to be worth checking: a finer M
        suspects = np.union1d(suspects, [-reach, reach])   # the ends: saturated on both sides
        differ = sum(reference(int(v), r, lo, hi) != implemented(int(v), M, shift, lo, hi) for v in suspects)
        best = Multiplier(M, shift, len(suspects), differ)
        if differ == 0 or not wider:
            return best
    return best
