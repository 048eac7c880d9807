"""A Winograd engine's memories either way: where its transformed tiles go (block RAM forced, or where
Yosys's costs put them), and what its weight memories hold (u, or the kernels g transformed as read).

ResNet-8 planned for a part (multipliers in the fabric where DSP blocks bind, the planner's default; the
lazy cards not derived), each layer's algorithm, where its serial B^T's transformed tiles go
(:class:`hdl.engine.modes.TileMemory`) and what its weights store (:class:`hdl.engine.modes.WeightStore`);
then one engine of that plan (``--node``) built both ways of ``--vary`` and mapped by Yosys (synth_ecp5):
DP16KD and TRELLIS_DPR16X4 beside the plan's DP16KD for each.

    .venv/bin/python bench/tile_memory.py [--vary tiles|weights] [--node convolution_1] [--part LFE5U-85F]
                                          [-o build/bench/tile_memory.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from amaranth.back import verilog  # noqa: E402

from hdl.engine.engine import LayerEngine  # noqa: E402
from hdl.engine.modes import TileMemory, WeightStore  # noqa: E402
from hdl.engine.plan import plan_engine  # noqa: E402
from synth.yosys import synthesise  # noqa: E402
from winohdl.network.budget import DEFAULT_CLOCK_MHZ, Budget, device, memory_cost  # noqa: E402
from winohdl.network.candidates import datapath, engine_memories  # noqa: E402
from winohdl.network.decision import EngineDecision  # noqa: E402
from winohdl.network.load import load_model  # noqa: E402
from winohdl.network.plan import PlanMode, plan_network  # noqa: E402
from winohdl.network.shortcut import engine_plan  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from network import NETWORKS  # noqa: E402


def plan_row(plan) -> dict:
    """The plan's figures and, per convolution, its algorithm and where its transformed tiles go."""
    layers = {x.node: {"algorithm": x.algorithm, "tiles": x.decision.options.tile_memory.value
                       if engine_plan(x.decision).input_passes else None,   # None: no transformed tiles
                       "weights": "u" if x.decision.geometry and not x.decision.stores_kernels else "g"}
              for x in plan.layers if isinstance(x.decision, EngineDecision)}
    return {"fps": plan.fps, "cycles": max(x.cycles for x in plan.layers), **plan.totals,
            "winograd": [n for n, v in layers.items() if v["algorithm"] != "direct"], "layers": layers}


VARY = {"tiles": [{"tile_memory": t} for t in TileMemory],
        "weights": [{"weight_store": WeightStore.TRANSFORMED, "kernel_transform": "offline"},
                    {"weight_store": WeightStore.KERNELS, "kernel_transform": "hw"}]}
"""The engines ``--vary`` builds: the node's decision with each of these options."""


def mapped(decision: EngineDecision, part, change: dict, workdir: Path) -> dict:
    """One engine of ``decision`` with the options ``change``, mapped by Yosys: the plan's DP16KD beside it."""
    o = replace(decision.options, **change)
    plan = plan_engine(o, datapath(o.geometry, o.data_width, o.kernel_width, o.data_values), decision.kind)
    (workdir / "eng.v").write_text(verilog.convert(LayerEngine(plan), name="eng", emit_src=False))
    t0 = time.perf_counter()
    r = synthesise(workdir / "eng.v", "eng", "ecp5", workdir)
    bram = memory_cost(engine_memories(plan, preloaded=False), part).bram     # a loader writes its weights
    return {"tiles": o.tile_memory.value, "weights": "g" if plan.reads_kernels else "u", "plan_bram": bram,
            "DP16KD": r.cells.get("DP16KD", 0), "TRELLIS_DPR16X4": r.cells.get("TRELLIS_DPR16X4", 0),
            "MULT18X18D": r.cells.get("MULT18X18D", 0), "logic": r.logic, "seconds": round(time.perf_counter() - t0, 1)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vary", default="tiles", choices=sorted(VARY))
    ap.add_argument("--node", default="convolution_1")
    ap.add_argument("--part", default="LFE5U-85F")
    ap.add_argument("-o", default="build/bench/tile_memory.json")
    args = ap.parse_args(argv)
    part = device(args.part)
    model, shape = NETWORKS["resnet8"]
    plan = plan_network(load_model(str(ROOT / model), shape), part, Budget.of(part), DEFAULT_CLOCK_MHZ,
                        PlanMode.WINOGRAD, derive=False)
    row = plan_row(plan)
    print(f"resnet8 on {plan.device}: {row['fps']:,.1f} frames/s ({row['cycles']:,} cycles), DSP {row['dsp']}, "
          f"DP16KD {row['bram']}, logic {row['logic']:,}; Winograd: {', '.join(row['winograd']) or 'none'}")
    for n, v in row["layers"].items():
        print(f"  {n:<15} {v['algorithm']:<20} tiles: {v['tiles'] or '-':<5} weights: {v['weights']}")
    decision = next(x.decision for x in plan.layers if x.node == args.node)
    maps = []
    with tempfile.TemporaryDirectory() as t:
        for i, change in enumerate(VARY[args.vary]):
            (Path(t) / str(i)).mkdir()
            maps.append(mapped(decision, part, change, Path(t) / str(i)))
            m = maps[-1]
            print(f"{args.node} tiles {m['tiles']}, weights {m['weights']}: plan {m['plan_bram']} DP16KD, Yosys {m['DP16KD']} DP16KD "
                  f"{m['TRELLIS_DPR16X4']} TRELLIS_DPR16X4 {m['MULT18X18D']} MULT18X18D, logic {m['logic']:,}")
    out = Path(args.o)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"plan": row, "node": args.node, "vary": args.vary, "options": decision.options.to_json(),
                               "mapped": maps}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
