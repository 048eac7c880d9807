"""Whether the lazy Winograd cards (more multiplications than :data:`~winohdl.network.candidates.EAGER_RANK`,
derived only when DSP blocks bind) could make a plan faster: a bound known without their datapaths."""

from __future__ import annotations

import math

from hdl.engine.sparsity import BlockSchedule

from .budget import Budget
from .candidates import EAGER_RANK, divisors, engine_bound, winograd_geometries
from .decision import engine_decision, label, layer_mask
from .graph import Graph, Kind


def lazy_geometries(graph: Graph) -> list[str]:
    shapes = {n.name: n.shape for n in graph.nodes}
    found = {label(g) for n in graph.nodes if n.kind == Kind.CONV and not n.attrs.grouped
             for g in winograd_geometries(n, shapes[n.inputs[0]]) if g.lower_bound() > EAGER_RANK}
    return sorted(found)


def lazy_could_help(graph: Graph, eager: dict, folding, budget: Budget) -> bool:
    """Whether a plan one cycle faster could fit the DSP budget if the lazy cards were planned too: a
    bound that needs no datapath (a candidate's cycles are at least its bound, and each multiplier
    takes a DSP block), summed over the nodes; False means deriving them cannot pay."""
    target = max(c.cycles for c in folding.chosen.values()) - 1
    shapes = {n.name: n.shape for n in graph.nodes}
    need = 0
    for n in graph.nodes:
        if n.name not in eager:
            continue
        best = min((c.dsp for c in eager[n.name] if c.bound <= target), default=math.inf)
        if n.kind == Kind.CONV:
            a, x, mask = n.attrs, shapes[n.inputs[0]], layer_mask(graph.weights[f"{n.name}.weight"]) if graph.weights else None
            for g in winograd_geometries(n, x):
                if g.lower_bound() <= EAGER_RANK:
                    continue
                for pk in divisors(a.out_channels):
                    for pc in divisors(a.in_channels):
                        # (the lanes a kernel mask leaves: not monotonic in PC, so no early stop then)
                        lanes = pk * pc if mask is None else len(BlockSchedule.make(mask, pk, pc).lanes)
                        mult = lanes * g.lower_bound()
                        if mult >= best:
                            if mask is None:
                                break
                            continue
                        o = engine_decision(a, x, g.output, pk, pc, kernel_mask=mask).options
                        if engine_bound(o) <= target:
                            best = mult
                            break
        need += best
        if need > budget.dsp:
            return False
    return True
