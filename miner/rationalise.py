"""From a near-exact float algorithm to a proven rational card.

1. Gauge: each term is rescaled (identity-preserving) so its B^T row and A^T
   column have largest magnitude 1.
2. Tiered snapping of B^T and G (fc_D, fc_F): entries closest to 0 are fixed
   first, then +-1, then +-2 and +-1/2, ... (denominators q = 1..q_max). Each
   chunk of fixed entries is followed by an exact-tensor refit of the free
   entries (ALS with fixed entries); a chunk whose refit does not return to an
   exact fit is undone and retried in halves (backtracking).
3. A^T (fc_C) is solved by least squares against the exact tensor, snapped to
   nearby rationals, and the identity is proven in exact arithmetic. Nothing is
   called exact without that proof.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import numpy as np

from .als import Factors, fit, residual
from .card import AlgorithmCard, CardError, prove_identity
from .geometry import Geometry

EXACT = 1e-8


def tiers(q_max: int) -> list[list[Fraction]]:
    """Snapping tiers: [0], [+-1], [+-2, +-1/2], [+-3, +-1/3, +-3/2, +-2/3], ... up to q_max."""
    out, seen = [[Fraction(0)], [Fraction(1), Fraction(-1)]], {Fraction(0), Fraction(1), Fraction(-1)}
    for k in range(2, max(q_max, 1) + 1):
        tier = []
        for p, q in product(range(1, k + 1), repeat=2):
            if max(p, q) == k and q <= q_max:
                for v in (Fraction(p, q), Fraction(-p, q)):
                    if v not in seen:
                        seen.add(v)
                        tier.append(v)
        if tier:
            out.append(sorted(tier, key=lambda v: (abs(v.numerator) + v.denominator, v)))
    return out


def normalise_gauge(f: Factors) -> None:
    for r in range(f.rank):
        b = np.abs(f.BT[r]).max()
        a = np.abs(f.AT[:, r]).max()
        if b > 1e-12 and a > 1e-12:
            f.BT[r] /= b
            f.AT[:, r] /= a
            f.G[r] *= a * b


def _nearest(x: float, values: list[Fraction]) -> tuple[float, Fraction]:
    best = min(values, key=lambda v: abs(x - float(v)))
    return abs(x - float(best)), best


def snap_tiered(T: np.ndarray, f: Factors, q_max: int, names=("BT", "G"), max_refits: int = 400,
                refit_sweeps: int = 150, should_stop=lambda: False) -> Factors | None:
    """Fix every entry of ``names`` to a small rational, refitting the rest; None on failure."""
    f = f.copy()
    normalise_gauge(f)
    refits = 0
    for tier in tiers(q_max):
        refused: set = set()
        while True:
            cands = []
            for name in names:
                m, mask = getattr(f, name), f.mask(name)
                for idx in zip(*np.nonzero(~mask)):
                    if (name, idx) in refused:
                        continue
                    dist, val = _nearest(m[idx], tier)
                    if dist < 0.5:
                        cands.append((dist, name, idx, val))
            if not cands:
                break
            cands.sort(key=lambda c: c[0])
            chunk = max(1, len(cands) // 3)
            while True:
                if refits >= max_refits or should_stop():
                    return None
                trial = f.copy()
                for _, name, idx, val in cands[:chunk]:
                    getattr(trial, name)[idx] = float(val)
                    trial.mask(name)[idx] = True
                refits += 1
                res = fit(T, trial, sweeps=refit_sweeps, lam0=1e-10, lam_min=1e-14, tol=EXACT)
                if res < 1e-6:
                    f = trial
                    break
                if chunk == 1:
                    refused.add((cands[0][1], cands[0][2]))
                    break
                chunk = max(1, chunk // 2)
    for name in names:
        if not f.mask(name).all():
            return None
    return f if residual(T, f) < 1e-5 else None


def solve_output(T: np.ndarray, BT, G) -> np.ndarray | None:
    """fc_C by least squares against the exact tensor, for fixed rational B^T and G."""
    R = len(BT)
    B = np.array([[float(v) for v in row] for row in BT])
    Gm = np.array([[float(v) for v in row] for row in G])
    ny, nd, ng = T.shape
    K = (B[:, :, None] * Gm[:, None, :]).reshape(R, nd * ng)
    AT, *_ = np.linalg.lstsq(K.T, T.reshape(ny, nd * ng).T, rcond=None)
    return AT.T


def to_rational(x: float, max_den: int) -> Fraction:
    return Fraction(x).limit_denominator(max_den)


def _invert(rows: list[list[Fraction]]) -> list[list[Fraction]] | None:
    n = len(rows)
    aug = [list(r) + [Fraction(int(i == j)) for j in range(n)] for i, r in enumerate(rows)]
    for c in range(n):
        p = next((r for r in range(c, n) if aug[r][c] != 0), None)
        if p is None:
            return None
        aug[c], aug[p] = aug[p], aug[c]
        pv = aug[c][c]
        aug[c] = [v / pv for v in aug[c]]
        for r in range(n):
            if r != c and aug[r][c] != 0:
                fr = aug[r][c]
                aug[r] = [a - fr * b for a, b in zip(aug[r], aug[c])]
    return [r[n:] for r in aug]


def complete_from_data_transform(geometry: Geometry, BT) -> tuple[list, list] | None:
    """At R = |d_used| the data transform decides the rest exactly.

    With W = (B^T restricted to the used inputs)^-1, term r must be the matrix
    ``M_r = sum_d W[d, r] T[:, d, :]`` (|y| x |g|); the algorithm exists iff every
    M_r has rank one, and then ``M_r = A^T[:, r] G[r, :]`` in exact rationals.
    """
    used = geometry.used_inputs()
    if len(BT) != len(used):
        return None
    W = _invert([[BT[r][d] for d in used] for r in range(len(BT))])  # W[i][r], i over used inputs
    if W is None:
        return None
    T = geometry.tensor()
    G, cols = [], []
    for r in range(len(BT)):
        M = [[Fraction(0)] * geometry.n_g for _ in range(geometry.n_y)]
        for i, d in enumerate(used):
            if W[i][r]:
                for y, g in zip(*np.nonzero(T[:, d, :])):
                    M[y][g] += W[i][r]
        pivot_row = next((row for row in M if any(row)), None)
        if pivot_row is None:
            return None
        j = next(k for k, v in enumerate(pivot_row) if v)
        a = [row[j] / pivot_row[j] for row in M]
        if any(M[y][k] != a[y] * pivot_row[k] for y in range(geometry.n_y) for k in range(geometry.n_g)):
            return None  # not rank one: this B^T admits no algorithm
        G.append(list(pivot_row))
        cols.append(a)
    AT = [[cols[r][y] for r in range(len(BT))] for y in range(geometry.n_y)]
    return G, AT


def prove_card(geometry: Geometry, f: Factors, q_max: int, provenance: dict) -> AlgorithmCard | None:
    """Rational fc_D (and fc_F) from snapped ``f``; fc_C by least squares; then the exact proof."""
    from .constructive import normalise_terms
    T = geometry.tensor().astype(float)
    BT = [[to_rational(v, q_max) for v in row] for row in f.BT]
    exact = complete_from_data_transform(geometry, BT)
    if exact is not None:
        G, ATq = exact
        candidates = [ATq]
    else:
        G = [[to_rational(v, q_max) for v in row] for row in f.G]
        AT = solve_output(T, BT, G)
        candidates = [[[to_rational(v, den) for v in row] for row in AT] for den in (q_max, 64, 4096)]
    for ATq in candidates:
        try:
            prove_identity(geometry, BT, G, ATq)
        except CardError:
            continue
        BTn, Gn, ATn = normalise_terms(BT, G, ATq)
        return AlgorithmCard.build(geometry, BTn, Gn, ATn, provenance)
    return None


def snap_row(row: np.ndarray, q_max: int, tol: float = 0.05) -> list[Fraction] | None:
    """Snap one B^T row up to its free scale: try making each non-zero entry +-1 and
    keep the scaling whose entries all land within ``tol`` of rationals with q <= q_max."""
    best = None
    for pivot in np.nonzero(np.abs(row) > 1e-6)[0]:
        scaled = row / row[pivot]
        snapped = [to_rational(v, q_max) for v in scaled]
        err = max(abs(float(a) - b) for a, b in zip(snapped, scaled))
        key = (err > tol, max(v.denominator for v in snapped), sum(abs(v) for v in snapped), err)
        if best is None or key < best[0]:
            best = (key, snapped)
    return best[1] if best is not None and not best[0][0] else None


def snap_direct(geometry: Geometry, f: Factors, q_max: int, provenance: dict) -> AlgorithmCard | None:
    """Snap B^T row by row (no refit) and complete it exactly; None when it does not prove."""
    rows = [snap_row(r, q_max) for r in f.BT]
    if any(r is None for r in rows):
        return None
    snapped = f.copy()
    snapped.BT = np.array([[float(v) for v in r] for r in rows])
    return prove_card(geometry, snapped, q_max, provenance)


def rationalise(geometry: Geometry, f: Factors, q_max: int, provenance: dict,
                should_stop=lambda: False) -> AlgorithmCard | None:
    """Snap a near-exact float algorithm and prove it; None when it does not snap."""
    if f.rank == geometry.lower_bound():
        card = snap_direct(geometry, f, q_max, provenance)
        if card is not None:
            return card
    T = geometry.tensor().astype(float)
    if residual(T, f) > 1e-3:
        f = f.copy()
        if fit(T, f, sweeps=300, lam0=1e-8, tol=EXACT) > 1e-3:
            return None
    names = ("BT",) if f.rank == geometry.lower_bound() else ("BT", "G")
    f = f.copy()
    unused = [d for d in range(geometry.n_d) if d not in set(geometry.used_inputs())]
    f.BT[:, unused] = 0.0
    f.mask("BT")[:, unused] = True
    snapped = snap_tiered(T, f, q_max, names=names, should_stop=should_stop)
    if snapped is None:
        return None
    return prove_card(geometry, snapped, q_max, provenance)
