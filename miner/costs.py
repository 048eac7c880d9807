"""Hardware cost metrics of an algorithm card (what "cheaper" means).

Until the hardware generator counts adders exactly, each transform's adders are
estimated as non-zeros minus non-empty rows (shifts are free, constants ignored).
"""

from __future__ import annotations

from fractions import Fraction

TRANSFORMS = ("BT", "G", "AT")


def nonzeros(matrix) -> int:
    return sum(1 for row in matrix for v in row if v != 0)


def adder_estimate(matrix) -> int:
    """Two-input adders to compute ``matrix @ x``: non-zeros minus non-empty rows."""
    return sum(max(sum(1 for v in row if v != 0) - 1, 0) for row in matrix)


def max_denominator(matrices) -> int:
    return max((Fraction(v).denominator for m in matrices for row in m for v in row), default=1)


def max_abs_constant(matrices) -> Fraction:
    return max((abs(Fraction(v)) for m in matrices for row in m for v in row), default=Fraction(0))


def card_costs(geometry, BT, G, AT) -> dict:
    """The costs block of a card: R, bounds, sparsity, constants and the adder estimate."""
    mats = {"BT": BT, "G": G, "AT": AT}
    return {
        "rank": len(BT),
        "lower_bound": geometry.lower_bound(),
        "direct": geometry.direct_count,
        "nonzeros": {k: nonzeros(m) for k, m in mats.items()},
        "max_denominator": max_denominator(mats.values()),
        "max_abs_constant": str(max_abs_constant(mats.values())),
        "adders": {k: adder_estimate(m) for k, m in mats.items()},
        "adders_exact": False,
    }


def cost_key(costs: dict) -> tuple:
    """Lexicographic cost used to rank cards at one R (lower is better).

    1. adders of B^T plus A^T (the per-tile hardware), 2. adders of G (kernel
    transform, often offline), 3. max denominator, 4. max |constant| (bit growth).
    """
    a = costs["adders"]
    return (costs["rank"], a["BT"] + a["AT"], a["G"], costs["max_denominator"], Fraction(costs["max_abs_constant"]))
