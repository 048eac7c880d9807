"""From a near-exact float algorithm to a proven rational card.

At R = lower bound the structural move comes first: the float algorithm (refit
on the exact tensor when needed) is moved term by term onto small-rational
catalogue terms (:mod:`miner.terms`). Entry-wise snapping is the fallback:

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

import numpy as np

from .als import Factors, fit, residual
from winohdl.core.card import AlgorithmCard, CardError, prove_identity
from .constructive import normalise_terms
from winohdl.core.geometry import Geometry
from winohdl.core.rational import invert, nearest, tiers
from .terms import TermCatalogue, snap_structural

EXACT = 1e-8


def normalise_gauge(f: Factors) -> None:
    for r in range(f.rank):
        b = np.abs(f.BT[r]).max()
        a = np.abs(f.AT[:, r]).max()
        if b > 1e-12 and a > 1e-12:
            f.BT[r] /= b
            f.AT[:, r] /= a
            f.G[r] *= a * b


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
                    dist, val = nearest(m[idx], tier)
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


def complete_from_data_transform(geometry: Geometry, BT) -> tuple[list, list] | None:
    """At R = |d_used| the data transform decides the rest exactly.

    With W = (B^T restricted to the used inputs)^-1, term r must be the matrix
    ``M_r = sum_d W[d, r] T[:, d, :]`` (|y| x |g|); the algorithm exists iff every
    M_r has rank one, and then ``M_r = A^T[:, r] G[r, :]`` in exact rationals.
    """
    used = geometry.used_inputs()
    if len(BT) != len(used):
        return None
    W = invert([[BT[r][d] for d in used] for r in range(len(BT))])  # W[i][r], i over used inputs
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


def snap_term(cat: TermCatalogue, a: np.ndarray, g: np.ndarray, q_max: int):
    """Snap one term (A^T column a, G row g) to a rational class-constant pair (a, g), or None.

    a is scaled so its largest entry is 1 and its entries snapped; g is then the rational
    member of a's admissible G space (:meth:`TermCatalogue.g_space`) nearest the float g.
    """
    if np.abs(a).max() < 1e-9:
        return None
    i = int(np.argmax(np.abs(a)))
    a_n = a / a[i]
    g_n = g * a[i]
    for max_den in sorted({q_max, q_max ** 2, q_max ** 3}):
        aq = tuple(to_rational(v, max_den) for v in a_n)
        if max(abs(float(x) - y) for x, y in zip(aq, a_n)) > 0.1:
            continue
        basis = cat.g_space(aq)
        if not basis:
            continue
        B = np.array([[float(v) for v in b] for b in basis])
        coef, *_ = np.linalg.lstsq(B.T, g_n, rcond=None)
        cq = [to_rational(c, q_max ** 2) for c in coef]
        gq = tuple(sum(c * b[k] for c, b in zip(cq, basis)) for k in range(len(g_n)))
        if any(gq):
            return aq, gq
    return None


def snap_terms(geometry: Geometry, f: Factors, q_max: int, provenance: dict) -> AlgorithmCard | None:
    """Snap every term (A^T column, G row) entry-wise and complete B^T = W^-1 exactly
    (R = |d_used| only); None when a term does not snap or two snap onto the same point."""
    if f.rank != geometry.lower_bound():
        return None
    cat = TermCatalogue(geometry)
    terms = [snap_term(cat, f.AT[:, r], f.G[r], q_max) for r in range(f.rank)]
    return None if any(t is None for t in terms) else cat.card(terms, provenance)


def pin_points(geometry: Geometry, f: Factors, q_max: int) -> Factors | None:
    """Pin each term's evaluation point, then refit the rest exactly; None when the refit fails.

    Per term, the largest entry of its A^T column becomes 1 and, along each axis, its larger
    neighbour becomes the nearest small rational (one ratio per axis fixes the point of a
    nested term); terms pinned alike are kept apart.
    """
    T = geometry.tensor().astype(float)
    f = f.copy()
    normalise_gauge(f)
    values = sorted({v for tier in tiers(q_max) for v in tier if abs(v) <= 1}, key=float)
    mask = f.mask("AT")
    taken = set()  # (max index, neighbour, value): two terms pinned alike would be one point
    shape = geometry.output
    for r in range(f.rank):
        col = f.AT[:, r]
        i = int(np.argmax(np.abs(col)))
        f.AT[:, r] /= col[i]
        f.G[r] *= col[i]
        mask[i, r] = True
        pos = np.unravel_index(i, shape)
        for ax in range(len(shape)):
            neigh = []
            for step in (-1, 1):
                q = list(pos)
                q[ax] += step
                if 0 <= q[ax] < shape[ax]:
                    neigh.append(int(np.ravel_multi_index(q, shape)))
            if not neigh:
                continue
            j = max(neigh, key=lambda k: abs(f.AT[k, r]))
            if abs(f.AT[j, r]) < 1e-3:
                continue
            free = [v for v in values if (i, j, v) not in taken] or values
            v = nearest(f.AT[j, r], free)[1]
            taken.add((i, j, v))
            f.AT[j, r] = float(v)
            mask[j, r] = True
    return f if fit(T, f, sweeps=1500, lam0=1e-6, lam_min=1e-14, tol=EXACT) < 1e-7 else None


def rationalise(geometry: Geometry, f: Factors, q_max: int, provenance: dict,
                should_stop=lambda: False) -> AlgorithmCard | None:
    """Snap a near-exact float algorithm and prove it; None when it does not snap.

    At R = lower bound the structural move onto small-rational catalogue terms
    (:func:`miner.terms.snap_structural`) comes first, after an exact-tensor refit
    when the float algorithm is not yet exact; entry-wise snapping follows.
    """
    T = geometry.tensor().astype(float)
    if f.rank == geometry.lower_bound():
        exact = f
        if residual(T, f) > EXACT:
            exact = f.copy()  # a local exact-tensor refit (from an SGD point: ~0.2 s)
            fit(T, exact, sweeps=1500, lam0=1e-6, tol=EXACT)
        card = snap_structural(geometry, exact, q_max, provenance)
        if card is not None:
            return card
        card = snap_direct(geometry, f, q_max, provenance) or snap_terms(geometry, f, q_max, provenance)
        if card is None:
            pinned = pin_points(geometry, f, q_max)
            if pinned is not None:
                card = snap_direct(geometry, pinned, q_max, provenance) or snap_terms(geometry, pinned, q_max,
                                                                                       provenance)
        if card is not None:
            return card
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
