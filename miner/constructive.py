"""The constructive optimum: Toom-Cook per phase/residue piece, nested across axes.

Per axis, ``y[o] = sum_j d[o*s + j*dl] g[j]``. Factor out c = gcd(s, dl), split
the taps by phase ``j mod s'`` and the outputs by residue ``o mod dl'``: every
piece is a unit-stride correlation F(m_t, k_ph) on its own contiguous run of
input samples, and the runs are disjoint (CRT), so the pieces' Toom-Cook
algorithms together use exactly |d_used| multiplications, the lower bound.
Axes are nested by Kronecker products (row-major flattening).
"""

from __future__ import annotations

import math
import time
from fractions import Fraction
from itertools import count

from winohdl.core.card import AlgorithmCard, normalise_terms
from winohdl.core.geometry import Geometry
from winohdl.core.rational import invert

Rows = list[list[Fraction]]


def toom_points(n_finite: int) -> list[Fraction]:
    """Small interpolation points 0, 1, -1, 2, -2, 1/2, -1/2, 3, -3, 1/3, -1/3, ..."""
    pts = [Fraction(0)]
    for a in count(1):
        cand = [Fraction(a), Fraction(-a)] + ([Fraction(1, a), Fraction(-1, a)] if a > 1 else [])
        for p in cand:
            if len(pts) >= n_finite:
                return pts[:n_finite]
            pts.append(p)
    return pts  # pragma: no cover


def unit_correlation(m: int, k: int) -> tuple[Rows, Rows, Rows]:
    """Toom-Cook F(m, k) for ``y[o] = sum_j d[o + j] g[j]``: R = m + k - 1 = |d|.

    Built as the transpose of the Toom-Cook linear convolution of an m-term and a
    k-term polynomial evaluated at n-1 small points and infinity.
    """
    n = m + k - 1
    if m == 1:  # a dot product: nothing to save
        return [[Fraction(int(i == j)) for j in range(n)] for i in range(n)], \
               [[Fraction(int(i == j)) for j in range(k)] for i in range(n)], [[Fraction(1)] * n]
    if k == 1:
        eye = [[Fraction(int(i == j)) for j in range(m)] for i in range(m)]
        return eye, [[Fraction(1)] for _ in range(m)], [list(r) for r in eye]
    pts = toom_points(n - 1)

    def evaluation(terms: int) -> Rows:
        rows = [[p ** i for i in range(terms)] for p in pts]
        rows.append([Fraction(int(i == terms - 1)) for i in range(terms)])  # infinity
        return rows

    ex, eg = evaluation(m), evaluation(k)  # n x m, n x k
    interp = invert(evaluation(n))         # n x n: values at points -> product coefficients
    BT = [[interp[dd][r] for dd in range(n)] for r in range(n)]  # BT[r, d] = C[d, r]
    AT = [[ex[r][o] for r in range(n)] for o in range(m)]        # AT[o, r] = E_x[r, o]
    return normalise_terms(BT, eg, AT)


def axis_algorithm(m: int, k: int, s: int, dl: int, tile: int | None = None) -> tuple[Rows, Rows, Rows]:
    """Optimal 1D algorithm for one axis (full |d| = (m-1)s + (k-1)dl + 1 columns).

    With ``tile``, every piece is cut into Toom-Cook tiles of at most ``tile`` outputs (more
    multiplications, fewer and smaller constants: the R-versus-cost front of :mod:`miner.pareto`).
    """
    n_in = (m - 1) * s + (k - 1) * dl + 1
    c = math.gcd(s, dl)
    sp, dlp = s // c, dl // c
    BT, G, AT_cols = [], [], []
    for ph in range(sp):
        taps = list(range(ph, k, sp))
        if not taps:
            continue
        for t in range(dlp):
            outs = list(range(t, m, dlp))
            step = tile or max(len(outs), 1)
            for start in range(0, len(outs), step):
                piece = outs[start:start + step]
                pb, pg, pa = unit_correlation(len(piece), len(taps))
                # piece input i reads d[c * (ph*dl' + s' * (t + dl' * (start + i)))] (see module docstring)
                pos = [c * (ph * dlp + sp * (t + dlp * (start + i))) for i in range(len(piece) + len(taps) - 1)]
                for r in range(len(pb)):
                    row = [Fraction(0)] * n_in
                    for i, p in enumerate(pos):
                        row[p] = pb[r][i]
                    BT.append(row)
                    grow = [Fraction(0)] * k
                    for i, j in enumerate(taps):
                        grow[j] = pg[r][i]
                    G.append(grow)
                    col = [Fraction(0)] * m
                    for i, o in enumerate(piece):
                        col[o] = pa[i][r]
                    AT_cols.append(col)
    AT = [[AT_cols[r][o] for r in range(len(AT_cols))] for o in range(m)]
    return BT, G, AT


def kron(a: Rows, b: Rows) -> Rows:
    return [[x * y for x in ra for y in rb] for ra in a for rb in b]


def constructive_card(geometry: Geometry) -> AlgorithmCard:
    """A proven card at R = lower bound, in milliseconds; provenance ``constructive``."""
    t0 = time.perf_counter()
    parts = [axis_algorithm(*args) for args in zip(geometry.output, geometry.kernel, geometry.stride, geometry.dilation)]
    BT, G, AT = parts[0]
    for pb, pg, pa in parts[1:]:
        BT, G, AT = kron(BT, pb), kron(G, pg), kron(AT, pa)
    prov = {"method": "constructive", "seed": None, "steps": 0,
            "seconds": round(time.perf_counter() - t0, 6), "device": "cpu",
            "config": {"points": "0, +-1, +-2, +-1/2, ... and infinity, per phase/residue piece"}}
    return AlgorithmCard.build(geometry, BT, G, AT, prov)
