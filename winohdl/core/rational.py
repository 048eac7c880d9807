"""Exact rational helpers: strict parsing of card strings, exact linear algebra (sympy), snapping tiers."""

from __future__ import annotations

import re
from fractions import Fraction
from itertools import product

from sympy import QQ
from sympy.polys.matrices import DomainMatrix
from sympy.polys.matrices.exceptions import DMNonInvertibleMatrixError

from .errors import WinohdlError
from .limits import CONSTANT_DIGITS

_RATIONAL = re.compile(r"^\s*[+-]?\d+(\s*/\s*\d+)?\s*$")


def parse_rational(text, where: str = "value") -> Fraction:
    """Parse ``"-1/2"`` (or an int) into a Fraction; anything else is a WinohdlError."""
    if isinstance(text, bool):
        raise WinohdlError(f"{where}: expected a rational string like \"-1/2\", got {text!r}")
    if isinstance(text, int):
        if abs(text).bit_length() > CONSTANT_DIGITS.value * 10 // 3:
            raise WinohdlError(f"{where}: integer above the limit of {CONSTANT_DIGITS.value} digits")
        return Fraction(text)
    if not isinstance(text, str) or not _RATIONAL.match(text):
        raise WinohdlError(f"{where}: expected a rational string like \"-1/2\", got {text!r}")
    num, _, den = text.replace(" ", "").partition("/")
    longest = max(len(num.lstrip("+-")), len(den))
    if longest > CONSTANT_DIGITS.value:
        raise WinohdlError(f"{where}: {longest} digits, above the limit of {CONSTANT_DIGITS.value} digits "
                           "per numerator or denominator")
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


def to_domain_matrix(rows, cols: int | None = None) -> DomainMatrix:
    """A sympy DomainMatrix over QQ from rows of rationals (ints, Fractions or rational strings)."""
    rows = [[Fraction(v) for v in row] for row in rows]
    ncols = len(rows[0]) if rows else (cols or 0)
    return DomainMatrix([[QQ(v.numerator, v.denominator) for v in row] for row in rows], (len(rows), ncols), QQ)


def from_domain_matrix(m: DomainMatrix) -> list[list[Fraction]]:
    return [[Fraction(int(v.numerator), int(v.denominator)) for v in row] for row in m.to_list()]


def exact_rank(rows) -> int:
    """Rank of a matrix of rationals, exactly (sympy DomainMatrix over QQ)."""
    return to_domain_matrix(rows).rank() if rows and len(rows[0]) else 0


def invert(rows) -> list[list[Fraction]] | None:
    """Exact inverse of a square rational matrix (sympy DomainMatrix over QQ); None if singular."""
    m = to_domain_matrix(rows)
    try:
        return from_domain_matrix(m.inv())
    except DMNonInvertibleMatrixError:
        return None


def nullspace(rows: list[list[Fraction]], n: int) -> list[list[Fraction]]:
    """A basis of {x : rows @ x = 0} over the rationals, one vector per free column of the
    reduced row echelon form (that column 1, the other free columns 0)."""
    if not rows:
        return [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]
    rref, pivots = to_domain_matrix(rows, n).rref()
    m = from_domain_matrix(rref)
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
