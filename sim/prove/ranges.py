"""Exact ranges of polynomials over the input box, and witnesses.

Every question the proof asks is "does polynomial P stay inside [lo, hi] for every input
in the box?". The answer is decided in tiers, each sound:

1. a constant or a linear form: its exact range (each coefficient picks its worse end);
2. a sound enclosure (the structural bound carried through the netlist, or the sum of each
   monomial's own interval): inside means yes;
3. a search for an input that leaves the interval (coordinate ascent over the box's
   vertices): found means no, with that input as the witness;
4. the exact range of a multilinear polynomial: its extremes lie on vertices of the box
   (it is affine in each variable separately). The variables split into independent
   components; in each, a vertex cover of the interaction graph (a minimum one, by
   König's theorem, when it is bipartite as data x kernel forms are) is enumerated and
   the polynomial is linear in the rest, whose extremes are closed-form.

When none decides (a component too large to enumerate and a bound too loose), the
answer is "undecided": never yes.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

import numpy as np

from .polynomial import Poly, VarTable

ENUMERATION_BUDGET = 1 << 23  # vertices x monomials per component
PROBE_STARTS = 4


@dataclass(frozen=True)
class Fit:
    """Whether a polynomial stays inside an interval: ``ok`` True (proven), False (a witness leaves it)
    or None (undecided); ``method`` names the tier that decided."""

    ok: bool | None
    method: str
    witness: dict | None = None
    value: int | None = None
    enclosure: tuple[int, int] | None = None  # a sound enclosure of the values when ok


@dataclass(frozen=True)
class Range:
    lo: int
    hi: int
    lo_at: dict | None = None
    hi_at: dict | None = None


def _pow_interval(lo: int, hi: int, e: int) -> tuple[int, int]:
    a, b = lo ** e, hi ** e
    if e % 2 == 0 and lo < 0 < hi:
        return 0, max(a, b)
    return min(a, b), max(a, b)


class Ranges:
    """Range questions over one :class:`VarTable`'s box, with statistics of how each was decided."""

    def __init__(self, table: VarTable, budget: int = ENUMERATION_BUDGET, seed: int = 1):
        self.t = table
        self.budget = budget
        self.stats: Counter = Counter()
        self._rng = random.Random(seed)
        self._range_cache: dict = {}
        self.fields = None  # the proof's bit fields (sim.prove.fields.Fields sets itself here)

    # ---- tier 2: sound enclosure ------------------------------------------------------------------
    def bound(self, p: Poly) -> tuple[int, int]:
        lo = hi = 0
        for m, c in p.terms.items():
            a = b = c
            counts = Counter(m)
            for v, e in counts.items():
                vl, vh = _pow_interval(*self.t.box(v), e)
                cands = (a * vl, a * vh, b * vl, b * vh)
                a, b = min(cands), max(cands)
            lo += a
            hi += b
        return lo, hi

    # ---- tier 1: linear forms ------------------------------------------------------------------------
    def linear_range(self, p: Poly) -> Range:
        lo = hi = p.constant
        lo_at, hi_at = {}, {}
        for m, c in p.terms.items():
            if not m:
                continue
            (v,) = m
            vl, vh = self.t.box(v)
            if c > 0:
                lo, hi = lo + c * vl, hi + c * vh
                lo_at[v], hi_at[v] = vl, vh
            else:
                lo, hi = lo + c * vh, hi + c * vl
                lo_at[v], hi_at[v] = vh, vl
        return Range(lo, hi, lo_at, hi_at)

    # ---- tier 3: witnesses ---------------------------------------------------------------------------
    def probe_max(self, p: Poly, starts: int = PROBE_STARTS) -> tuple[int, dict]:
        """A large value of ``p`` at a vertex found by coordinate ascent (a lower bound on the maximum)."""
        vars_ = sorted(p.variables())
        occ: dict[int, list] = {v: [] for v in vars_}
        for m, c in p.terms.items():
            for v in set(m):
                occ[v].append((m, c))
        best, best_x = None, {}
        for s in range(starts):
            if s == 0:
                x = {v: self.t.box(v)[1] for v in vars_}
            elif s == 1:
                x = {v: self.t.box(v)[0] for v in vars_}
            else:
                x = {v: self.t.box(v)[self._rng.randrange(2)] for v in vars_}
            for _ in range(30):
                changed = False
                for v in vars_:
                    lo, hi = self.t.box(v)
                    # p is affine in v when v appears once per monomial; compare both ends
                    old = x[v]
                    vals = []
                    for cand in (lo, hi):
                        x[v] = cand
                        vals.append(sum(c * _prod(m, x) for m, c in occ[v]))
                    x[v] = hi if vals[1] > vals[0] else lo if vals[0] > vals[1] else old
                    changed |= x[v] != old
                if not changed:
                    break
            val = p.evaluate(x)
            if best is None or val > best:
                best, best_x = val, dict(x)
        return best if best is not None else p.constant, best_x

    # ---- tier 4: exact range of a multilinear polynomial -------------------------------------------
    def exact(self, p: Poly) -> Range | None:
        key = p
        if key in self._range_cache:
            return self._range_cache[key]
        r = self._exact(p)
        self._range_cache[key] = r
        return r

    def _exact(self, p: Poly) -> Range | None:
        if p.degree <= 1:
            return self.linear_range(p)
        if not p.multilinear():
            return None
        parent: dict[int, int] = {}

        def find(v):
            while parent.setdefault(v, v) != v:
                parent[v] = parent[parent[v]]
                v = parent[v]
            return v
        for m in p.terms:
            if len(m) >= 2:
                r0 = find(m[0])
                for v in m[1:]:
                    r = find(v)
                    if r != r0:
                        parent[r] = r0
        comps: dict[int, dict] = {}
        free: dict = {}
        for m, c in p.terms.items():
            if not m:
                continue
            if m[0] in parent:
                comps.setdefault(find(m[0]), {})[m] = c
            else:
                free[m] = c
        rng = self.linear_range(Poly(free)) if free else Range(0, 0, {}, {})
        lo, hi = rng.lo + p.constant, rng.hi + p.constant
        lo_at, hi_at = dict(rng.lo_at), dict(rng.hi_at)
        for terms in comps.values():
            r = self._component(terms)
            if r is None:
                return None
            lo, hi = lo + r.lo, hi + r.hi
            lo_at.update(r.lo_at)
            hi_at.update(r.hi_at)
        return Range(lo, hi, lo_at, hi_at)

    def _cover(self, terms: dict) -> list[int]:
        """Variables whose values make every monomial linear in the others (a small vertex cover)."""
        edges = [m for m in terms if len(m) == 2]
        if all(len(m) <= 2 for m in terms):
            cover = _konig(edges)
            if cover is not None:
                return cover
        count = Counter(v for m in terms if len(m) >= 2 for v in m)
        cover: set = set()
        for m in sorted((m for m in terms if len(m) >= 2), key=len, reverse=True):
            rest = [v for v in m if v not in cover]
            while len(rest) > 1:
                v = max(rest, key=lambda u: count[u])
                cover.add(v)
                rest.remove(v)
        return sorted(cover)

    def _component(self, terms: dict) -> Range | None:
        cover = self._cover(terms)
        s = len(cover)
        if (1 << s) * len(terms) > self.budget:
            return None
        index = {v: i for i, v in enumerate(cover)}
        big = sum(abs(c) * _prod_abs(m, self.t) for m, c in terms.items())
        dtype = np.int64 if big < (1 << 62) else object
        n = 1 << s
        ids = np.arange(n, dtype=np.int64)
        cols = []
        for i, v in enumerate(cover):
            lo, hi = self.t.box(v)
            cols.append(np.where((ids >> i) & 1, hi, lo).astype(dtype))
        const = np.zeros(n, dtype=dtype)
        coef: dict[int, np.ndarray] = {}
        for m, c in terms.items():
            col = np.full(n, c, dtype=dtype)
            rest = None
            for v in m:
                if v in index:
                    col = col * cols[index[v]]
                else:
                    rest = v
            if rest is None:
                const = const + col
            else:
                coef[rest] = coef.get(rest, 0) + col
        his, los = const.copy(), const.copy()
        for v, k in coef.items():
            lo, hi = self.t.box(v)
            a, b = k * lo, k * hi
            his = his + np.maximum(a, b)
            los = los + np.minimum(a, b)
        ih, il = int(np.argmax(his)), int(np.argmin(los))

        def point(i: int, maximise: bool) -> dict:
            x = {v: int(cols[j][i]) for j, v in enumerate(cover)}
            for v, k in coef.items():
                lo, hi = self.t.box(v)
                x[v] = hi if (k[i] > 0) == maximise else lo
            return x
        return Range(int(los[il]), int(his[ih]), point(il, False), point(ih, True))

    # ---- the question ---------------------------------------------------------------------------------
    def fits(self, p: Poly, lo: int, hi: int, hint: tuple[int, int] | None = None) -> Fit:
        """Is ``lo <= p(x) <= hi`` for every x in the box?"""
        if self.fields is not None and self.fields.has_atoms(p):
            return self._fits_fields(p, lo, hi, hint)
        return self._fits(p, lo, hi, hint)

    def _fits_fields(self, p: Poly, lo: int, hi: int, hint) -> Fit:
        """``p`` reads bit fields: decided on its normal form when that is a polynomial of the inputs
        (exact, and a witness is an input); otherwise only a yes is sound (a field's box is independent
        of the value it is cut from, so a witness may be no input at all)."""
        n = self.fields.normalise(p)
        if not self.fields.has_atoms(n):
            return self._fits(n, lo, hi, hint)
        for q in (p, n) if n != p else (p,):
            fit = self._fits(q, lo, hi, hint)
            if fit.ok:
                return fit
        self.stats["fields"] += 1
        return Fit(None, "fields")

    def _fits(self, p: Poly, lo: int, hi: int, hint: tuple[int, int] | None = None) -> Fit:
        self.stats["checks"] += 1
        if p.is_const:
            c = p.constant
            return self._count(Fit(lo <= c <= hi, "constant", {} if not lo <= c <= hi else None, c, (c, c)))
        if hint is not None and lo <= hint[0] and hint[1] <= hi:
            return self._count(Fit(True, "structure", enclosure=hint))
        if p.degree <= 1:
            r = self.linear_range(p)
            return self._count(self._decide(r, lo, hi, "linear"))
        blo, bhi = self.bound(p)
        if lo <= blo and bhi <= hi:
            return self._count(Fit(True, "bound", enclosure=(blo, bhi)))
        # look for a witness on each side that the bound does not settle
        sides = [s for s, bad in ((1, bhi > hi), (-1, blo < lo)) if bad]
        for s in sides:
            val, x = self.probe_max(p if s == 1 else -p)
            val = val if s == 1 else -val
            if (s == 1 and val > hi) or (s == -1 and val < lo):
                return self._count(Fit(False, "witness", x, val))
        r = self.exact(p)
        if r is not None:
            return self._count(self._decide(r, lo, hi, "vertices"))
        return self._count(Fit(None, "undecided"))

    def _decide(self, r: Range, lo: int, hi: int, method: str) -> Fit:
        if r.hi > hi:
            return Fit(False, method, r.hi_at, r.hi)
        if r.lo < lo:
            return Fit(False, method, r.lo_at, r.lo)
        return Fit(True, method, enclosure=(r.lo, r.hi))

    def _count(self, f: Fit) -> Fit:
        self.stats[f.method] += 1
        return f

    def range(self, p: Poly) -> Range | None:
        """The exact range when it can be computed (else None)."""
        if p.is_const:
            return Range(p.constant, p.constant, {}, {})
        return self.exact(p)


def _prod(m: tuple, x: dict) -> int:
    r = 1
    for v in m:
        r *= x[v]
    return r


def _prod_abs(m: tuple, t: VarTable) -> int:
    r = 1
    for v in m:
        lo, hi = t.box(v)
        r *= max(abs(lo), abs(hi))
    return r


def _konig(edges: list[tuple[int, int]]) -> list[int] | None:
    """A minimum vertex cover of a bipartite graph (König), or None when the graph is not bipartite."""
    adj: dict[int, set] = {}
    for a, b in edges:
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)
    side: dict[int, int] = {}
    for s in adj:
        if s in side:
            continue
        side[s] = 0
        stack = [s]
        while stack:
            v = stack.pop()
            for w in adj[v]:
                if w not in side:
                    side[w] = 1 - side[v]
                    stack.append(w)
                elif side[w] == side[v]:
                    return None
    left = [v for v in adj if side[v] == 0]
    match_r: dict[int, int] = {}
    match_l: dict[int, int] = {}

    def augment(u, seen):
        for w in adj[u]:
            if w in seen:
                continue
            seen.add(w)
            if w not in match_r or augment(match_r[w], seen):
                match_r[w] = u
                match_l[u] = w
                return True
        return False
    for u in left:
        augment(u, set())
    # König: Z = vertices reachable from unmatched left vertices by alternating paths
    z_left, z_right = set(), set()
    stack = [u for u in left if u not in match_l]
    z_left.update(stack)
    while stack:
        u = stack.pop()
        for w in adj[u]:
            if w in z_right or match_l.get(u) == w:
                continue
            z_right.add(w)
            u2 = match_r.get(w)
            if u2 is not None and u2 not in z_left:
                z_left.add(u2)
                stack.append(u2)
    cover = [u for u in left if u not in z_left] + sorted(z_right)
    return sorted(cover)
