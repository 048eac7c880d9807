"""Exact range analysis: the true minimum and maximum of every datapath node.

Every node of a transform is a linear form in its inputs, so its range over a
box of inputs is exact (each coefficient picks the worse end). A product of two
independent ranges is exact (a corner). A node of the output transform is a
bilinear form ``d^T C g``: its extremes lie on vertices of the input boxes, found
exactly by enumerating the vertices of the smaller side when there are at most
2^ENUMERATE_LIMIT of them; otherwise a safe bound (each d*g pair at its own worst
corner) is used and the node is marked as not proven tight.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

import numpy as np

ENUMERATE_LIMIT = 12


@dataclass(frozen=True)
class Range:
    """Closed integer interval [lo, hi] with the inputs that reach each end when known."""

    lo: int
    hi: int
    tight: bool = True

    @property
    def width(self) -> int:
        """Bits of the narrowest signed two's complement word holding every value."""
        return signed_width(self.lo, self.hi)


def signed_width(lo: int, hi: int) -> int:
    """Bits of the narrowest signed two's complement word holding ``lo`` and ``hi`` (and all between)."""
    bits = lambda v: (v if v >= 0 else ~v).bit_length() + 1  # noqa: E731  (~v = -v - 1: -2**(w-1) fits w bits)
    return max(bits(lo), bits(hi))


def word_range(width: int) -> Range:
    return Range(-(1 << (width - 1)), (1 << (width - 1)) - 1)


def linear_range(coeffs, box: list[Range]) -> Range:
    lo = hi = 0
    for c, r in zip(coeffs, box):
        a, b = c * r.lo, c * r.hi
        lo += min(a, b)
        hi += max(a, b)
    return Range(lo, hi)


def linear_witness(coeffs, box: list[Range], maximise: bool) -> list[int]:
    """An input vector reaching the max (or min) of a linear form."""
    return [(r.hi if (c > 0) == maximise else r.lo) if c else r.lo for c, r in zip(coeffs, box)]


def product_range(a: Range, b: Range) -> Range:
    corners = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
    return Range(min(corners), max(corners), a.tight and b.tight)


def bilinear_range(C: np.ndarray, dbox: Range, gbox: Range) -> tuple[Range, tuple | None]:
    """Range of ``d^T C g`` over d in dbox^n, g in gbox^k (C integer, n x k).

    Returns the range and, when exact, witnesses ((d_max, g_max), (d_min, g_min)).
    """
    C = np.asarray(C, dtype=object)
    used_d = [i for i in range(C.shape[0]) if any(C[i])]
    used_g = [j for j in range(C.shape[1]) if any(C[:, j])]
    if not used_d:
        return Range(0, 0), None
    sub = C[np.ix_(used_d, used_g)]
    transpose = len(used_g) > len(used_d)
    if transpose:  # enumerate the smaller side
        sub, (vbox, obox) = sub.T, (dbox, gbox)
    else:
        vbox, obox = gbox, dbox
    n_enum = sub.shape[1]
    matching = all(sum(1 for c in row if c) <= 1 for row in sub) and all(sum(1 for c in col if c) <= 1 for col in sub.T)
    if n_enum > ENUMERATE_LIMIT:
        lo = hi = 0
        for c in sub.flat:
            corners = [c * x * y for x in (dbox.lo, dbox.hi) for y in (gbox.lo, gbox.hi)]
            lo, hi = lo + min(corners), hi + max(corners)
        # with at most one coefficient per row and column every pair is independent: exact
        return Range(lo, hi, tight=matching), None
    big = max(abs(int(c)) for c in sub.flat) * sub.size * max(abs(vbox.lo), abs(vbox.hi)) * max(abs(obox.lo), abs(obox.hi))
    dtype = np.int64 if big < 2**62 else object
    V = np.array(list(product((vbox.lo, vbox.hi), repeat=n_enum)), dtype=dtype)  # vertices x n_enum
    W = V.dot(sub.T.astype(dtype))  # per vertex: the other side's coefficients
    his = np.maximum(W * obox.lo, W * obox.hi).sum(axis=1)
    los = np.minimum(W * obox.lo, W * obox.hi).sum(axis=1)
    ih, il = int(np.argmax(his)), int(np.argmin(los))
    best_hi = (his[ih], V[ih], [obox.hi if c > 0 else obox.lo for c in W[ih]])
    best_lo = (los[il], V[il], [obox.lo if c > 0 else obox.hi for c in W[il]])

    def full(vertex, other):
        dv, gv = (other, vertex) if not transpose else (vertex, other)
        d = [dbox.lo] * C.shape[0]
        g = [gbox.lo] * C.shape[1]
        for i, v in zip(used_d, dv):
            d[i] = int(v)
        for j, v in zip(used_g, gv):
            g[j] = int(v)
        return d, g

    return Range(int(best_lo[0]), int(best_hi[0])), (full(*best_hi[1:]), full(*best_lo[1:]))
