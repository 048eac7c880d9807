"""``winohdl flow``: mine (or take the cheapest known card) -> gen -> sim on both simulators -> proof -> synth
(with the post-synthesis check of each mapped netlist unless ``verify`` is off).

Everything lands in one design folder and ends with one summary (``flow.txt``).
"""

from __future__ import annotations

import time
from pathlib import Path

from hdl.cost import cost_of
from hdl.design import generate_design, open_design, write_design_folder
from hdl.options import TARGETS, HardwareOptions
from miner.costs import CostFunction
from miner.search import MineSettings, mine_card
from sim.prove import prove_design, write_proof
from sim.run import run_simulation
from sim.tools import SIMULATORS
from synth.report import failed, format_report, synth_design
from winohdl.core.geometry import Geometry
from winohdl.core.io import make_run_folder, write_text_atomic


def _say(text: str) -> None:
    print(text, flush=True)


def run_flow(geometry: Geometry, options: HardwareOptions, settings: MineSettings, cost: CostFunction,
             families: list[str], vectors: int, folder: Path, should_stop=lambda: False, *, verify: bool = True,
             verify_simulator: str = "icarus",
             seeds: int = 3, pnr_timeout: float = 900.0) -> bool:
    """Run the whole flow (arguments already validated); True when both simulators pass, both proofs hold and
    every mapped netlist passes its post-synthesis check."""
    t0 = time.perf_counter()
    _say(f"== mine     {geometry.describe()}")
    card = mine_card(geometry, settings, cost, should_stop=should_stop)
    card_cost = cost_of(card)
    _say(card.summary())
    _say(card_cost.line())
    for m, key in card.provenance.get("search", {}).items():
        _say(f"search     {m}: " + (key if isinstance(key, str) else
                                    f"adders B^T+A^T {key[1]}, G {key[2]}, max denominator {key[3]}"))
    _say(f"== gen      {options.tag}")
    generated = generate_design(card, options)
    write_design_folder(folder, generated)
    opened = open_design(folder)
    design = opened.design
    _say(design.text())
    _say("== sim")
    sim_work = make_run_folder(folder / "sim_build", "sim")
    sims = []
    for s in SIMULATORS:
        r = run_simulation(opened, s, sim_work, vectors, seed=settings.seed + 1)
        sims.append(r)
        _say(r.line())
    _say("== prove")
    prove_work = make_run_folder(folder / "prove", "prove")
    proofs = []
    for target in TARGETS:
        p = prove_design(opened, target, prove_work / target)
        write_proof(prove_work, p)
        proofs.append(p)
        _say(p.line())
    _say(f"== synth    {', '.join(families)} (first yowasp call compiles a cache, ~45 s)")
    check = None
    if verify:
        from functools import partial

        from sim.postsynth import check_netlist
        check = partial(check_netlist, simulator=verify_simulator)
    report = synth_design(opened, families, make_run_folder(folder / "synth", "synth"), seeds=seeds,
                          pnr_timeout=pnr_timeout, verify=check)
    table = format_report(report)
    _say(table)
    bad_netlists = failed(report)
    ok = all(r.passed for r in sims) and all(p.proven for p in proofs) and not bad_netlists
    g = geometry
    a = card_cost.adders
    glance = [
        f"winohdl flow: {g.describe()}, data {options.data_width} bits, kernel {options.kernel_width} bits",
        f"algorithm  R = {card.rank} multiplications instead of {g.direct_count}"
        + (" (certified minimal: lower bound " + str(g.lower_bound()) + ")" if card.rank == g.lower_bound() else "")
        + f", proven exact ({card.entries_checked} entries), method {card.provenance.get('method')}",
    ]
    if card.note():
        glance.append(f"note       {card.note()}")
    glance.append(f"adders     B^T+A^T {a.BT + a.AT}, G {a.G} (exact)" + "".join(
        f"; {m} {c[1]}, {c[2]}" for m, c in card.provenance.get("search", {}).items() if not isinstance(c, str)))
    glance += [f"verilog    {folder / design.winograd.verilog} (top {design.winograd.top}, "
               f"latency {design.latency})",
               "simulation " + "; ".join(f"{r.simulator} {'PASS' if r.passed else 'FAIL'} {r.checked} vectors"
                                         for r in sims),
               *(p.line() for p in proofs),
               *([f"FAIL       post-synthesis check: {', '.join(bad_netlists)}"] if bad_netlists else []),
               table, f"total      {time.perf_counter() - t0:.0f} s; everything in {folder}/"]
    text = "\n".join(glance)
    write_text_atomic(folder / "flow.txt", text + "\n")
    _say("== summary\n" + text)
    return ok
