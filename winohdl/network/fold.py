"""Folding: each node's parallelism and algorithm chosen so that the slowest node is as fast as the
budget allows, as FINN's folding does.

Every node is its own engine and all run at once, so a frame takes the slowest node's cycles. The
search lowers a target T: for a target, each node takes its cheapest candidate whose cycles are at
most T (cheapest by the budget-normalised sum of DSP, block RAM and logic), fabric lanes then moved into
spare DSP blocks (:func:`refill_dsp`); if the totals fit, that
assignment is kept and T becomes one cycle below its slowest node (the bottleneck gets more
parallelism, the other nodes keep the cheapest that still meets the new target, so the pipeline
stays balanced); when they do not fit, the weight of each resource over budget is raised and the
choice made again (a few times: a node may then trade DSP blocks for block RAM, e.g. a smaller
tile or a direct engine); where that finds none that fits, the target is judged exactly, as a 0-1
program over every node's candidates (:func:`exact`), so the search stops only where no assignment
fits (within :data:`EXACT_NODES`), and then the last kept assignment is the plan. The first
target is unbounded: the cheapest assignment overall, which is also the verdict when nothing fits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .budget import RESOURCES, Budget
from .candidates import Candidate

REWEIGHTS = 8
"""Tries per target, each raising the weights of the resources over budget."""
EXACT_NODES = 20_000
"""The most branch-and-bound nodes one exact assignment (:func:`exact`) may search, where reweighting found
none that fits: a bound on its work that gives the same plan on every machine (a time limit would not;
ResNet-8's targets take one node or none)."""


@dataclass(frozen=True)
class Folding:
    """The search's result: one candidate per node, whether it fits, what stopped the search."""

    chosen: dict
    fits: bool
    binding: tuple[str, ...]   # the resources over budget at the first target that did not fit
    steps: int


def totals(chosen) -> dict:
    return {r: sum(c.use(r) for c in chosen.values()) for r in RESOURCES}


def over(use: dict, budget: Budget) -> tuple[str, ...]:
    return tuple(r for r in RESOURCES if use[r] > budget.get(r))


class _Search:
    def __init__(self, candidates: dict[str, list[Candidate]], budget: Budget):
        self.candidates, self.budget = candidates, budget
        self.weights = {r: 1.0 / max(1, budget.get(r)) for r in RESOURCES}
        self._sorted: dict[str, list[Candidate]] = {}

    def _order(self) -> None:
        w = self.weights
        for name, cs in self.candidates.items():
            self._sorted[name] = sorted(cs, key=lambda c: (sum(w[r] * c.use(r) for r in RESOURCES), c.bound))

    def cheapest(self, target: float) -> dict | None:
        """Per node, the cheapest candidate within ``target`` cycles (None: a node cannot reach it)."""
        out = {}
        for name, cs in self._sorted.items():
            pick = next((c for c in cs if c.bound <= target and c.cycles <= target), None)
            if pick is None:
                return None
            out[name] = pick
        return out

    def assign(self, target: float) -> tuple[dict | None, tuple[str, ...]]:
        """The cheapest assignment within ``target`` that fits, reweighting up to REWEIGHTS times;
        else the first try (the plainly cheapest) and the resources it is over."""
        first = None
        for _ in range(REWEIGHTS):
            if not self._sorted:
                self._order()
            chosen = self.cheapest(target)
            if chosen is None:
                return None, ()
            chosen = refill_dsp(chosen, self.budget)   # fabric lanes back into spare DSP blocks: less logic
            use = totals(chosen)
            bad = over(use, self.budget)
            if not bad:
                return chosen, ()
            first = first or (chosen, bad)
            for r in bad:
                self.weights[r] *= 2.0 * use[r] / max(1, self.budget.get(r))
            self._sorted = {}
        return first


def exact(candidates: dict[str, list[Candidate]], budget: Budget, target: float) -> dict | None:
    """The assignment within ``target`` cycles that fits ``budget`` with the least budget-normalised sum of
    its resources, solved as a 0-1 program (scipy's HiGHS); None when none fits (or none is found within
    :data:`EXACT_NODES`). Candidates that cost the same in every resource count once."""
    from scipy.optimize import Bounds, LinearConstraint, milp
    options = []
    for cs in candidates.values():
        # within the target (an unbounded one needs no cycle model); of twins in every resource the first listed
        ok = {tuple(c.use(r) for r in RESOURCES): c for c in reversed(cs)
              if target == math.inf or (c.bound <= target and c.cycles <= target)}
        if not ok:
            return None
        options.append(list(ok.values()))
    flat = [c for cs in options for c in cs]
    use = np.array([[c.use(r) for c in flat] for r in RESOURCES], dtype=float)
    limit = np.array([budget.get(r) for r in RESOURCES], dtype=float)
    one = np.repeat(np.eye(len(options)), [len(cs) for cs in options], axis=1)   # one candidate a node
    weights = np.array([1 / max(1, budget.get(r)) for r in RESOURCES]) @ use
    res = milp(weights, integrality=np.ones(len(flat)), bounds=Bounds(0, 1),
               constraints=[LinearConstraint(one, 1, 1), LinearConstraint(use, -np.inf, limit)],
               options={"node_limit": EXACT_NODES})
    if res.x is None:
        return None
    found = {c.node: c for c, x in zip(flat, res.x) if x > 0.5}
    return found if len(found) == len(options) and not over(totals(found), budget) else None


def fold(candidates: dict[str, list[Candidate]], budget: Budget, tick=None) -> Folding:
    """Fold the network (see the module docstring); ``tick()`` is called once per target tried."""
    search = _Search(candidates, budget)
    target, kept, steps = math.inf, None, 0
    while True:
        chosen, bad = search.assign(target)
        if bad and (found := exact(candidates, budget, target)) is not None:
            refilled = refill_dsp(found, budget)
            chosen, bad = (found if over(totals(refilled), budget) else refilled), ()
        steps += 1
        if tick is not None:
            tick()
        if chosen is None:   # some node cannot be made faster: the kept plan is the fastest
            return Folding(kept, True, (), steps)
        if bad:
            if kept is None:
                return Folding(chosen, False, bad, steps)
            return Folding(kept, True, bad, steps)
        kept = chosen
        slowest = max((c.cycles for c in chosen.values()), default=0)
        if slowest <= 1:
            return Folding(kept, True, (), steps)
        target = slowest - 1


def refill_dsp(chosen: dict, budget: Budget) -> dict:
    """``chosen`` with fabric lanes moved back to DSP blocks while the budget has blocks to spare, the
    lanes that save the most logic per block first: the same cycles and block RAM, less logic."""
    out = dict(chosen)
    spare = budget.dsp - sum(c.dsp for c in out.values())
    while True:
        movable = [c for c in out.values() if c.fabric_lanes and c.lane.dsp <= spare]
        if not movable:
            return out
        c = max(movable, key=lambda c: (c.lane.logic / c.lane.dsp, c.node))
        out[c.node] = c.with_fabric(c.fabric_lanes - 1)
        spare -= c.lane.dsp


def least_dsp(candidates: dict[str, list[Candidate]], target: int) -> dict | None:
    """Per node the candidate with the fewest DSP blocks (then block RAM, logic) within ``target``
    cycles: the nodes are independent engines, so no assignment meeting the target needs fewer DSP
    blocks in total. None when a node cannot meet the target."""
    out = {}
    for name, cs in candidates.items():
        ok = [c for c in cs if c.bound <= target and c.cycles <= target]
        if not ok:
            return None
        out[name] = min(ok, key=lambda c: (c.dsp, c.bram, c.logic))
    return out
