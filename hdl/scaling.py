"""Integer scaling of a card: integer transforms plus one exact division per output.

The bilinear identity is invariant under per-term scaling (row r of B^T and G,
column r of A^T by factors whose product is 1). B^T rows and A^T columns become
primitive integers and G row r becomes ``G_int[r] / den_r``. Output o then reads

    y[o] = (sum_r AT_int[o, r] * m[r]) / D[o],   m[r] = (BT_int[r] . d) * (G_int[r] . g)

with ``D[o] = lcm(den_r : AT[o, r] != 0)`` and ``AT_int[o, r] = AT[o, r] * D[o] / den_r``.
The division is exact (the true y is an integer): an arithmetic shift for the
power-of-two part and a multiplication by the modular inverse of the odd part.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from winohdl.core.card import AlgorithmCard, normalise_terms
from winohdl.core.limits import CONSTANT_BITS


@dataclass(frozen=True)
class ScaledCard:
    """Integer form of a card (see module docstring)."""

    card: AlgorithmCard
    BT: tuple[tuple[int, ...], ...]
    G: tuple[tuple[int, ...], ...]
    AT: tuple[tuple[int, ...], ...]
    divisor: tuple[int, ...]  # D[o]
    placement: str = "AT"  # where G's denominators went (see PLACEMENTS)

    @property
    def rank(self) -> int:
        return len(self.BT)

    def shift_and_odd(self, o: int) -> tuple[int, int]:
        """D[o] = odd << shift."""
        shift = two_adic(self.divisor[o])
        return shift, self.divisor[o] >> shift

    def rational_terms(self):
        """The scaled algorithm as rationals (B^T, G, A^T / D), for re-proving it."""
        AT = [[Fraction(v, self.divisor[o]) for v in row] for o, row in enumerate(self.AT)]
        return self.BT, self.G, AT

    def compute(self, d: list[int], g: list[int]) -> list[int]:
        """y for integer inputs, through the integer form (exact division asserted)."""
        m = [sum(b * x for b, x in zip(rb, d)) * sum(c * k for c, k in zip(rg, g)) for rb, rg in zip(self.BT, self.G)]
        out = []
        for o, row in enumerate(self.AT):
            num = sum(a * v for a, v in zip(row, m))
            assert num % self.divisor[o] == 0
            out.append(num // self.divisor[o])
        return out


def two_adic(c: int) -> int:
    """The exponent of the largest power of two dividing the non-zero integer c."""
    c = abs(int(c))
    return (c & -c).bit_length() - 1


def fold_signs(BT_int, G_int, AT_int, realise=None):
    """Move the sign of a negated transform output into the neighbouring transform (per-term
    scaling by -1 keeps the identity): a B^T row whose shift-add graph ends negated is negated
    with its G row; then a G row that ends negated is negated with its A^T column. So no
    multiplier operand is a separate negation. ``realise(matrix, which)`` gives the graph the
    generator builds for a transform (``which`` is "BT" or "G"; default: the flat graph)."""
    from .shiftadd import build_graph
    realise = realise or (lambda m, which: build_graph(m))
    BT, G, AT = [list(r) for r in BT_int], [list(r) for r in G_int], [list(r) for r in AT_int]
    for r, t in enumerate(realise(BT, "BT").outputs):
        if t is not None and t.sign < 0:
            BT[r] = [-v for v in BT[r]]
            G[r] = [-v for v in G[r]]
    for r, t in enumerate(realise(G, "G").outputs):
        if t is not None and t.sign < 0:
            G[r] = [-v for v in G[r]]
            for row in AT:
                row[r] = -row[r]
    return tuple(map(tuple, BT)), tuple(map(tuple, G)), tuple(map(tuple, AT))


PLACEMENTS = ("AT", "G", "G-odd")
"""Where the denominators of G go. ``AT``: every G row primitive, its scale moves into the
A^T column (and so into the final division). ``G``: every G row is scaled by the common
denominator L of G, so the A^T columns stay the card's primitive columns and the final
division is by L (over the terms each output reads). ``G-odd``: as ``G``, then the power of
two dividing each G row moves into its A^T column (a shift, no adder; the divisors stay
``G``'s), so no ``u`` word has low bits that are always zero: the multiplier operands, the products and the whole-layer
engine's accumulators are that many bits narrower (F(4x4,3x3): G rows 6, 4, 4, 1, 1, 24 per
axis become 3, 1, 1, 1, 1, 3)."""


def integer_form(BT, G, AT, placement: str = "AT", realise=None):
    """(B^T_int, G_int, A^T_int, D) of rational transforms, per the module docstring.

    ``placement`` (:data:`PLACEMENTS`) says where G's denominators go; D[o] is then the
    least divisor that makes row o of A^T integral (lcm of the reduced denominators of
    ``AT[o, r] / gamma_r``, gamma_r the factor G row r was scaled by), so a denominator
    that cancels against a numerator (a point 1/3 puts 3s in numerators too) costs no
    division. Signs are folded so that no multiplier operand needs a negation
    (:func:`fold_signs`, on the graphs ``realise`` builds)."""
    if placement not in PLACEMENTS:
        raise ValueError(f"unknown placement {placement!r}")
    BT, G, AT = normalise_terms([list(r) for r in BT], [list(r) for r in G], [list(r) for r in AT])
    den = [math.lcm(1, *(v.denominator for v in row)) for row in G]
    content = [math.gcd(*(int(v * den[r]) for v in row)) or 1 for r, row in enumerate(G)]
    if placement == "AT":
        gamma = [Fraction(den[r], content[r]) for r in range(len(G))]
    else:
        L = math.lcm(1, *den)
        gamma = [Fraction(L)] * len(G)
        if placement == "G-odd":
            gamma = [Fraction(L, 1 << two_adic(Fraction(L * content[r], den[r]))) for r in range(len(G))]
    G_int = tuple(tuple(int(v * gamma[r]) for v in row) for r, row in enumerate(G))
    AT_rat = [[v / gamma[r] for r, v in enumerate(row)] for row in AT]
    # G-odd keeps G's divisors (every A^T entry only gains a power of two), so an output's
    # divisor still factors over the axes and a serial output transform divides per lane
    D = tuple(math.lcm(1, *(v.denominator for v in row))
              for row in ([[v / L for v in row] for row in AT] if placement == "G-odd" else AT_rat))
    AT_int = tuple(tuple(int(v * D[o]) for v in row) for o, row in enumerate(AT_rat))
    BT_int = tuple(tuple(int(v) for v in row) for row in BT)
    widest = max((abs(v).bit_length() for m in (BT_int, G_int, AT_int, (D,)) for row in m for v in row), default=0)
    CONSTANT_BITS.check(widest, "the widest integer constant of the hardware transforms")
    return (*fold_signs(BT_int, G_int, AT_int, realise), D)


def scale_card(card: AlgorithmCard, placement: str = "AT", realise=None) -> ScaledCard:
    return ScaledCard(card, *integer_form(card.BT, card.G, card.AT, placement, realise), placement)
