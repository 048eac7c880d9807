"""Shift-add graphs: a constant integer matrix-vector product as two-input adders and free shifts.

Every coefficient is written in canonical signed digits (CSD); subexpressions
that several rows share are built once (greedy most-frequent-pair elimination,
after Hartley); each row's remaining terms are summed by a depth-balanced tree.
"""

from __future__ import annotations

import functools
import heapq
from collections import Counter
from dataclasses import dataclass, field


def csd(c: int) -> list[tuple[int, int]]:
    """Canonical signed digits of ``c`` as (shift, sign) pairs, least significant first."""
    digits, shift = [], 0
    while c:
        if c & 1:
            d = 2 - (c & 3)  # +1 if c = 1 mod 4, -1 if c = 3 mod 4
            digits.append((shift, d))
            c -= d
        c >>= 1
        shift += 1
    return digits


@dataclass(frozen=True)
class Term:
    """``sign * (node << shift)``: a reference to a graph node, shifted and signed (both free)."""

    node: int
    shift: int
    sign: int


@dataclass(frozen=True)
class Adder:
    """One two-input adder/subtractor: value = a + b (each operand a signed, shifted Term)."""

    a: Term
    b: Term


@dataclass
class ShiftAddGraph:
    """Adders computing ``M @ x`` for a constant integer matrix M.

    Node ids ``0 .. n_inputs-1`` are the inputs; node ``n_inputs + i`` is
    ``adders[i]``. ``outputs[j]`` is the Term giving row j (None: the row is zero).
    """

    n_inputs: int
    adders: list[Adder] = field(default_factory=list)
    outputs: list[Term | None] = field(default_factory=list)
    matrix: tuple[tuple[int, ...], ...] = ()
    passes: list[int] = field(default_factory=list)
    """Row-column graphs (:mod:`hdl.rowcol`): the 1D pass (0, 1, ...) that built each adder;
    empty for a flat graph (one pass)."""

    @property
    def n_nodes(self) -> int:
        return self.n_inputs + len(self.adders)

    @property
    def negations(self) -> int:
        """Outputs that need a negation (every term of the row negative): one subtractor each."""
        return sum(1 for t in self.outputs if t is not None and t.sign < 0)

    @property
    def adder_count(self) -> int:
        return len(self.adders) + self.negations

    def pass_stages(self) -> list[int]:
        """Pass of every node (inputs 0): the pass that built the adder, never before its
        operands'; passes without adders are skipped, so the stages count from 0 without gaps."""
        if not self.passes:
            return [0] * self.n_nodes
        if len(self.passes) != len(self.adders):
            raise AssertionError("a pass index for every adder")
        rank = {p: i for i, p in enumerate(sorted(set(self.passes)))}
        stage = [0] * self.n_inputs
        for add, p in zip(self.adders, self.passes):
            stage.append(max(rank[p], stage[add.a.node], stage[add.b.node]))
        return stage

    def depths(self) -> list[int]:
        depth = [0] * self.n_inputs
        for add in self.adders:
            depth.append(max(depth[add.a.node], depth[add.b.node]) + 1)
        return depth

    @property
    def depth(self) -> int:
        d = self.depths()
        return max((d[t.node] + (t.sign < 0) for t in self.outputs if t is not None), default=0)

    def forms(self) -> list[list[int]]:
        """Each node as integer coefficients over the inputs (its exact linear form)."""
        forms = [[int(i == j) for j in range(self.n_inputs)] for i in range(self.n_inputs)]
        for add in self.adders:
            fa, fb = forms[add.a.node], forms[add.b.node]
            forms.append([add.a.sign * (x << add.a.shift) + add.b.sign * (y << add.b.shift) for x, y in zip(fa, fb)])
        return forms

    def evaluate_nodes(self, xs: list[int]) -> list[int]:
        vals = list(xs)
        for add in self.adders:
            vals.append(add.a.sign * (vals[add.a.node] << add.a.shift) + add.b.sign * (vals[add.b.node] << add.b.shift))
        return vals

    def evaluate(self, xs: list[int]) -> list[int]:
        vals = self.evaluate_nodes(xs)
        return [0 if t is None else t.sign * (vals[t.node] << t.shift) for t in self.outputs]


def _normalise_row(row: list[Term]) -> list[Term]:
    """Merge equal (node, shift) terms: x + x = x << 1, x - x = 0."""
    acc: Counter = Counter()
    for t in row:
        acc[(t.node, t.shift)] += t.sign
    out, changed = [], True
    while changed:
        changed = False
        for (node, shift), s in list(acc.items()):
            if s == 0:
                del acc[(node, shift)]
            elif abs(s) >= 2:
                acc[(node, shift)] -= 2 * (1 if s > 0 else -1)
                acc[(node, shift + 1)] += 1 if s > 0 else -1
                changed = True
    for (node, shift), s in sorted(acc.items()):
        if s:
            out.append(Term(node, shift, s))
    return out


def _pair_key(t1: Term, t2: Term):
    if (t1.node, t1.shift) > (t2.node, t2.shift):
        t1, t2 = t2, t1
    m = min(t1.shift, t2.shift)
    return (t1.node, t1.shift - m, t2.node, t2.shift - m, t1.sign * t2.sign), t1, m


class _Row:
    """A row's terms with each pair (i, j) of them and its pattern, in order; ``keys``: the patterns,
    each once, in the order the pairs first show them (the greedy's tie-break reads that order)."""

    def __init__(self, terms: list[Term], pairs: list | None = None):
        self.terms = terms
        self.pairs = pairs if pairs is not None else [
            (i, j, *_pair_key(terms[i], terms[j])) for i in range(len(terms)) for j in range(i + 1, len(terms))]
        self.keys = dict.fromkeys(k for _, _, k, _, _ in self.pairs)

    def replaced(self, key, node: int) -> _Row | None:
        """The row with every disjoint pair of pattern ``key`` (first pairs first) as ``node``; None
        when the row has none."""
        if key not in self.keys:
            return None
        used, new = set(), []
        for i, j, k, first, m in self.pairs:
            if k == key and i not in used and j not in used:
                used |= {i, j}
                new.append(Term(node, m, first.sign))
        return self._successor(used, _normalise_row(new))

    def _successor(self, used: set, tail: list[Term]) -> _Row:
        """The row without the terms ``used``, ``tail`` (terms of the newest node) after the rest: what
        ``_normalise_row`` gives for the whole (the rest is sorted and the newest node sorts last), with
        the kept pairs' patterns carried over in the same (i, j) order."""
        keep = [i for i in range(len(self.terms)) if i not in used]
        index = {old: new for new, old in enumerate(keep)}
        terms = [self.terms[i] for i in keep] + tail
        start, pairs, pos = len(keep), [], 0
        for i, t1 in enumerate(self.terms):
            group = self.pairs[pos:pos + len(self.terms) - 1 - i]   # the pairs (i, j > i), in order
            pos += len(group)
            if i in used:
                continue
            ni = index[i]
            pairs += [(ni, index[j], *rest) for _, j, *rest in group if j not in used]
            pairs += [(ni, start + q, *_pair_key(t1, t2)) for q, t2 in enumerate(tail)]
        pairs += [(start + q1, start + q2, *_pair_key(tail[q1], tail[q2]))
                  for q1 in range(len(tail)) for q2 in range(q1 + 1, len(tail))]
        return _Row(terms, pairs)


class _Shared:
    """How many rows have each pattern, and a heap of the patterns two or more rows have (entries made
    stale by a later count are skipped), so that the most shared is found without a scan."""

    def __init__(self, rows: list[_Row]):
        self.counts: Counter = Counter()
        self.heap: list = []
        for row in rows:
            self.change(row.keys, 1)

    def change(self, keys, step: int) -> None:
        counts = self.counts
        for k in keys:
            c = counts[k] = counts[k] + step
            if c >= 2:
                heapq.heappush(self.heap, (-c, k[1] + k[3], k))

    def replace(self, old: _Row, new: _Row) -> None:
        self.change(old.keys.keys() - new.keys.keys(), -1)
        self.change(new.keys.keys() - old.keys.keys(), 1)

    def _top(self):
        heap, counts = self.heap, self.counts
        while heap and counts[heap[0][2]] != -heap[0][0]:
            heapq.heappop(heap)
        return heap[0] if heap else None

    def most_shared(self, rows: list[_Row]):
        """The pattern most rows share (ties: the narrower, then the first seen in row order, as a fresh
        count over the rows would order them); None when no two rows share one."""
        top = self._top()
        if top is None:
            return None
        best, tied = top[:2], {}
        while top is not None and top[:2] == best:
            tied[top[2]] = heapq.heappop(self.heap)   # a pattern pushed twice at one count is one
            top = self._top()
        key = next(k for row in rows for k in row.keys if k in tied) if len(tied) > 1 else next(iter(tied))
        for k, entry in tied.items():
            if k != key:
                heapq.heappush(self.heap, entry)
        return key


def build_graph(matrix, share: bool = True) -> ShiftAddGraph:
    """Shift-add graph for ``matrix @ x`` (integer matrix, rows = outputs).

    Memoised: a datapath asks for the same matrices many times while it compares placements and
    realisations (40 distinct of 140 for F(4x4,3x3)); each caller gets its own copy to extend."""
    g = _build_graph(tuple(tuple(int(v) for v in row) for row in matrix), share)
    return ShiftAddGraph(g.n_inputs, list(g.adders), list(g.outputs), g.matrix, list(g.passes))   # terms are frozen


@functools.lru_cache(maxsize=1024)
def _build_graph(matrix: tuple[tuple[int, ...], ...], share: bool) -> ShiftAddGraph:
    n_in = len(matrix[0]) if matrix else 0
    g = ShiftAddGraph(n_in, matrix=matrix)
    rows = [_Row(_normalise_row([Term(j, s, sg) for j, c in enumerate(row) for s, sg in csd(c)])) for row in matrix]
    shared = _Shared(rows)
    while share:
        key = shared.most_shared(rows)
        if key is None:
            break
        a, sa, b, sb, rel = key
        node = g.n_nodes
        g.adders.append(Adder(Term(a, sa, 1), Term(b, sb, rel)))
        for r, row in enumerate(rows):
            new = row.replaced(key, node)
            if new is not None:
                shared.replace(row, new)
                rows[r] = new
    depth = g.depths()
    for row in rows:
        g.outputs.append(_sum_tree(g, row.terms, depth))
    return g


def _sum_tree(g: ShiftAddGraph, row: list[Term], depth: list[int]) -> Term | None:
    """Sum a row's terms, always adding the two shallowest first (minimum depth)."""
    if not row:
        return None
    heap = [(depth[t.node], i, t) for i, t in enumerate(row)]
    heapq.heapify(heap)
    tick = len(row)
    while len(heap) > 1:
        d1, _, t1 = heapq.heappop(heap)
        d2, _, t2 = heapq.heappop(heap)
        if t1.sign < 0 < t2.sign:
            t1, t2 = t2, t1
        m = min(t1.shift, t2.shift)
        node = g.n_nodes
        g.adders.append(Adder(Term(t1.node, t1.shift - m, 1), Term(t2.node, t2.shift - m, t1.sign * t2.sign)))
        depth.append(max(d1, d2) + 1)
        heapq.heappush(heap, (depth[node], tick, Term(node, m, t1.sign)))
        tick += 1
    return heap[0][2]


def _pm_factorisations(n: int) -> list[list[tuple[int, int]]]:
    """Ways to write odd ``n`` > 1 as a product of factors ``2^a + s`` (s = +-1, a >= 1),
    each as (a, s); factors in non-increasing order (so each product is listed once)."""
    out: list[list[tuple[int, int]]] = []

    def rec(rest: int, bound: int, acc: list[tuple[int, int]]) -> None:
        if rest == 1:
            out.append(list(acc))
            return
        for a in range(1, rest.bit_length() + 1):
            for s in (1, -1):
                f = (1 << a) + s
                if 1 < f <= bound and rest % f == 0:
                    rec(rest // f, f, acc + [(a, s)])

    rec(n, n, [])
    return out


def _chain(odd: int, width: int, factors: list[tuple[int, int]]) -> ShiftAddGraph:
    """``x * odd^-1 mod 2^width`` as a chain of one-adder factors ``1 +- 2^k``.

    1/(1 + 2^a) = (1 - 2^a)(1 + 2^2a)(1 + 2^4a)... and 1/(2^a - 1) = -(1 + 2^a)(1 + 2^2a)...
    modulo 2^width (the series ends once the shift reaches the width). A negative overall
    sign is absorbed by turning one factor ``1 - 2^a`` into ``2^a - 1`` when there is one."""
    steps: list[tuple[int, int]] = []  # (shift, sign of the shifted operand)
    sign = 1
    for a, s in factors:
        k, first = a, True
        if s < 0:
            sign = -sign
        while k < width:
            steps.append((k, -1 if (first and s > 0) else 1))
            k, first = 2 * k, False
    flip = None
    if sign < 0:
        flip = next((i for i, (_, sg) in enumerate(steps) if sg < 0), None)
        if flip is not None:
            sign = 1
    g = ShiftAddGraph(1)
    node = 0
    for i, (k, sg) in enumerate(steps):
        if i == flip:  # (2^k - 1) z: one subtractor, the sign folded
            g.adders.append(Adder(Term(node, k, 1), Term(node, 0, -1)))
        else:
            g.adders.append(Adder(Term(node, 0, 1), Term(node, k, sg)))
        node = g.n_nodes - 1
    g.outputs = [Term(node, 0, sign)]
    return g


def division_graph(odd: int, width: int) -> ShiftAddGraph:
    """The cheapest graph found for ``x * inverse(odd) mod 2^width`` (odd > 0): CSD of the
    inverse (digits at or above the width dropped, both residues tried) or a chain of
    factors ``1 +- 2^k`` per factorisation of ``odd`` into numbers ``2^a +- 1`` (1/9 modulo
    2^20: three adders instead of six). Evaluated modulo 2^width, every candidate equals
    ``x * inverse``; its ``matrix`` is that of the integer it multiplies by."""
    mod = 1 << width
    inv = pow(odd, -1, mod) if odd > 1 else 1
    cands = []
    for val in (inv, inv - mod):
        trunc = sum(sg << s for s, sg in csd(val) if s < width)
        cands.append(build_graph([[trunc]]))
    for factors in _pm_factorisations(odd) if odd > 1 else []:
        cands.append(_chain(odd, width, factors))
    best = None
    for g in cands:
        (t,) = g.outputs
        value = 0 if t is None else t.sign * (g.forms()[t.node][0] << t.shift)
        if (value - inv) % mod:
            continue  # pragma: no cover - every candidate is exact by construction
        g.matrix = ((value,),)
        if best is None or (g.adder_count, g.depth) < (best.adder_count, best.depth):
            best = g
    return best
