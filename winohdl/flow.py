"""``winohdl flow``: mine (or take the cheapest known card) -> gen -> sim on both simulators -> proof -> synth
(with the post-synthesis check of each mapped netlist unless ``verify`` is off).

Everything lands in one design folder and ends with one summary (``flow.txt``,
:mod:`winohdl.flow_summary`): the verdict against the direct convolution, what was checked, the
synthesis table (printed once, there) and the files to open next.
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
from synth.report import failed, synth_design
from winohdl.core.geometry import Geometry
from winohdl.core.io import make_run_folder, write_text_atomic

from .flow_summary import FlowOutcome, summary


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
        _say(f"search     {m}: {key}")
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
    synth_folder = make_run_folder(folder / "synth", "synth")
    report = synth_design(opened, families, synth_folder, seeds=seeds, pnr_timeout=pnr_timeout, verify=check)
    _say(f"report     {synth_folder / 'report.txt'} (the table is in the summary below)")
    outcome = FlowOutcome(card, design, folder, tuple(sims), tuple(proofs), report, synth_folder,
                          time.perf_counter() - t0)
    text = summary(outcome)
    write_text_atomic(folder / "flow.txt", text + "\n")
    _say("== summary\n" + text)
    return all(r.passed for r in sims) and all(p.proven for p in proofs) and not failed(report)
