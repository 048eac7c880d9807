"""Constructive cards with choices: the points of every piece, and an inner algorithm per outer term.

The constructive card (:mod:`miner.constructive`) gives every Toom-Cook piece the same small
points and nests the axes by Kronecker products. Both are choices, not necessities:

* any m + k - 1 distinct points (infinity included) give an exact F(m, k) piece;
* nesting the axes, every product of the outer axis is itself a correlation along the other
  axes, and each may be computed by its own exact inner algorithm (its own points per piece).

Every such card is exact at R = the lower bound; which is cheapest depends on the hardware (the
widths, the exact division of G's denominators, the signs the realised graphs fold), so the
choices are made by the cost function: a first-improvement descent over one choice ("slot") at
a time, starting from the constructive card, within a time budget. E.g. F(4, 3) at the points
0, +-1, +-3, infinity costs fewer adder bits than at 0, +-1, +-2, infinity (a division by 3 is
cheaper than the wider interpolation by 2 and 4).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from fractions import Fraction
from itertools import combinations

import numpy as np

from winohdl.core.card import AlgorithmCard
from winohdl.core.errors import WinohdlError
from winohdl.core.geometry import Geometry

from .constructive import Point, Rows, axis_algorithm, axis_pieces, default_points, kron
from .costs import CostFunction

MAGNITUDES = (Fraction(1), Fraction(2), Fraction(1, 2), Fraction(3), Fraction(1, 3), Fraction(4), Fraction(1, 4))
"""Magnitudes of the finite non-zero points the choices draw from (simplest first)."""

Algorithm = tuple[Rows, Rows, Rows]


def _height(p: Point) -> int:
    return 0 if p is None or p == 0 else max(abs(p.numerator), p.denominator)


def point_sets(n: int, limit: int = 24) -> list[list[Point]]:
    """Candidate point sets of an n-point Toom-Cook, the classic one first, then simplest first.

    A set is 0 and/or infinity, pairs +-p and at most one unpaired point, drawn from
    :data:`MAGNITUDES` (the cheapest sets found by exhaustive search over such points are
    symmetric, or nearly so, for n >= 4); ranked by the sum of the points' heights
    (max(|numerator|, denominator)), then with 0 and infinity first. At most ``limit`` sets.
    """
    signed = [s * m for m in MAGNITUDES for s in (1, -1)]
    found: dict[frozenset, tuple] = {}
    for extras in ([Fraction(0), None], [Fraction(0)], [None], []):
        for single in ([], *([u] for u in signed)):
            pairs = n - len(extras) - len(single)
            if pairs < 0 or pairs % 2:
                continue
            for mags in combinations(MAGNITUDES, pairs // 2):
                pts = extras[:1] + single + [s * m for m in mags for s in (1, -1)] + extras[1:]
                if len(set(pts)) == n:
                    found.setdefault(frozenset(pts), (sum(map(_height, pts)), -len(extras), len(found), pts))
    ranked = [v[-1] for v in sorted(found.values(), key=lambda v: v[:3])]
    classic = default_points(n)
    return [classic] + [p for p in ranked if set(p) != set(classic)][:max(limit - 1, 0)]


@dataclass(frozen=True)
class AxisShape:
    """One axis of a geometry: output, kernel, stride, dilation."""

    m: int
    k: int
    s: int
    dl: int

    def slots(self, limit: int) -> list[list[list[Point] | None]]:
        """The point-set options of each piece (a single None where the points do not matter)."""
        return [point_sets(sum(p.size) - 1, limit) if p.needs_points else [None]
                for p in axis_pieces(self.m, self.k, self.s, self.dl)]

    def algorithm(self, points: list[list[Point] | None]) -> Algorithm:
        """The axis algorithm with the given points per piece."""
        return axis_algorithm(self.m, self.k, self.s, self.dl, points=points)


def _insert(outer: list[Fraction], inner: list[Fraction], inner_dims: tuple[int, ...], axis: int) -> list[Fraction]:
    """The row-major flattening of ``outer`` (along ``axis``) times ``inner`` (the other axes)."""
    t = np.multiply.outer(np.array(inner, dtype=object).reshape(inner_dims), np.array(outer, dtype=object))
    return list(np.moveaxis(t, -1, axis).reshape(-1))


def _without(dims: tuple[int, ...], axis: int) -> tuple[int, ...]:
    return dims[:axis] + dims[axis + 1:]


class NestedChoices:
    """The card of one outer axis with the points of its pieces and, per outer term, the points of
    every piece of every other axis (their Kronecker product is that term's inner algorithm).

    Parameters
    ----------
    geometry : Geometry
    outer : int
        The outer axis.
    limit : int
        Point sets offered per piece (:func:`point_sets`).
    """

    def __init__(self, geometry: Geometry, outer: int = 0, limit: int = 24):
        g = geometry
        self.geometry, self.outer = g, outer
        self.axes = [AxisShape(*a) for a in zip(g.output, g.kernel, g.stride, g.dilation)]
        self.inner_axes = [a for i, a in enumerate(self.axes) if i != outer]
        outer_slots = self.axes[outer].slots(limit)
        self.outer_slots = len(outer_slots)
        inner = [a.slots(limit) for a in self.inner_axes]
        self.inner_pieces = [len(slots) for slots in inner]
        inner_slots = [opts for slots in inner for opts in slots]
        self.inner_per_term = len(inner_slots)
        terms = len(self.axes[outer].algorithm([o[0] for o in outer_slots])[0])
        self.slots: list[list] = outer_slots + inner_slots * terms
        """Every slot's options; slot i's first option is the constructive card's."""

    def initial(self) -> list[int]:
        """The choice of the constructive card (every slot's first option)."""
        return [0] * len(self.slots)

    def _inner(self, points: list) -> Algorithm:
        """The Kronecker product of the inner axes' algorithms for these points (in axis order)."""
        BT, G, AT = [[Fraction(1)]], [[Fraction(1)]], [[Fraction(1)]]
        at = 0
        for a, n in zip(self.inner_axes, self.inner_pieces):
            pb, pg, pa = a.algorithm(points[at:at + n])
            at += n
            BT, G, AT = kron(BT, pb), kron(G, pg), kron(AT, pa)
        return BT, G, AT

    def matrices(self, choice: list[int]) -> Algorithm:
        """(B^T, G, A^T) of a choice (an option index per slot)."""
        g, ax = self.geometry, self.outer
        picked = [opts[c] for opts, c in zip(self.slots, choice)]
        ob, og, oa = self.axes[ax].algorithm(picked[:self.outer_slots])
        dims = {"BT": _without(g.input, ax), "G": _without(g.kernel, ax), "AT": _without(g.output, ax)}
        BT, G, AT_cols = [], [], []
        for r in range(len(ob)):
            start = self.outer_slots + r * self.inner_per_term
            ib, ig, ia = self._inner(picked[start:start + self.inner_per_term])
            a_r = [row[r] for row in oa]
            for s in range(len(ib)):
                BT.append(_insert(ob[r], ib[s], dims["BT"], ax))
                G.append(_insert(og[r], ig[s], dims["G"], ax))
                AT_cols.append(_insert(a_r, [row[s] for row in ia], dims["AT"], ax))
        AT = [[col[o] for col in AT_cols] for o in range(g.n_y)]
        return BT, G, AT


def chosen_card(geometry: Geometry, cost: CostFunction, budget: float = 10.0, limit: int = 24,
                should_stop=lambda: False) -> AlgorithmCard:
    """The cheapest card by ``cost`` a first-improvement descent over the choices finds.

    Starts from the constructive card with every axis as the outer one in turn (the budget
    shared); a slot's options are tried in order, the first cheaper card kept, until a sweep
    finds nothing or ``budget`` seconds are spent. Returns a proven card at R = lower bound,
    provenance ``constructive`` with the choices in its config (the constructive card itself
    when nothing cheaper was found).
    """
    t0 = time.perf_counter()
    g = geometry
    best = None
    for outer in range(g.axes):
        deadline = t0 + budget * (outer + 1) / g.axes
        out_of_time = lambda: time.perf_counter() > deadline or should_stop()  # noqa: E731
        space = NestedChoices(g, outer, limit)
        choice, key = _descend(space, cost, out_of_time)
        if best is None or key < best[0]:
            best = (key, space, choice)
    key, space, choice = best
    changed = [(i, space.slots[i][c]) for i, c in enumerate(choice) if c]
    prov = {"method": "constructive", "seed": None, "steps": 0,
            "seconds": round(time.perf_counter() - t0, 6), "device": "cpu",
            "config": {"points": "chosen per piece and per outer term by the cost (miner.choices)",
                       "outer_axis": space.outer,
                       "changed_slots": {str(i): ["inf" if p is None else str(p) for p in pts] for i, pts in changed}}}
    return AlgorithmCard.build(g, *space.matrices(choice), prov)


def _descend(space: NestedChoices, cost: CostFunction, out_of_time) -> tuple[list[int], tuple]:
    """First-improvement descent over single-slot changes; returns (choice, its cost key)."""
    choice = space.initial()
    key = _key(space, cost, choice)
    improved = True
    while improved and not out_of_time():
        improved = False
        for slot, options in enumerate(space.slots):
            for c in range(len(options)):
                if c == choice[slot] or out_of_time():
                    continue
                trial = choice[:slot] + [c] + choice[slot + 1:]
                k = _key(space, cost, trial)
                if k is not None and k < key:
                    choice, key, improved = trial, k, True
    return choice, key


def _key(space: NestedChoices, cost: CostFunction, choice: list[int]) -> tuple | None:
    """The cost key of a choice; None when the cost refuses the card (e.g. constants too wide)."""
    try:
        return cost(*space.matrices(choice), geometry=space.geometry)
    except WinohdlError:
        return None
