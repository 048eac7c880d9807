"""Class-constant rank-one terms: the pieces every algorithm at R = |d_used| is made of.

With R = |d_used|, B^T restricted to the used inputs is invertible; with W its
inverse, term r adds the |y| x |g| matrix ``a_r g_r^T = sum_d W[d, r] T[:, d, :]``
(a_r the A^T column, g_r the G row). So ``a[y] g[k]`` is constant on every class
``{(y, k) : T[y, d, k] = 1}`` and that constant is ``w[d]``. Conversely, any R
such terms whose class-value vectors w are linearly independent are an exact
algorithm, with ``B^T = W^-1``. For a fixed a the admissible g form a linear
space (the class constraints are linear in g).

Catalogue: along each axis, the outputs of one dilation residue class read the
moment vector ``(1, t, t^2, ...)`` of a point t (or of infinity); axes nest by
Kronecker products. This is where mining meets structure: a float algorithm
from ALS or SGD is moved term by term along the solution set onto catalogue
terms with small-rational points (:func:`snap_structural`), and
:func:`polish` then exchanges terms while the documented cost drops.
"""

from __future__ import annotations

import dataclasses
import math
import time
from fractions import Fraction
from functools import cached_property
from itertools import product

import numpy as np

from winohdl.core import progress
from winohdl.core.card import AlgorithmCard, CardError, normalise_terms
from winohdl.core.geometry import Geometry
from winohdl.core.rational import invert, nearest, nullspace, tiers

from .als import residual
from .costs import CostFunction, adder_estimate, card_key

Vector = tuple[Fraction, ...]
INFINITY = None  # the point at infinity in a list of points


def points(q_max: int) -> list[Fraction | None]:
    """0, +-1, +-2, +-1/2, ... (numerator and denominator at most ``q_max``) and infinity."""
    return [v for tier in tiers(q_max) for v in tier] + [INFINITY]


def axis_vectors(m: int, s: int, dl: int, pts) -> list[Vector]:
    """A^T column candidates along one axis: a moment vector on one dilation residue class."""
    step = dl // math.gcd(s, dl)
    out, seen = [], set()
    for rho in range(min(step, m)):
        idx = list(range(rho, m, step))
        for t in pts:
            v = [Fraction(0)] * m
            if t is INFINITY:
                v[idx[-1]] = Fraction(1)
            else:
                for i, o in enumerate(idx):
                    v[o] = Fraction(t) ** i
            key = tuple(v)
            if key not in seen:
                seen.add(key)
                out.append(key)
    return out


class TermCatalogue:
    """The class structure of one geometry and its admissible terms.

    Parameters
    ----------
    geometry : Geometry
        The convolution tile.
    q_max : int
        Largest numerator/denominator of the catalogue's points.
    mixtures : bool
        Also offer, where an A^T column admits a G space of dimension above one (strides: the
        phases of one output pair), the combinations of its basis with coefficients 0, +-1.
    """

    def __init__(self, geometry: Geometry, q_max: int = 2, mixtures: bool = False):
        self.geometry = geometry
        self.mixtures = mixtures
        self.used = geometry.used_inputs()
        T = geometry.tensor()
        self.classes = [[(int(y), int(k)) for y, k in zip(*np.nonzero(T[:, d, :]))] for d in self.used]
        self.q_max = q_max
        self._spaces: dict[Vector, list[Vector]] = {}

    @cached_property
    def a_vectors(self) -> list[Vector]:
        """Every catalogue A^T column: Kronecker products of the axis candidates."""
        g = self.geometry
        axes = [axis_vectors(m, s, dl, points(self.q_max)) for m, s, dl in zip(g.output, g.stride, g.dilation)]
        out = []
        for combo in product(*axes):
            v = [Fraction(1)]
            for part in combo:
                v = [x * y for x in v for y in part]
            out.append(tuple(v))
        return out

    @cached_property
    def a_matrix(self) -> np.ndarray:
        """The catalogue's A^T columns as unit float rows (for nearest-neighbour scoring)."""
        m = np.array([[float(x) for x in a] for a in self.a_vectors])
        return m / np.linalg.norm(m, axis=1, keepdims=True)

    def g_space(self, a: Vector) -> list[Vector]:
        """A basis of the G rows admissible with A^T column ``a`` (exact; empty if none)."""
        if a not in self._spaces:
            rows = []
            for members in self.classes:
                for (y0, k0), (y1, k1) in zip(members, members[1:]):
                    row = [Fraction(0)] * self.geometry.n_g
                    row[k0] += a[y0]
                    row[k1] -= a[y1]
                    if any(row):
                        rows.append(row)
            basis = [tuple(b) for b in nullspace(rows, self.geometry.n_g)]
            self._spaces[a] = [b for b in basis if any(self.class_values(a, b))]
        return self._spaces[a]

    def class_values(self, a: Vector, g: Vector) -> Vector:
        """w[d] = a[y] g[k] for any (y, k) of input d's class (equal across the class)."""
        out = []
        for members in self.classes:
            y, k = members[0]
            out.append(a[y] * g[k])
        return tuple(out)

    def terms(self) -> list[tuple[Vector, Vector]]:
        """Every catalogue term: each A^T column with each basis vector of its G space (and, with
        ``mixtures``, each combination of the basis with coefficients 0, +-1, up to sign)."""
        out = []
        for a in self.a_vectors:
            space = self.g_space(a)
            combos = product((0, 1, -1), repeat=len(space)) if self.mixtures else np.eye(len(space), dtype=int)
            for cs in combos:
                if not any(cs) or next(c for c in cs if c) < 0:
                    continue
                g = tuple(sum((c * b[k] for c, b in zip(cs, space)), Fraction(0)) for k in range(self.geometry.n_g))
                if any(self.class_values(a, g)) and (a, g) not in out:
                    out.append((a, g))
        return out

    def matrices(self, terms) -> tuple[list, list, list] | None:
        """(B^T, G, A^T) of a set of terms, per-term normalised; None when the w are dependent."""
        R = len(terms)
        if R != len(self.used):
            return None
        cols = [self.class_values(a, g) for a, g in terms]
        W = [[cols[r][i] for r in range(R)] for i in range(R)]  # W[i][r]: term r's value on input i
        Winv = invert(W)
        if Winv is None:
            return None
        BT = [[Fraction(0)] * self.geometry.n_d for _ in range(R)]
        for r in range(R):
            for i, d in enumerate(self.used):
                BT[r][d] = Winv[r][i]
        G = [list(g) for _, g in terms]
        AT = [[terms[r][0][y] for r in range(R)] for y in range(self.geometry.n_y)]
        return normalise_terms(BT, G, AT)

    def card(self, terms, provenance: dict) -> AlgorithmCard | None:
        """The proven card of ``terms`` (the identity is proven by AlgorithmCard.build)."""
        mats = self.matrices(terms)
        if mats is None:
            return None
        try:
            return AlgorithmCard.build(self.geometry, *mats, provenance)
        except CardError:
            return None


def _unit(v: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(v)
    return v / n if n > 0 else v


def _snap_coefficients(c: np.ndarray, q_max: int) -> list[Fraction]:
    """Coefficients up to scale: the largest becomes 1, the rest the nearest small rationals."""
    values = [v for tier in tiers(q_max) for v in tier]
    c = c / c[int(np.argmax(np.abs(c)))]
    return [nearest(x, values)[1] for x in c]


def snap_structural(geometry: Geometry, f, q_max: int, provenance: dict, tol: float = 1e-6,
                    candidates: int = 64) -> AlgorithmCard | None:
    """Move each term of a near-exact float algorithm onto a nearby catalogue term.

    Only a float algorithm whose relative tensor residual is below ``tol`` is moved
    (it lies on the solution set; the move follows that set to small-rational
    points). The catalogue grows tier by tier (points with q = 1, then 2, ... up
    to ``q_max``) so the simplest points are used first; within a tier, terms are
    placed most confident first, and a term whose nearest catalogue term would make
    the class values dependent takes the next nearest. The card is proven.
    """
    T = geometry.tensor().astype(float)
    if f.rank != geometry.lower_bound() or residual(T, f) > tol * np.linalg.norm(T):
        return None
    for q in range(1, max(q_max, 1) + 1):
        cat = TermCatalogue(geometry, q_max=q)
        terms = _place_terms(cat, f, q, candidates)
        card = cat.card(terms, provenance) if terms is not None else None
        if card is not None:
            return card
    return None


def _place_terms(cat: TermCatalogue, f, q_max: int, candidates: int):
    """Greedy placement of the float terms on catalogue terms with independent class values."""
    scores = np.abs(cat.a_matrix @ np.array([_unit(f.AT[:, r]) for r in range(f.rank)]).T).T  # R x |cat|
    chosen, basis = [None] * f.rank, np.zeros((0, len(cat.used)))
    for r in np.argsort(-scores.max(axis=1)):
        for j in np.argsort(-scores[r])[:candidates]:
            a = cat.a_vectors[j]
            space = cat.g_space(a)
            if not space:
                continue
            S = np.array([[float(x) for x in b] for b in space])
            coef, *_ = np.linalg.lstsq(S.T, f.G[r], rcond=None)  # only its direction matters
            # the basis vectors first (the dominant one leading), then the snapped mixture
            options = [space[i] for i in np.argsort(-np.abs(coef))]
            if len(space) > 1 and np.abs(coef).max() > 1e-9:
                snapped = _snap_coefficients(coef, q_max)
                options.append(tuple(sum(c * b[k] for c, b in zip(snapped, space)) for k in range(cat.geometry.n_g)))
            for g in options:
                if (a, g) in chosen or not any(g):
                    continue
                w = np.array([float(x) for x in cat.class_values(a, g)])
                rest = w - basis.T @ (basis @ w) if len(basis) else w
                if np.linalg.norm(rest) > 1e-9 * max(np.linalg.norm(w), 1.0):
                    chosen[r] = (a, g)
                    basis = np.vstack([basis, _unit(rest)])
                    break
            if chosen[r] is not None:
                break
        if chosen[r] is None:
            return None
    return chosen


def card_terms(card: AlgorithmCard) -> list[tuple[Vector, Vector]]:
    """The (A^T column, G row) pairs of a card."""
    return [(tuple(row[r] for row in card.AT), tuple(card.G[r])) for r in range(card.rank)]


class _Screen:
    """Float screening of term sets: the adder estimate needs only non-zero patterns."""

    def __init__(self, cat: TermCatalogue, pool):
        self.w = np.array([[float(x) for x in cat.class_values(*t)] for t in pool])
        self.a_nz = np.array([[x != 0 for x in a] for a, _ in pool])
        self.g_add = np.array([max(sum(x != 0 for x in k) - 1, 0) for _, k in pool])

    def key(self, chosen: list[int]) -> tuple[int, int] | None:
        """(adders of B^T + A^T, adders of G) of a term set; None when its w are dependent."""
        try:
            BT = np.linalg.inv(self.w[chosen].T)
        except np.linalg.LinAlgError:
            return None
        peak = np.abs(BT).max()
        if not np.isfinite(peak) or peak > 1e9:
            return None
        bt = adder_estimate(np.abs(BT) > 1e-9 * peak)
        at = int(np.maximum(self.a_nz[chosen].sum(axis=0) - 1, 0).sum())
        return bt + at, int(self.g_add[chosen].sum())


def _descend(screen: _Screen, chosen: list[int], key, pool_size: int, rng, out_of_time):
    """First-improvement single-term exchanges on the screened key, to a local optimum."""
    improved = True
    while improved and not out_of_time():
        improved = False
        for r in rng.permutation(len(chosen)):
            for j in rng.permutation(pool_size):
                if j in chosen:
                    continue
                trial = chosen[:r] + [int(j)] + chosen[r + 1:]
                k = screen.key(trial)
                if k is not None and k < key:
                    chosen, key, improved = trial, k, True
                    break
            if out_of_time():
                break
    return chosen, key


def polish(card: AlgorithmCard, cost: CostFunction, budget: float = 10.0, q_max: int = 2, seed: int = 0,
           should_stop=lambda: False, mixtures: bool = False) -> AlgorithmCard:
    """Iterated local search for a cheaper card at the same R, the simplest points first.

    The budget is shared by tiers q = 1 (points 0, +-1, infinity), 2 (adding +-2,
    +-1/2), ... up to ``q_max``; each tier starts from the best card so far (see
    :func:`polish_tier`). Returns ``card`` itself unless a strictly cheaper proven
    card was found by ``cost`` (see :data:`miner.costs.CostFunction`). ``should_stop()``
    ends the search early (e.g. on Ctrl-C), keeping the best card found so far. ``mixtures``
    widens the catalogue (:class:`TermCatalogue`).
    """
    t0 = time.perf_counter()
    levels = range(1, max(q_max, 1) + 1)
    best, log = card, []
    with progress.bar(len(levels), f"polish (up to {budget:g} s; Ctrl-C keeps the card)", unit="tier") as bar:
        for q in levels:
            if should_stop():
                break
            out = polish_tier(best, cost, budget / len(levels), q_max=q, seed=seed, should_stop=should_stop,
                              mixtures=mixtures)
            if out is not best:
                log.append(out.provenance["polish"])
                best = out
            bar.update(1)
    if best is card:
        return card
    prov = dict(card.provenance)
    prov["polish"] = {"tiers": log, "seconds": round(time.perf_counter() - t0, 2), "cost_before": [str(v) for v in card_key(cost, card)]}
    return dataclasses.replace(best, provenance=prov)


def polish_tier(card: AlgorithmCard, cost: CostFunction, budget: float = 10.0, q_max: int = 2, seed: int = 0,
                kick: int = 3, patience: int = 200, should_stop=lambda: False, mixtures: bool = False) -> AlgorithmCard:
    """Iterated local search over catalogue terms of one tier for a cheaper card at the same R.

    Single-term exchanges are screened in floating point (the adder estimate needs
    only the non-zero pattern of ``B^T = W^-1``) down to a local optimum, whose
    exact cost (the generator's shift-add graphs) decides whether it is kept;
    ``kick`` random exchanges applied to the best set so far restart the descent
    until ``budget`` seconds are spent or ``patience`` descents in a row end at
    local optima seen before. Works at R = |d_used| (other cards are returned
    unchanged). Returns ``card`` itself unless a proven card strictly cheaper by
    ``cost`` was found.
    """
    g = card.geometry
    if card.rank != g.lower_bound():
        return card
    t0 = time.perf_counter()
    out_of_time = lambda: time.perf_counter() - t0 > budget or should_stop()  # noqa: E731
    cat = TermCatalogue(g, q_max=q_max, mixtures=mixtures)
    start = card_terms(card)
    pool = cat.terms()
    pool += [t for t in start if t not in pool]
    screen = _Screen(cat, pool)
    rng = np.random.default_rng(seed)
    best_set, best = [pool.index(t) for t in start], card_key(cost, card)
    current, current_key = list(best_set), screen.key(best_set)
    found, descents, stale, seen = False, 0, 0, {tuple(sorted(best_set))}
    screen_best = None
    while not out_of_time() and current_key is not None and stale < patience:
        current, current_key = _descend(screen, current, current_key, len(pool), rng, out_of_time)
        descents += 1
        stale += 1
        if tuple(sorted(current)) not in seen:  # the screen only steers; local optima are ranked exactly
            seen.add(tuple(sorted(current)))
            stale = 0
            mats = cat.matrices([pool[i] for i in current])
            key = cost(*mats, geometry=g) if mats is not None else None
            if key is not None and key < best:
                best_set, best, found = list(current), key, True
            if current_key is not None and (screen_best is None or current_key < screen_best[0]):
                screen_best = (current_key, list(current))
        # restart from the best card so far, or (every other time) from the local optimum the
        # screen likes best: the screen counts adders, the cost may rank widths first
        current = list(best_set) if descents % 2 or screen_best is None else list(screen_best[1])
        for _ in range(kick):
            for _attempt in range(50):
                r, j = int(rng.integers(len(current))), int(rng.integers(len(pool)))
                trial = current[:r] + [j] + current[r + 1:]
                if j not in current and screen.key(trial) is not None:
                    current = trial
                    break
        current_key = screen.key(current)
    if not found:
        return card
    prov = dict(card.provenance)
    prov["polish"] = {"descents": descents, "q_max": q_max, "seconds": round(time.perf_counter() - t0, 2),
                      "cost_before": [str(v) for v in card_key(cost, card)]}
    out = cat.card([pool[i] for i in best_set], prov)
    return out if out is not None and card_key(cost, out) < card_key(cost, card) else card
