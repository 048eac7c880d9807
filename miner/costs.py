"""Hardware cost metrics of an algorithm card (what "cheaper" means).

Adders are counted exactly as the generator builds them: each transform in the
generator's integer form (:func:`hdl.scaling.integer_form`) becomes a shift-add
graph with shared subexpressions (:func:`hdl.shiftadd.build_graph`); negations
count, shifts are free. The estimate "non-zeros minus non-empty rows" is kept
beside them (it is what the fast screening in :mod:`miner.terms` uses).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

TRANSFORMS = ("BT", "G", "AT")


def nonzeros(matrix) -> int:
    return sum(1 for row in matrix for v in row if v != 0)


def adder_estimate(matrix) -> int:
    """Two-input adders to compute ``matrix @ x``: non-zeros minus non-empty rows.

    ``matrix`` may be rationals or a boolean non-zero pattern (numpy or nested lists).
    """
    nonzero = np.asarray(matrix) != 0
    return int(np.maximum(nonzero.sum(axis=1) - 1, 0).sum()) if nonzero.size else 0


def max_denominator(matrices) -> int:
    return max((Fraction(v).denominator for m in matrices for row in m for v in row), default=1)


def max_abs_constant(matrices) -> Fraction:
    return max((abs(Fraction(v)) for m in matrices for row in m for v in row), default=Fraction(0))


def exact_adders(BT, G, AT) -> dict:
    """Adders of the generator's shift-add graphs for B^T, G and A^T (integer form, CSE)."""
    from hdl.scaling import integer_form  # the hardware layer builds on the miner: import late
    from hdl.shiftadd import build_graph
    BT_int, G_int, AT_int, _ = integer_form(BT, G, AT)
    return {"BT": build_graph(BT_int).adder_count, "G": build_graph(G_int).adder_count,
            "AT": build_graph(AT_int).adder_count}


def card_costs(geometry, BT, G, AT) -> dict:
    """The costs block of a card: R, bounds, sparsity, constants, exact adders and the estimate."""
    mats = {"BT": BT, "G": G, "AT": AT}
    return {
        "rank": len(BT),
        "lower_bound": geometry.lower_bound(),
        "direct": geometry.direct_count,
        "nonzeros": {k: nonzeros(m) for k, m in mats.items()},
        "max_denominator": max_denominator(mats.values()),
        "max_abs_constant": str(max_abs_constant(mats.values())),
        "adders": exact_adders(BT, G, AT),
        "adders_exact": True,
        "adders_estimate": {k: adder_estimate(m) for k, m in mats.items()},
    }


def cost_key(costs: dict) -> tuple:
    """Lexicographic cost used to rank cards at one R (lower is better).

    1. adders of B^T plus A^T (the per-tile hardware), 2. adders of G (kernel
    transform, often offline), 3. max denominator, 4. max |constant| (bit growth).
    """
    a = costs["adders"]
    return (costs["rank"], a["BT"] + a["AT"], a["G"], costs["max_denominator"], Fraction(costs["max_abs_constant"]))
