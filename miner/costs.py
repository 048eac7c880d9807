"""Cheap cost estimates for screening inside the miner, and the cost-function type.

The miner never computes hardware costs itself: what "cheaper" means is a
function passed in by the application layer (the generator's exact cost, see
:mod:`hdl.cost`), of type :data:`CostFunction`. Here are only the estimates the
fast float screening of :mod:`miner.terms` uses ("non-zeros minus non-empty rows").
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable

import numpy as np

CostFunction = Callable[..., tuple]
"""``cost(BT, G, AT, geometry=geometry) -> key``: a sortable key of the rational transforms
of a card of ``geometry`` (lower is cheaper). The geometry is passed because the hardware
realises multi-axis transforms one axis at a time and sizes every node from the tile."""

FiguresFunction = Callable[..., tuple]
"""``figures(BT, G, AT, geometry=geometry) -> (multiplications, adder bits, depth)``: the
figures the R-versus-cost front is drawn in (:mod:`miner.pareto`), lower is cheaper."""


def card_key(cost: CostFunction, card) -> tuple:
    """The key of a card under ``cost``."""
    return cost(card.BT, card.G, card.AT, geometry=card.geometry)


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
