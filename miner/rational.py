"""Exact rational helpers: strict parsing of card strings, exact rank, integer scaling."""

from __future__ import annotations

import math
import re
from fractions import Fraction
from itertools import product

from .errors import WinohdlError

_RATIONAL = re.compile(r"^\s*[+-]?\d+(\s*/\s*\d+)?\s*$")


def parse_rational(text, where: str = "value") -> Fraction:
    """Parse ``"-1/2"`` (or an int) into a Fraction; anything else is a WinohdlError."""
    if isinstance(text, bool):
        raise WinohdlError(f"{where}: expected a rational string like \"-1/2\", got {text!r}")
    if isinstance(text, int):
        return Fraction(text)
    if not isinstance(text, str) or not _RATIONAL.match(text):
        raise WinohdlError(f"{where}: expected a rational string like \"-1/2\", got {text!r}")
    num, _, den = text.replace(" ", "").partition("/")
    if den and int(den) == 0:
        raise WinohdlError(f"{where}: zero denominator in {text!r}")
    return Fraction(int(num), int(den) if den else 1)


def rational_str(x: Fraction) -> str:
    return str(Fraction(x))


def parse_matrix(rows, shape: tuple[int, int], name: str) -> tuple[tuple[Fraction, ...], ...]:
    """Parse a list of lists of rational strings with the exact expected shape."""
    if not isinstance(rows, list) or len(rows) != shape[0]:
        got = len(rows) if isinstance(rows, list) else type(rows).__name__
        raise WinohdlError(f"{name} must have {shape[0]} rows, got {got}")
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != shape[1]:
            got = len(row) if isinstance(row, list) else type(row).__name__
            raise WinohdlError(f"{name} row {i} must have {shape[1]} entries, got {got}")
        out.append(tuple(parse_rational(v, f"{name}[{i}][{j}]") for j, v in enumerate(row)))
    return tuple(out)


def exact_rank(rows) -> int:
    """Rank of a matrix of rationals by fraction-exact Gaussian elimination."""
    m = [[Fraction(v) for v in row] for row in rows]
    rank, cols = 0, len(m[0]) if m else 0
    for c in range(cols):
        pivot = next((r for r in range(rank, len(m)) if m[r][c] != 0), None)
        if pivot is None:
            continue
        m[rank], m[pivot] = m[pivot], m[rank]
        for r in range(len(m)):
            if r != rank and m[r][c] != 0:
                f = m[r][c] / m[rank][c]
                m[r] = [a - f * b for a, b in zip(m[r], m[rank])]
        rank += 1
    return rank


def lcm_of_denominators(values) -> int:
    return math.lcm(1, *(Fraction(v).denominator for v in values))


def gcd_of_numerators(values) -> int:
    return math.gcd(*(Fraction(v).numerator for v in values))


def is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def invert(rows) -> list[list[Fraction]] | None:
    """Exact inverse of a square rational matrix by Gauss-Jordan elimination; None if singular."""
    n = len(rows)
    aug = [[Fraction(v) for v in r] + [Fraction(int(i == j)) for j in range(n)] for i, r in enumerate(rows)]
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


def nullspace(rows: list[list[Fraction]], n: int) -> list[list[Fraction]]:
    """A basis of {x : rows @ x = 0} over the rationals."""
    m = [list(r) for r in rows]
    pivots, rank = [], 0
    for c in range(n):
        p = next((i for i in range(rank, len(m)) if m[i][c] != 0), None)
        if p is None:
            continue
        m[rank], m[p] = m[p], m[rank]
        pv = m[rank][c]
        m[rank] = [v / pv for v in m[rank]]
        for i in range(len(m)):
            if i != rank and m[i][c] != 0:
                fr = m[i][c]
                m[i] = [a - fr * b for a, b in zip(m[i], m[rank])]
        pivots.append(c)
        rank += 1
    basis = []
    for free in (c for c in range(n) if c not in pivots):
        x = [Fraction(0)] * n
        x[free] = Fraction(1)
        for i, pc in enumerate(pivots):
            x[pc] = -m[i][free]
        basis.append(x)
    return basis


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


def nearest(x: float, values) -> tuple[float, Fraction]:
    """(distance, value) of the rational in ``values`` nearest the float ``x``."""
    best = min(values, key=lambda v: abs(x - float(v)))
    return abs(x - float(best)), best
