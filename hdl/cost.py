"""The hardware cost of an algorithm: what "cheaper" means, from the generator's own graphs.

Adders are counted exactly as the generator builds them: each transform in the
generator's integer form (:func:`hdl.scaling.integer_form`) becomes a shift-add
graph with shared subexpressions (:func:`hdl.shiftadd.build_graph`); negations
count, shifts are free. :func:`cost_key` is the :data:`miner.costs.CostFunction`
the application passes to the miner.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from winohdl.core.card import AlgorithmCard

from .scaling import integer_form
from .shiftadd import build_graph


@dataclass(frozen=True)
class TransformAdders:
    """Two-input adders (subtractors included) of each transform."""

    BT: int
    G: int
    AT: int


@dataclass(frozen=True)
class CardCost:
    """The cost of a bilinear algorithm, ranked by :meth:`key` (lower is cheaper).

    Parameters
    ----------
    rank : int
        Multiplications R.
    adders : TransformAdders
        Exact adders of the generator's shift-add graphs.
    depth : TransformAdders
        Adder levels of each transform.
    max_denominator : int
    max_abs_constant : Fraction
    """

    rank: int
    adders: TransformAdders
    depth: TransformAdders
    max_denominator: int
    max_abs_constant: Fraction

    def key(self) -> tuple:
        """1. R, 2. adders of B^T plus A^T (the per-tile hardware), 3. adders of G (kernel
        transform, often offline), 4. max denominator, 5. max |constant| (bit growth)."""
        a = self.adders
        return (self.rank, a.BT + a.AT, a.G, self.max_denominator, self.max_abs_constant)

    def to_json(self) -> dict:
        """The costs block written into card files for people to read (never read back)."""
        a, d = self.adders, self.depth
        return {"rank": self.rank, "adders": {"BT": a.BT, "G": a.G, "AT": a.AT},
                "depth": {"BT": d.BT, "G": d.G, "AT": d.AT}, "max_denominator": self.max_denominator,
                "max_abs_constant": str(self.max_abs_constant)}

    def line(self) -> str:
        a = self.adders
        return f"adders     B^T {a.BT}, G {a.G}, A^T {a.AT} (exact: the generator's shift-add graphs)"


def card_cost(BT, G, AT) -> CardCost:
    """The exact cost of rational transforms B^T, G, A^T."""
    BT_int, G_int, AT_int, _ = integer_form(BT, G, AT)
    graphs = [build_graph(m) for m in (BT_int, G_int, AT_int)]
    values = [Fraction(v) for m in (BT, G, AT) for row in m for v in row]
    return CardCost(len(BT), TransformAdders(*(g.adder_count for g in graphs)),
                    TransformAdders(*(g.depth for g in graphs)),
                    max((v.denominator for v in values), default=1), max((abs(v) for v in values), default=Fraction(0)))


def cost_key(BT, G, AT) -> tuple:
    """:data:`miner.costs.CostFunction`: the sortable key of :func:`card_cost`."""
    return card_cost(BT, G, AT).key()


def cost_of(card: AlgorithmCard) -> CardCost:
    return card_cost(card.BT, card.G, card.AT)
