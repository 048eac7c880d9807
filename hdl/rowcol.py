"""Row-column (separable) realisation of a multi-axis constant matrix as a shift-add graph.

A 2D/3D transform of a Kronecker card is ``diag(c) (A (x) B)`` (up to row order):
instead of one flat graph for the Kronecker matrix, the 1D graph of B is applied
to every slice along its axis, then the 1D graph of A across the results (3D:
nested), each row's integer factor c riding in the last 1D matrix. The result is
just another :class:`~hdl.shiftadd.ShiftAddGraph` computing the same integer
matrix, so widths, emission, pipelining, the model and the cost work unchanged.

Two structures are recognised, both more general than a full Kronecker product
(any row order, any subset of term pairs, the stride-phase / dilation pieces of
the constructive cards kept as they are):

* :func:`row_separable` (data and kernel transforms, ``M @ x`` with x a tensor
  over ``dims``): every row is a rank-one tensor ``c_i * f_i1 (x) f_i2 (x) ...``
  (primitive integer factors; by Gauss's lemma c_i is an integer). Axis by axis,
  the distinct factors met by rows that agree on the axes done so far form one
  1D matrix applied to every fibre along that axis.
* :func:`column_separable` (output transform, ``y = M @ m`` with y a tensor over
  ``dims``): every column is a rank-one tensor over the output axes; the columns
  that agree on the other axes are summed along one axis first, then the partial
  sums are combined along the next axis, and so on.

Every graph built here is checked against its matrix (its exact linear forms)
before it is returned. Also here: :func:`kronecker_factors`, a matrix as a Kronecker product of
per-axis matrices (the serial transforms' passes, :mod:`hdl.engine.serial`), from :func:`rank_one`.
"""

from __future__ import annotations

import math
from itertools import permutations, product

import numpy as np

from .shiftadd import Adder, ShiftAddGraph, Term, build_graph

Matrix = list[list[int]]


def _primitive(vec) -> tuple[tuple[int, ...], int]:
    """(primitive vector with first non-zero entry positive, the factor c with vec = c * primitive)."""
    g = math.gcd(*vec)
    first = next(v for v in vec if v)
    if first < 0:
        g = -g
    return tuple(v // g for v in vec), g


def rank_one(vec, dims: tuple[int, ...]) -> tuple[int, list[tuple[int, ...]]] | None:
    """``vec`` (row-major over ``dims``) as ``c * f_1 (x) ... (x) f_n`` with primitive f_p
    (first non-zero entry positive) and integer c; None when it is not rank one (or zero)."""
    vec = [int(v) for v in vec]
    if not any(vec):
        return None
    strides = [math.prod(dims[p + 1:]) for p in range(len(dims))]
    i0 = next(i for i, v in enumerate(vec) if v)
    idx0 = [(i0 // strides[p]) % dims[p] for p in range(len(dims))]
    factors = []
    for p in range(len(dims)):
        base = i0 - idx0[p] * strides[p]
        factors.append(_primitive([vec[base + j * strides[p]] for j in range(dims[p])])[0])
    prod = [1]
    for f in factors:
        prod = [a * b for a in prod for b in f]
    if prod[i0] == 0 or vec[i0] % prod[i0]:
        return None
    c = vec[i0] // prod[i0]
    if any(v != c * q for v, q in zip(vec, prod)):
        return None
    return c, factors


def transpose(matrix) -> Matrix:
    """The transpose of an integer matrix (rows of any sequence type)."""
    return [list(col) for col in zip(*[[int(v) for v in row] for row in matrix])]


def _rank_ones(vectors, dims: tuple[int, ...]) -> list | None:
    """:func:`rank_one` of every vector (None for a zero vector), or None when some other vector
    is not rank one."""
    split = []
    for vec in vectors:
        if not any(vec):
            split.append(None)
            continue
        r1 = rank_one(vec, dims)
        if r1 is None:
            return None
        split.append(r1)
    return split


def kronecker_factors(matrix, out_dims: tuple[int, ...]) -> list[Matrix] | None:
    """Integer matrices ``A_1, ..., A_N`` (``A_p`` is ``m_p x R_p``) with
    ``matrix == A_1 (x) ... (x) A_N`` (rows and columns row-major over the axes), or None.

    ``out_dims`` are the output extents m_p; each R_p is found among the divisors of the column
    count (the first exact factorisation, every R_p >= 2). Checked exactly.
    """
    m = np.array([[int(v) for v in row] for row in matrix], dtype=object)
    if len(out_dims) == 1:
        return [m.tolist()]
    m1, rest = out_dims[0], math.prod(out_dims[1:])
    n_rows, n_cols = m.shape
    if n_rows != m1 * rest:
        return None
    for r1 in range(2, n_cols // 2 + 1):
        if n_cols % r1:
            continue
        r_rest = n_cols // r1
        x = m.reshape(m1, rest, r1, r_rest).transpose(0, 2, 1, 3).reshape(m1 * r1, rest * r_rest)
        # x == outer(a, b), a primitive (its first non-zero entry positive)
        split = rank_one(x.flatten().tolist(), x.shape)
        if split is None:
            continue
        c, (a, b) = split
        inner = kronecker_factors(np.array([c * v for v in b], dtype=object).reshape(rest, r_rest), out_dims[1:])
        if inner is not None:
            return [np.array(a, dtype=object).reshape(m1, r1).tolist()] + inner
    return None


def signed_kronecker_factors(matrix, out_dims: tuple[int, ...]) -> tuple[list[int], list[Matrix]] | None:
    """``(signs, factors)`` with ``matrix == (A_1 (x) ... (x) A_N) diag(signs)``, or None.

    The generator folds signs out of the multiplier operands into A^T's columns, one column at a
    time, which breaks the Kronecker structure; each column is first made to start with a
    positive entry (its sign recorded: the engine's accumulator subtracts instead of adding).
    """
    rows = [[int(v) for v in row] for row in matrix]
    signs = []
    for r in range(len(rows[0]) if rows else 0):
        first = next((row[r] for row in rows if row[r]), 1)
        signs.append(1 if first > 0 else -1)
    factors = kronecker_factors([[v * sg for v, sg in zip(row, signs)] for row in rows], out_dims)
    return None if factors is None else (signs, factors)


class _Builder:
    """A growing ShiftAddGraph into which 1D graphs are instantiated on Term inputs."""

    def __init__(self, n_inputs: int):
        self.graph = ShiftAddGraph(n_inputs)
        self._cache: dict = {}
        self._made: dict = {}
        self.current_pass = 0  # recorded for every new adder (ShiftAddGraph.passes)

    def sub(self, matrix) -> ShiftAddGraph:
        key = tuple(map(tuple, matrix))
        if key not in self._cache:
            self._cache[key] = build_graph(key)
        return self._cache[key]

    def add(self, a: Term, b: Term) -> Term:
        """A node for ``a + b`` in normal form (first operand positive, no common shift)."""
        if a.sign < 0 < b.sign:
            a, b = b, a
        neg = a.sign < 0  # both negative: -(|a| + |b|)
        m = min(a.shift, b.shift)
        adder = Adder(Term(a.node, a.shift - m, 1), Term(b.node, b.shift - m, a.sign * b.sign))
        node = self._made.get(adder)
        if node is None:
            node = self.graph.n_nodes
            self.graph.adders.append(adder)
            self.graph.passes.append(self.current_pass)
            self._made[adder] = node
        return Term(node, m, -1 if neg else 1)

    def apply(self, matrix, inputs: list[Term | None]) -> list[Term | None]:
        """The rows of ``matrix @ inputs`` (inputs given as Terms; None means zero)."""
        matrix = [[c if inputs[j] is not None else 0 for j, c in enumerate(row)] for row in matrix]
        sub = self.sub(matrix)
        terms: list[Term | None] = list(inputs)

        def at(t: Term) -> Term:
            base = terms[t.node]
            return Term(base.node, base.shift + t.shift, base.sign * t.sign)

        for add in sub.adders:
            terms.append(self.add(at(add.a), at(add.b)))
        return [None if t is None else at(t) for t in sub.outputs]


def _negated(t: Term | None, negate: bool) -> Term | None:
    return Term(t.node, t.shift, -t.sign) if t is not None and negate else t


def _check(graph: ShiftAddGraph, matrix) -> ShiftAddGraph:
    forms = graph.forms()
    for row, t in zip(matrix, graph.outputs):
        got = [0] * graph.n_inputs if t is None else [t.sign * (v << t.shift) for v in forms[t.node]]
        if list(row) != got:
            raise AssertionError("row-column graph does not compute its matrix")
    return graph


def row_separable(matrix, dims: tuple[int, ...], order: tuple[int, ...]) -> ShiftAddGraph | None:
    """Row-column graph of ``matrix`` (rows rank one over ``dims``), axes taken in ``order``;
    None when some row is not rank one."""
    matrix = [[int(v) for v in row] for row in matrix]
    n_in = math.prod(dims)
    if not matrix or len(matrix[0]) != n_in or len(dims) < 2:
        return None
    split = _rank_ones(matrix, dims)
    if split is None:
        return None
    b = _Builder(n_in)
    strides = [math.prod(dims[p + 1:]) for p in range(len(dims))]
    # state: (key of the factors chosen on the axes done, index over the axes not done) -> Term
    state = {((), idx): Term(sum(i * s for i, s in zip(idx, strides)), 0, 1) for idx in product(*map(range, dims))}
    keys: list[tuple] = [() for _ in matrix]
    remaining = list(range(len(dims)))
    for step, p in enumerate(order):
        b.current_pass = step
        last = step == len(order) - 1
        pos = remaining.index(p)
        groups: dict[tuple, list] = {}
        for i, s in enumerate(split):
            if s is None:
                continue
            c, f = s
            vec = tuple(abs(c) * v for v in f[p]) if last else f[p]
            vecs = groups.setdefault(keys[i], [])
            if vec not in vecs:
                vecs.append(vec)
        new_state = {}
        others = [remaining[k] for k in range(len(remaining)) if k != pos]
        for key, vecs in groups.items():
            for rest in product(*(range(dims[q]) for q in others)):
                fibre = [state[(key, rest[:pos] + (j,) + rest[pos:])] for j in range(dims[p])]
                outs = b.apply(vecs, fibre)
                for u, t in enumerate(outs):
                    new_state[(key + (u,), rest)] = t
        for i, s in enumerate(split):
            if s is not None:
                c, f = s
                vec = tuple(abs(c) * v for v in f[p]) if last else f[p]
                keys[i] = keys[i] + (groups[keys[i]].index(vec),)
        state = new_state
        remaining = others
    b.graph.outputs = [None if s is None else _negated(state[(keys[i], ())], s[0] < 0) for i, s in enumerate(split)]
    b.graph.matrix = tuple(map(tuple, matrix))
    return _check(b.graph, matrix)


def column_separable(matrix, dims: tuple[int, ...], order: tuple[int, ...]) -> ShiftAddGraph | None:
    """Row-column graph of ``y = matrix @ m`` (columns rank one over the output ``dims``),
    output axes combined in ``order``; None when some column is not rank one."""
    matrix = [[int(v) for v in row] for row in matrix]
    if not matrix or len(matrix) != math.prod(dims) or len(dims) < 2:
        return None
    n_in = len(matrix[0])
    cols = _rank_ones([[row[r] for row in matrix] for r in range(n_in)], dims)
    if cols is None:
        return None
    b = _Builder(n_in)
    # items: (key over the axes not yet combined (their factor ids), output index on the axes combined) -> Term
    ids: list[dict] = [{} for _ in dims]
    item_keys = {}
    for r, s in enumerate(cols):
        if s is not None:
            c, f = s
            item_keys[r] = tuple(ids[p].setdefault(f[p], len(ids[p])) for p in range(len(dims)))
    state = [(item_keys[r], (), Term(r, 0, 1), cols[r][0]) for r in item_keys]  # (key, done idx, term, scale)
    done: list[int] = []
    for step, p in enumerate(order):
        b.current_pass = step
        groups: dict[tuple, list] = {}
        for key, didx, term, scale in state:
            rest = tuple(k for q, k in enumerate(key) if q != p and q not in done)
            groups.setdefault((rest, didx), []).append((key[p], term, scale))
        new_state = []
        inv = {v: k for k, v in ids[p].items()}
        for (rest, didx), members in groups.items():
            mat = [[scale * inv[fid][o] for fid, _, scale in members] for o in range(dims[p])]
            outs = b.apply(mat, [t for _, t, _ in members])
            full_key_template = rest
            for o, t in enumerate(outs):
                new_state.append((full_key_template, didx + (o,), t, 1))
        done.append(p)
        # re-key: keys now range over the axes not yet done, in axis order
        remaining = [q for q in range(len(dims)) if q not in done]
        state = []
        for rest, didx, t, scale in new_state:
            key = [0] * len(dims)
            for q, k in zip(remaining, rest):
                key[q] = k
            state.append((tuple(key), didx, t, scale))
    out: list[Term | None] = [None] * len(matrix)
    strides = [math.prod(dims[q + 1:]) for q in range(len(dims))]
    for _, didx, t, _ in state:
        o = sum(didx[k] * strides[p] for k, p in enumerate(order))
        if t is not None:
            out[o] = t
    b.graph.outputs = out
    b.graph.matrix = tuple(map(tuple, matrix))
    return _check(b.graph, matrix)


def candidates(matrix, dims: tuple[int, ...], side: str) -> list[tuple[str, ShiftAddGraph]]:
    """Every realisation of ``matrix``: ``("flat", graph)`` and, for 2D/3D, one
    ``("row-column", graph)`` per axis order that applies. ``side`` is ``"in"`` when
    ``dims`` index the matrix's inputs (data, kernel transforms) and ``"out"`` when they
    index its outputs (output transform)."""
    out = [("flat", build_graph(matrix))]
    if len(dims) < 2 or not matrix or not matrix[0]:
        return out
    build = row_separable if side == "in" else column_separable
    for order in permutations(range(len(dims))):
        g = build(matrix, tuple(dims), order)
        if g is None:
            break
        out.append(("row-column", g))
    return out
