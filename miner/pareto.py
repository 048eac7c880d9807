"""The R-versus-cost front: proven cards from the lower bound upward, the non-dominated ones kept.

More multiplications buy fewer and narrower adders. Candidates, all exact and proven:

* per axis, every tiling of each stride-phase / dilation-residue piece into
  Toom-Cook tiles of at most T outputs (T = the piece: the constructive optimum;
  T = 1: the direct dot products; in between: nesting of smaller tiles, e.g.
  F(4, 3) as two F(2, 3) at R = 8), combined across axes by Kronecker products
  (mixed per axis, so F(4x4, 3x3) has R = 36, 48, 64, 72, 96, 144 ...);
* at the lower bound, the constructive card polished for the cost and the card whose points the
  cost chose (:func:`miner.choices.chosen_card`), polished (optional budget).

Every card is reduced (no zero or unused terms, :func:`miner.search.reduce_terms`)
and proven (:meth:`AlgorithmCard.build`); its figures (multiplications, adder
bits, depth) come from a function the application passes in (:data:`miner.costs.FiguresFunction`,
the generator's exact figures), so the miner still knows nothing of hardware.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from itertools import product
from pathlib import Path

from winohdl.core.card import AlgorithmCard
from winohdl.core.geometry import Geometry

from .constructive import axis_algorithm, kron
from .costs import FiguresFunction


def tiled_cards(geometry: Geometry) -> list[AlgorithmCard]:
    """Every per-axis tiling combination (distinct cards), proven."""
    g = geometry
    per_axis = []
    for m, k, s, dl in zip(g.output, g.kernel, g.stride, g.dilation):
        opts, seen = [], set()
        for tile in range(m, 0, -1):
            alg = axis_algorithm(m, k, s, dl, tile)
            key = tuple(tuple(r) for r in alg[0])
            if key not in seen:
                seen.add(key)
                opts.append((tile, alg))
        per_axis.append(opts)
    cards = []
    for combo in product(*per_axis):
        BT, G, AT = combo[0][1]
        for _, (pb, pg, pa) in combo[1:]:
            BT, G, AT = kron(BT, pb), kron(G, pg), kron(AT, pa)
        tiles = "x".join(str(t) for t, _ in combo)
        prov = {"method": "tiled", "seed": None, "steps": 0, "seconds": 0.0, "device": "cpu",
                "config": {"tile": tiles, "points": "0, +-1, +-2, +-1/2, ... and infinity per tile"}}
        cards.append(AlgorithmCard.build(g, BT, G, AT, prov))
    return cards


@dataclass(frozen=True)
class FrontPoint:
    """One proven card on the front with its figures (multiplications, adder bits, depth)."""

    card: AlgorithmCard
    figures: tuple
    source: str

    @property
    def rank(self) -> int:
        return self.card.rank


def dominates(a: tuple, b: tuple) -> bool:
    return all(x <= y for x, y in zip(a, b)) and a != b


def non_dominated(points: list[FrontPoint]) -> list[FrontPoint]:
    """The points no other point dominates (one per distinct figure triple), by R."""
    out, seen = [], set()
    for p in sorted(points, key=lambda p: p.figures):
        if p.figures in seen or any(dominates(q.figures, p.figures) for q in points):
            continue
        seen.add(p.figures)
        out.append(p)
    return out


def mine_front(geometry: Geometry, figures: FiguresFunction, cost=None, polish_seconds: float = 0.0,
               max_rank: int | None = None, should_stop=lambda: False) -> tuple[list[FrontPoint], list[FrontPoint]]:
    """(front, every candidate) for ``geometry``: see the module docstring. ``cost`` (a
    :data:`miner.costs.CostFunction`) and ``polish_seconds`` > 0 add the polished constructive
    card and the cost-chosen points' card, polished (each step within ``polish_seconds``). Every
    card is reduced and proven."""
    from .search import reduce_terms
    from .terms import polish
    t0 = time.perf_counter()
    cands: list[FrontPoint] = []
    for card in tiled_cards(geometry):
        if should_stop():
            break
        card = reduce_terms(card)
        if max_rank is not None and card.rank > max_rank:
            continue
        cands.append(FrontPoint(card, tuple(figures(card.BT, card.G, card.AT, geometry=geometry)),
                                "tiled " + card.provenance["config"]["tile"]))
    if cost is not None and polish_seconds > 0 and not should_stop():
        from .choices import chosen_card
        base = next(p.card for p in cands if p.rank == geometry.lower_bound())
        chosen = chosen_card(geometry, cost, budget=polish_seconds, should_stop=should_stop)
        starts = [(base, "constructive")]
        if chosen.BT != base.BT or chosen.G != base.G or chosen.AT != base.AT:
            starts.append((chosen, "points by cost"))
        for start, label in starts:
            if should_stop():
                break
            better = polish(start, cost, budget=polish_seconds, should_stop=should_stop)
            if better is not base:
                cands.append(FrontPoint(better, tuple(figures(better.BT, better.G, better.AT, geometry=geometry)),
                                        label + ("+polish" if better is not start else "")))
    for p in cands:
        p.card.provenance["front_seconds"] = round(time.perf_counter() - t0, 2)
    return non_dominated(cands), cands


def front_table(geometry: Geometry, front: list[FrontPoint], cands: list[FrontPoint]) -> str:
    lines = [f"front      {geometry.describe()}: non-dominated in (multiplications, adder bits, depth), "
             f"{len(front)} of {len(cands)} proven cards",
             f"{'R':>5} {'adder bits':>11} {'depth':>6}  source"]
    for p in sorted(front, key=lambda p: p.figures):
        lines.append(f"{p.figures[0]:>5} {p.figures[1]:>11} {p.figures[2]:>6}  {p.source} (proven, "
                     f"{p.card.entries_checked} entries)")
    return "\n".join(lines)


def plot_front(geometry: Geometry, front: list[FrontPoint], cands: list[FrontPoint], path: Path) -> Path:
    """Adder bits over R: every candidate, the front joined (depth written beside each point)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.scatter([p.figures[0] for p in cands], [p.figures[1] for p in cands], c="0.7", label="proven cards")
    pts = sorted(front, key=lambda p: p.figures)
    ax.plot([p.figures[0] for p in pts], [p.figures[1] for p in pts], "o-", c="C0", label="front")
    for p in pts:
        ax.annotate(f"d{p.figures[2]}", (p.figures[0], p.figures[1]), textcoords="offset points", xytext=(4, 4))
    ax.set_xlabel("multiplications R")
    ax.set_ylabel("adder bits (B^T, G, A^T, division)")
    ax.set_title(f"{geometry.name}: R versus adder bits (dN: logic depth)")
    ax.legend()
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
