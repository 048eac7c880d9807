"""``winohdl flow``: mine (or take the cheapest known card) -> gen -> sim on both simulators -> synth.

Everything lands in ``build/<name>/`` and ends with one summary (``flow.txt``).
"""

from __future__ import annotations

import time
from pathlib import Path

from hdl.generate import build_design, write_design
from hdl.options import HardwareOptions
from hdl.synth_report import format_report, parse_families, synth_design
from miner.card import write_text_atomic
from miner.geometry import Geometry
from miner.search import mine_card

from .run import run_simulation
from .tools import SIMULATORS, require


def _say(text: str) -> None:
    print(text, flush=True)


def run_flow(geometry: Geometry, options: HardwareOptions, method: str = "search", families: str = "ecp5,xilinx",
             vectors: int = 200, out=None, seed: int = 0, budget: float | None = None) -> bool:
    """Run the whole flow; True when both simulators pass."""
    fams = parse_families(families)
    for s in SIMULATORS:
        require(s)  # fail before any work when a simulator is missing
    folder = Path(out) if out else Path("build") / geometry.name
    t0 = time.perf_counter()
    _say(f"== mine     {geometry.describe()}")
    card = mine_card(geometry, method=method, seed=seed, budget=budget, progress=False)
    _say(card.summary())
    for m, cost in card.provenance.get("search", {}).items():
        _say(f"search     {m}: " + (cost if isinstance(cost, str) else
                                     f"adders B^T+A^T {cost[1]}, G {cost[2]}, max denominator {cost[3]}"))
    _say(f"== gen      {options.tag}")
    data, files, costed = build_design(card, options)
    summary = write_design(folder, data, files, costed)
    _say(summary.text())
    _say("== sim")
    sims = []
    for s in SIMULATORS:
        r = run_simulation(folder, s, vectors, seed=seed + 1)
        sims.append(r)
        _say(r.line())
    _say(f"== synth    {', '.join(fams)} (first yowasp call compiles a cache, ~45 s)")
    report = synth_design(folder, fams)
    table = format_report(report)
    _say(table)
    ok = all(r.passed for r in sims)
    g = geometry
    glance = [
        f"winohdl flow: {g.describe()}, data {options.data_width} bits, kernel {options.kernel_width} bits",
        f"algorithm  R = {card.rank} multiplications instead of {g.direct_count}"
        + (" (certified minimal: lower bound " + str(g.lower_bound()) + ")" if card.rank == g.lower_bound() else "")
        + f", proven exact ({card.entries_checked} entries), method {card.provenance.get('method')}",
    ]
    if card.note():
        glance.append(f"note       {card.note()}")
    a = card.costs["adders"]
    glance.append(f"adders     B^T+A^T {a['BT'] + a['AT']}, G {a['G']} (exact)" + "".join(
        f"; {m} {c[1]}, {c[2]}" for m, c in card.provenance.get("search", {}).items() if not isinstance(c, str)))
    glance += [f"verilog    {folder / data['verilog']} (top {data['top']}, latency {data['latency']})",
               "simulation " + "; ".join(f"{r.simulator} {'PASS' if r.passed else 'FAIL'} {r.checked} vectors"
                                         for r in sims),
               table, f"total      {time.perf_counter() - t0:.0f} s; everything in {folder}/"]
    text = "\n".join(glance)
    write_text_atomic(folder / "flow.txt", text + "\n")
    _say("== summary\n" + text)
    return ok
