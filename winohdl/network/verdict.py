"""A plan's verdict in words: the resources it uses against the budget, its frames per second and
bottleneck where it fits; where it does not, by how much, the layers that use the most, the least each
resource could take, and a part of the family that would hold it."""

from __future__ import annotations

import math

from winohdl.core.device import PARTS, Device

from .budget import RESOURCES, UNBOUNDED, Budget, names
from .graph import Graph, Kind


def fits_text(use: dict, budget: Budget) -> str:
    """``dsp 10/156, ...``: each resource against its budget (flip-flops only where they are bounded)."""
    return ", ".join(f"{r} {use.get(r, 0):,}/{budget.get(r):,}" for r in RESOURCES if budget.get(r) != UNBOUNDED)


def bigger_part(use: dict, current: Device) -> str:
    """A part of the same family that holds ``use`` (the units differ between families), or the largest."""
    family = [p for p in PARTS.values() if p.family == current.family]
    parts = [p for p in family if p.part != current.part and all(use[r] <= Budget.of(p).get(r) for r in RESOURCES)]
    if parts:
        return f"the {parts[0].part} ({fits_text(use, Budget.of(parts[0]))}) would hold this plan"
    big = max(family, key=lambda p: p.dsp_capacity)
    return (f"no {current.family} part of the device table holds it (the largest, {big.part}: "
            f"{fits_text(use, Budget.of(big))})")


def verdict(layers: tuple, fits: bool, part: Device, budget: Budget, clock: float,
             weights_bits: int, least: dict) -> str:
    use = {r: sum(x.use(r) for x in layers) for r in RESOURCES}
    cycles = max((x.cycles for x in layers), default=0)
    if fits:
        bottleneck = next((x.node for x in layers if x.cycles == cycles), "-")
        fps = clock * 1e6 / cycles if cycles else math.inf
        return (f"fits {part.part} ({fits_text(use, budget)}): {fps:,.1f} frames/s at {clock:g} MHz, "
                f"bottleneck {bottleneck} ({cycles:,} cycles a frame)")
    parts = []
    for r in RESOURCES:
        if use[r] > budget.get(r):
            top = sorted(layers, key=lambda x: -x.use(r))[:3]
            parts.append(f"{names(part)[r]} {use[r]:,} against {budget.get(r):,} ({use[r] - budget.get(r):,} over, "
                         f"{use[r] / max(1, budget.get(r)):.2f}x; most in " +
                         ", ".join(f"{x.node} {x.use(r):,}" for x in top) + ")")
    cap = part.bram_capacity * part.bram.bits
    return (f"does not fit {part.part} (budget {fits_text(use, budget)}): " + "; ".join(parts)
            + "; at least " + ", ".join(f"{least[r]:,} {r}" for r in RESOURCES) + " (each resource minimised on "
              f"its own, over every candidate of every node); the weights alone are {weights_bits / 1e6:.2f} Mbit at int8 against {cap / 1e6:.2f} Mbit of "
              f"block RAM on the part; this is the cheapest plan of its kind (fewer frames per second cannot help: "
              f"every node has its own engine); {bigger_part(use, part)}")


def weights_bits(graph: Graph, data_width: int) -> int:
    return sum(math.prod(n.attrs.weight_shape()) * data_width for n in graph.nodes
               if n.kind in (Kind.CONV, Kind.LINEAR))
