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
from dataclasses import dataclass
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


Point = Fraction | None
"""An interpolation point of Toom-Cook: a rational, or None for the point at infinity."""


def default_points(n: int) -> list[Point]:
    """The classic n points of an n-multiplication Toom-Cook: n-1 from :func:`toom_points` and infinity."""
    return [*toom_points(n - 1), None]


def unit_correlation(m: int, k: int, points: list[Point] | None = None) -> tuple[Rows, Rows, Rows]:
    """Toom-Cook F(m, k) for ``y[o] = sum_j d[o + j] g[j]``: R = m + k - 1 = |d|.

    Built as the transpose of the Toom-Cook linear convolution of an m-term and a
    k-term polynomial evaluated at ``points`` (m + k - 1 distinct points, None for
    infinity; default :func:`default_points`).
    """
    n = m + k - 1
    if m == 1:  # a dot product: nothing to save
        return [[Fraction(int(i == j)) for j in range(n)] for i in range(n)], \
               [[Fraction(int(i == j)) for j in range(k)] for i in range(n)], [[Fraction(1)] * n]
    if k == 1:
        eye = [[Fraction(int(i == j)) for j in range(m)] for i in range(m)]
        return eye, [[Fraction(1)] for _ in range(m)], [list(r) for r in eye]
    pts = default_points(n) if points is None else points
    if len(pts) != n or len(set(pts)) != n:
        raise ValueError(f"F({m}, {k}) needs {n} distinct points, got {pts}")

    def evaluation(terms: int) -> Rows:
        return [[p ** i for i in range(terms)] if p is not None else [Fraction(int(i == terms - 1)) for i in range(terms)]
                for p in pts]

    ex, eg = evaluation(m), evaluation(k)  # n x m, n x k
    interp = invert(evaluation(n))         # n x n: values at points -> product coefficients
    BT = [[interp[dd][r] for dd in range(n)] for r in range(n)]  # BT[r, d] = C[d, r]
    AT = [[ex[r][o] for r in range(n)] for o in range(m)]        # AT[o, r] = E_x[r, o]
    return normalise_terms(BT, eg, AT)


@dataclass(frozen=True)
class Piece:
    """One unit-stride correlation F(m, k) of an axis (see the module docstring).

    Parameters
    ----------
    taps : list of int
        The kernel taps of the phase.
    outputs : list of int
        The outputs of the piece.
    positions : list of int
        The axis input each of the piece's m + k - 1 inputs reads.
    """

    taps: list[int]
    outputs: list[int]
    positions: list[int]

    @property
    def size(self) -> tuple[int, int]:
        """(m, k) of the piece's F(m, k)."""
        return len(self.outputs), len(self.taps)

    @property
    def needs_points(self) -> bool:
        """Whether the piece is a Toom-Cook whose points matter (not a dot product or a copy)."""
        return min(self.size) > 1


def axis_pieces(m: int, k: int, s: int, dl: int, tile: int | None = None) -> list[Piece]:
    """The pieces of one axis in the order :func:`axis_algorithm` lays out their terms.

    With ``tile``, every piece is cut into Toom-Cook tiles of at most ``tile`` outputs.
    """
    c = math.gcd(s, dl)
    sp, dlp = s // c, dl // c
    out = []
    for ph in range(sp):
        taps = list(range(ph, k, sp))
        if not taps:
            continue
        for t in range(dlp):
            outs = list(range(t, m, dlp))
            step = tile or max(len(outs), 1)
            for start in range(0, len(outs), step):
                piece = outs[start:start + step]
                # piece input i reads d[c * (ph*dl' + s' * (t + dl' * (start + i)))] (see module docstring)
                pos = [c * (ph * dlp + sp * (t + dlp * (start + i))) for i in range(len(piece) + len(taps) - 1)]
                out.append(Piece(taps, piece, pos))
    return out


def axis_algorithm(m: int, k: int, s: int, dl: int, tile: int | None = None,
                   points: list[list[Point] | None] | None = None) -> tuple[Rows, Rows, Rows]:
    """Optimal 1D algorithm for one axis (full |d| = (m-1)s + (k-1)dl + 1 columns).

    With ``tile``, every piece is cut into Toom-Cook tiles of at most ``tile`` outputs (more
    multiplications, fewer and smaller constants: the R-versus-cost front of :mod:`miner.pareto`).
    ``points`` gives each piece of :func:`axis_pieces` its interpolation points (None: the
    default ones).
    """
    n_in = (m - 1) * s + (k - 1) * dl + 1
    pieces = axis_pieces(m, k, s, dl, tile)
    points = points or [None] * len(pieces)
    BT, G, AT_cols = [], [], []
    for piece, pts in zip(pieces, points, strict=True):
        pb, pg, pa = unit_correlation(*piece.size, pts)
        for r in range(len(pb)):
            row = [Fraction(0)] * n_in
            for i, p in enumerate(piece.positions):
                row[p] = pb[r][i]
            BT.append(row)
            grow = [Fraction(0)] * k
            for i, j in enumerate(piece.taps):
                grow[j] = pg[r][i]
            G.append(grow)
            col = [Fraction(0)] * m
            for i, o in enumerate(piece.outputs):
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
