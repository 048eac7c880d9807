"""Layer-engine benchmark: the Winograd engine beside the direct engine at equal throughput.

Default layer (the issue's target): F(4x4,3x3), int8, C=K=16, 32x32 feature map, padding 1,
PK=PC=1, ``--pipeline deep`` (one adder level per register stage). For each engine: the performance model (cycles alone and back to back, ideal),
optionally the cycles measured on Verilator (``--sim``), ECP5 resources from Yosys (logic =
LUT4 + 2 x CCU2C, FFs, MULT18X18D, DP16KD) and optionally Fmax (``--fmax``: nextpnr, median
of ``--seeds`` 3 seeds, through :class:`hdl.engine.harness.EngineHarness`). Effective MACs per DSP per
cycle and GOPS/DSP (2 x MACs per second / DSP blocks) use the back-to-back period.

    .venv/bin/python bench/engine.py [--output 4x4] [--pipeline deep|stages] [--sim] [--fmax [--seeds 3] [--target 200]]
                                     [--only winograd|direct] [--work build/bench/engine]

Run one place and route at a time on a shared machine (a run of both engines, 3 seeds each, takes
tens of minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from amaranth.back import verilog  # noqa: E402

from hdl.engine.design import engine_datapath, generate_engine, open_engine_design, write_engine_folder  # noqa: E402
from hdl.engine.engine import LayerEngine  # noqa: E402
from hdl.engine.plan import plan_engine  # noqa: E402
from hdl.engine.harness import EngineHarness  # noqa: E402
from hdl.engine.options import EngineOptions  # noqa: E402
from miner.constructive import constructive_card  # noqa: E402
from synth.nextpnr_report import CriticalPath  # noqa: E402
from synth.pnr import measure_fmax  # noqa: E402
from synth.yosys import synthesise  # noqa: E402
from winohdl.core.geometry import Geometry  # noqa: E402


# A first target above every engine measured (the family's 350 MHz asks the placer for paths
# twice as fast as the fabric routes between block RAMs and multipliers allow); raised when met.
# The block RAMs' reads go through their own output registers (synth/passes/ecp5_bram.py: nextpnr times
# an OUTREG read at 0.97 ns clock-to-out, a NOREG one at 5.6 to 5.8 ns)
ENGINE_TARGET_MHZ = 200.0


def fmax(engine, work: Path, name: str, seeds: int = 3, timeout: float = 3600.0,
         target_mhz: float = ENGINE_TARGET_MHZ) -> dict:
    """ECP5 Fmax of ``engine`` inside the register harness: :func:`synth.pnr.measure_fmax` (the
    same flow as ``winohdl synth``: MULT18X18D and DP16KD registers absorbed, multipliers floorplanned
    beside the block RAMs that feed them after an unconstrained first run, 3 seeds, target raised
    when met)."""
    work.mkdir(parents=True, exist_ok=True)
    hv = work / f"{name}.v"
    hv.write_text(verilog.convert(EngineHarness(engine), name=name, emit_src=False))
    return measure_fmax(hv, "ecp5", work, name, seeds=seeds, timeout=timeout, target_mhz=target_mhz).to_json()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", default="4x4")
    ap.add_argument("--kernel", default="3x3")
    ap.add_argument("--channels", type=int, default=16)
    ap.add_argument("--feature-map", default="32x32")
    ap.add_argument("--padding", default="1")
    ap.add_argument("--parallel-out", type=int, default=1)
    ap.add_argument("--parallel-in", type=int, default=1)
    ap.add_argument("--pipeline", default="deep", choices=("stages", "deep"))
    ap.add_argument("--output-transform", default="auto", choices=("auto", "parallel", "serial"))
    ap.add_argument("--input-transform", default="auto", choices=("auto", "parallel", "serial"))
    ap.add_argument("--seeds", type=int, default=3, help="nextpnr seeds per engine (median)")
    ap.add_argument("--pnr-timeout", type=float, default=3600.0, help="seconds per nextpnr run")
    ap.add_argument("--target", type=float, default=ENGINE_TARGET_MHZ,
                    help="first nextpnr target (MHz; raised 1.5x when met)")
    ap.add_argument("--only", choices=("winograd", "direct"), help="one engine only")
    ap.add_argument("--sim", action="store_true", help="measure cycles on Verilator")
    ap.add_argument("--fmax", action="store_true", help="place and route (3 nextpnr seeds per engine)")
    ap.add_argument("--work", default=str(ROOT / "build" / "bench" / "engine"))
    a = ap.parse_args(argv)
    geo = Geometry.parse(a.output, a.kernel)
    opts = EngineOptions.parse(geo, a.channels, a.channels, a.feature_map, a.padding, a.parallel_out,
                               a.parallel_in, pipeline=a.pipeline, output_transform=a.output_transform,
                               input_transform=a.input_transform)
    work = Path(a.work).resolve() / opts.name
    work.mkdir(parents=True, exist_ok=True)
    card = constructive_card(geo)
    folder = write_engine_folder(work / "design", generate_engine(card, opts))
    opened = open_engine_design(folder)
    dp = engine_datapath(card, opts)
    rows = {}
    for kind in (a.only,) if a.only else ("winograd", "direct"):
        core = opened.design.core(kind)
        perf = core.performance
        r = {"multipliers": core.multipliers, "model_cycles": perf.cycles, "model_period": perf.period,
             "ideal": perf.ideal, "macs": perf.macs}
        t0 = time.perf_counter()
        syn = synthesise(folder / core.verilog, core.top, "ecp5", work / "synth")
        r.update({"lut4": syn.cells.get("LUT4", 0), "ccu2c": syn.cells.get("CCU2C", 0), "ffs": syn.ffs,
                  "dsps": syn.dsps, "bram": syn.brams, "lutram": syn.kind("lutram"), "cells": syn.cells,
                  "absorbed": syn.absorbed, "synth_seconds": round(time.perf_counter() - t0, 1)})
        r["logic"] = r["lut4"] + 2 * r["ccu2c"]
        if a.sim:
            from sim.engine_run import run_engine_simulation
            s = run_engine_simulation(opened, "verilator", work / f"sim_{kind}", kind, timing_only=True)
            r.update({"sim_passed": s.passed, "sim_cycles": s.cycles, "sim_periods": s.periods,
                      "model_cycles_3": s.model_cycles, "model_periods": s.model_periods})
        if a.fmax:
            f = fmax(LayerEngine(plan_engine(opts, dp, kind)), work / f"pnr_{kind}", f"harness_{kind}", a.seeds, a.pnr_timeout,
                     a.target)
            r["fmax_report"] = f
            r["fmax_seeds"] = [s["fmax_mhz"] for s in f["seeds"]]
            r["fmax"] = f["median_mhz"]
        period = r["sim_periods"][0] if a.sim and r.get("sim_periods") else perf.period
        r["period"] = period
        r["macs_per_dsp_cycle"] = perf.macs / (period * max(r["dsps"], 1))
        if r.get("fmax"):
            r["gops_per_dsp"] = 2 * perf.macs * r["fmax"] * 1e6 / period / max(r["dsps"], 1) / 1e9
        rows[kind] = r
    (work / "engine_bench.json").write_text(json.dumps({"options": opts.to_json(), "rows": rows}, indent=1))
    print(table(opts, rows))
    for kind, r in rows.items():
        rep = r.get("fmax_report", {})
        if rep.get("floorplan"):
            u = rep["unconstrained"]
            print(f"  {kind} {rep['floorplan']} (that run, seed 1: {u['fmax_mhz']} MHz, {u['seconds']:.0f} s)")
        for s in rep.get("seeds", []):
            cp = s.get("critical_path")
            if cp:
                print(f"  {kind} seed {s['seed']} ({s['fmax_mhz']} MHz, {s['seconds']:.0f} s): "
                      f"{CriticalPath(**cp).line()}")
    return 0


def table(opts, rows) -> str:
    w, d = rows.get("winograd", {}), rows.get("direct", {})
    lines = [f"engine bench  {opts.name}  (ECP5, logic = LUT4 + 2 x CCU2C; equal throughput: same schedule, "
             "PK x PC x |y||g| MACs per cycle)",
             f"{'':<28}{'winograd':>12}{'direct':>12}{'ratio':>8}"]

    def row(label, key, fmt="{:>12}"):
        a, b = w.get(key), d.get(key)
        ratio = f"{a / b:>8.2f}" if isinstance(a, (int, float)) and isinstance(b, (int, float)) and b else f"{'-':>8}"
        fa = fmt.format(a) if a is not None else f"{'-':>12}"
        fb = fmt.format(b) if b is not None else f"{'-':>12}"
        lines.append(f"  {label:<26}{fa}{fb}{ratio}")
    row("multipliers", "multipliers")
    row("DSP (MULT18X18D)", "dsps")
    row("logic (LUT4 + 2 CCU2C)", "logic")
    row("  LUT4", "lut4")
    row("  CCU2C", "ccu2c")
    row("FFs", "ffs")
    row("BRAM (DP16KD)", "bram")
    row("LUT RAM (DPR16X4)", "lutram")
    row("ideal cycles", "ideal")
    row("model cycles (alone)", "model_cycles")
    row("model period (back to back)", "model_period")
    row("period used", "period")
    row("MACs / DSP / cycle", "macs_per_dsp_cycle", "{:>12.2f}")
    row("Fmax MHz (median of seeds)", "fmax", "{:>12.1f}")
    row("GOPS / DSP", "gops_per_dsp", "{:>12.3f}")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
