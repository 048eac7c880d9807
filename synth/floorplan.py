"""An ECP5 floorplan that keeps each multiplier beside the block RAMs that feed it.

On a layer engine every MULT18X18D reads its operands straight from DP16KD output registers (the
transformed tiles and the kernels): no logic between, so those routes are pure wire, and the
electrostatic placer, which sees a DSP row and two block-RAM rows across the die, puts them in any
order (F(4x4,3x3) layer, seed 2: a block RAM 59 columns from the multiplier it feeds, 4.74 ns of
routing, the layer's critical path). The plan keeps the sites a first, unconstrained nextpnr run
chose for these cells and only changes which cell sits on which site: the multipliers that share
block RAMs (a cluster: a connected component of "this block RAM drives that multiplier") take
consecutive DSP sites, and each of the cluster's block RAMs the nearest of the sites that run gave
the clusters' block RAMs. Every other block RAM stays on its site: left free, the feature-map banks
drift to the far sites (F(4x4,3x3) layer, seeds 1 / 2 / 3: 162.4 / 163.0 / 154.5 MHz; kept, 178.5 /
176.4 / 178.3; unconstrained, 178.0 / 172.4 / 173.1). The cells are fixed through nextpnr's ``BEL``
attribute; logic and flip-flops are placed as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from winohdl.core.netlist import YosysNetlist

MULTIPLIER = "MULT18X18D"
BLOCK_RAM = "DP16KD"


@dataclass(frozen=True)
class Floorplan:
    """Which site each multiplier and block RAM takes.

    Attributes
    ----------
    clusters : tuple of tuple of str
        The multipliers of each cluster, in site order (natural order of the cell names).
    sites : tuple of (str, str)
        ``(cell, site)`` for every cell fixed (nextpnr BEL names, ``X<x>/Y<y>/<bel>``): the clusters'
        multipliers, then their block RAMs, then every other block RAM on its first-run site.
    operand_rams : int
        How many of the block RAMs feed the clusters.
    """

    clusters: tuple[tuple[str, ...], ...]
    sites: tuple[tuple[str, str], ...]
    operand_rams: int

    @property
    def multipliers(self) -> int:
        return sum(len(c) for c in self.clusters)

    @property
    def other_rams(self) -> int:
        return len(self.sites) - self.multipliers - self.operand_rams

    def describe(self) -> str:
        n = len(self.clusters)
        return (f"floorplan: {self.multipliers} {MULTIPLIER} in {n} cluster{'s' * (n != 1)} beside the "
                f"{self.operand_rams} {BLOCK_RAM} that feed them, the other {self.other_rams} {BLOCK_RAM} "
                f"kept, on the sites of an unconstrained first run")


def _natural(name: str) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def _xy(site: str) -> tuple[int, int]:
    m = re.match(r"X(\d+)/Y(\d+)/", site)
    if m is None:
        raise ValueError(f"not an ECP5 site name: {site!r}")
    return int(m[1]), int(m[2])


def operand_clusters(net: YosysNetlist) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """``((multipliers, block RAMs), ...)``: the multipliers of ``net`` with an input bit driven by a
    block RAM's output, grouped by the block RAMs they share; in natural order of the cell names."""
    cells, drivers = net.cells, net.drivers
    feeds = {name: {d.cell for port, bits in c["connections"].items()
                    if c["port_directions"].get(port) == "input" for b in bits
                    if (d := drivers.get(b)) is not None and cells[d.cell]["type"] == BLOCK_RAM}
             for name, c in cells.items() if c["type"] == MULTIPLIER}
    feeds = {m: rams for m, rams in feeds.items() if rams}
    parent: dict[str, str] = {}

    def root(a: str) -> str:
        while parent.setdefault(a, a) != a:
            a = parent[a]
        return a

    for m, rams in feeds.items():
        for r in rams:
            parent[root(r)] = root(m)
    groups: dict[str, list[str]] = {}
    for m in sorted(feeds, key=_natural):
        groups.setdefault(root(m), []).append(m)
    return tuple(sorted(((tuple(ms), tuple(sorted({r for m in ms for r in feeds[m]}, key=_natural)))
                         for ms in groups.values()), key=lambda c: _natural(c[0][0])))


def plan_floor(net: YosysNetlist, placed: YosysNetlist) -> Floorplan:
    """The floorplan of ``net`` (Yosys JSON for nextpnr) on the sites of ``placed`` (nextpnr's
    ``--write`` JSON of an unconstrained run of the same netlist): each kind of cell permuted among
    the sites that run gave that kind, so its global placement stays and only the order changes."""
    done = placed.cells
    site_of = {name: c["attributes"]["NEXTPNR_BEL"] for name, c in done.items()
               if c["type"] in (MULTIPLIER, BLOCK_RAM)}
    clusters = operand_clusters(net)
    operands = {r for _, rams in clusters for r in rams}
    dsp_sites = sorted((s for n, s in site_of.items() if done[n]["type"] == MULTIPLIER),
                       key=lambda s: (_xy(s)[1], _xy(s)[0], s))
    free = {site_of[r] for r in operands}
    sites: dict[str, str] = {}
    for multipliers, _ in clusters:
        for m in multipliers:
            sites[m] = dsp_sites[len(sites)]
    for multipliers, rams in clusters:
        xs, ys = zip(*(_xy(sites[m]) for m in multipliers))
        cx, cy = sum(xs) / len(xs), sum(ys) / len(ys)
        for r in rams:
            best = min(free, key=lambda s: (abs(_xy(s)[0] - cx) + abs(_xy(s)[1] - cy), _natural(s)))
            free.remove(best)
            sites[r] = best
    others = sorted((n for n, c in done.items() if c["type"] == BLOCK_RAM and n not in operands), key=_natural)
    sites.update((n, site_of[n]) for n in others)
    return Floorplan(tuple(ms for ms, _ in clusters), tuple(sites.items()), len(operands))


def write_floorplanned(net: YosysNetlist, placed_path: Path, out_path: Path) -> Floorplan:
    """Write ``net`` (updated in place) with the cells of :func:`plan_floor` (on the sites of
    ``placed_path``) fixed through ``BEL`` attributes to ``out_path``; the plan."""
    plan = plan_floor(net, YosysNetlist.load(placed_path))
    cells = net.cells
    for name, site in plan.sites:
        cells[name]["attributes"]["BEL"] = site
    net.write(out_path)
    return plan
