"""Shortcut FIFOs sized from the schedule (issue 45): a residual network built as planned, its images
streamed back to back (no gaps, no back-pressure) on Verilator with each add's FIFO at the planned
depth and at shallower or deeper ones, the measured period against the plan's, every image bit-exact.

    .venv/bin/python bench/shortcut.py [--network resnet8] [--mode winograd|direct] [--plan plan.json] [--images 8]
                                       [--variants planned,data,quarter,frame] [-o build/bench/shortcut.json]
    .venv/bin/python bench/shortcut.py --plans resnet8,resnet18 [-o build/bench/shortcut_plans.json]

``--plans``: no simulation; each network planned (LFE5U-85F, both plans) and per add its FIFO as a whole
frame (before) and as sized (the rule's terms), the block RAM of each and the plan's totals (ResNet-18:
about 2 minutes a plan; it does not fit the part, so its plan is the cheapest assignment).

Variants: ``planned`` the depth the plan put on each add (:mod:`winohdl.network.shortcut`); ``data`` the
branches' data dependence alone (the dropped attempt of docs/history.md); ``no_delay`` and ``no_next``
the planned depth without one of its two other terms; ``quarter`` a quarter of the planned depth (below
the data dependence: it must stall); ``frame`` a whole frame (the hardware before).
The period is the distance between the last output beats of consecutive images; the steady state is
the mean of the last four. A run that stalls ends after ``--stall`` periods without an image out.
ResNet-8: about 2 minutes a variant on 2 cores (Verilog, Verilator's build, 8 images).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from winohdl.network import api  # noqa: E402
from winohdl.network.hardware import TOP, GeneratedNetwork, generate_network  # noqa: E402
from winohdl.network.integer_model import quantise_input, run_integer  # noqa: E402
from winohdl.network.plan import Plans  # noqa: E402
from winohdl.network.shortcut import graph_terms, shortcut_beats  # noqa: E402

NETWORKS = {"resnet8": ("examples/resnet8/model.py:resnet8", (1, 3, 32, 32)),
            "resnet18": ("examples/resnet18/model.py:resnet18", (1, 3, 224, 224))}


def depths(graph, plan, variant: str) -> dict:
    """Per add node its FIFO's beats in ``variant`` (module docstring)."""
    decisions = {x.node: x.decision for x in plan.layers}
    terms = graph_terms(graph, decisions, plan.cycles)
    out = {}
    for name, t in terms.items():
        n, d = graph.node(name), decisions[name]
        frame = math.prod(n.shape[1:]) // d.lanes
        beats = {"data": t.data, "no_delay": t.data + t.next_rows, "no_next": t.data + t.delay}
        out[name] = ({"planned": d.shortcut or frame, "frame": frame, "quarter": max(2, (d.shortcut or frame) // 4)}
                     .get(variant) or shortcut_beats(beats[variant], n.shape[1], d.lanes, math.prod(n.shape[2:])))
    return out


def run_variant(generated, graph, plan, variant: str, stimulus: dict, work: Path) -> dict:
    from hdl.design import ports_of
    from hdl.network.stages import AddStage
    from hdl.network.top import NetworkTop
    from hdl.verilog import to_verilog
    from sim.network_run import run_network_simulation
    want = depths(graph, plan, variant)
    stages = tuple(replace(s, shortcut_depth=want[s.name]) if isinstance(s, AddStage) else s for s in generated.stages)
    t0 = time.perf_counter()
    top = NetworkTop(stages)
    net = GeneratedNetwork(stages, to_verilog(top, TOP), top.logit_width, ports_of(top.signature, clocked=True))
    folder = work / variant
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "network.v").write_text(net.verilog)
    verilog_s = time.perf_counter() - t0
    r = run_network_simulation(folder / "network.v", TOP, stimulus, "verilator", folder / "sim")
    t = r.image_cycles
    gaps = [b - a for a, b in zip(t, t[1:])]
    steady = (t[-1] - t[-5]) / 4 if len(t) >= 5 else None
    return {"variant": variant, "depths": want, "passed": r.passed, "checked": r.checked, "images": r.images,
            "image_cycles": t, "intervals": gaps, "period": steady, "plan_period": plan.cycles,
            "message": r.message, "verilog_s": round(verilog_s, 1), "build_s": round(r.build_seconds, 1),
            "sim_s": round(r.seconds, 1)}


def plan_rows(name: str) -> list[dict]:
    """Per plan of ``name`` and per add: the FIFO and its block RAM as a whole frame and as sized."""
    from winohdl.core.device import PARTS
    from winohdl.network.budget import Memory, memory_cost
    model, shape = NETWORKS[name]
    graph = api.import_model(str(ROOT / model), shape)
    plans = api.plan(graph, name=name)
    rows = []
    for mode, plan in (("winograd", plans.winograd), ("direct", plans.direct)):
        terms = graph_terms(graph, {x.node: x.decision for x in plan.layers}, plan.cycles)
        adds, whole = [], 0
        for x in plan.layers:
            if x.operator != "add":
                continue
            n, lanes, t = graph.node(x.node), x.decision.lanes, terms[x.node]
            frame = math.prod(n.shape[1:]) // lanes
            frame_bram = memory_cost([Memory(1, frame, 8 * lanes)], PARTS[plan.device]).bram
            whole += frame_bram
            adds.append({"add": x.node, "shape": x.shape, "frame_beats": frame, "frame_bram": frame_bram,
                         "beats": x.decision.shortcut or frame, "bram": x.bram,
                         "share": round((x.decision.shortcut or frame) / frame, 3),
                         "terms": None if t is None else {"data": t.data, "delay": t.delay, "next_rows": t.next_rows}})
        sized = sum(a["bram"] for a in adds)
        rows.append({"network": name, "plan": mode, "fits": plan.fits, "cycles": plan.cycles,
                     "plan_bram": plan.totals["bram"], "plan_bram_whole_frames": plan.totals["bram"] - sized + whole,
                     "adds_bram": sized, "adds_bram_whole_frames": whole, "adds": adds})
        print(f"{name} {mode:<8} fits {plan.fits}  {plan.cycles:,} cycles  block RAM {plan.totals['bram']:,} "
              f"(whole frames: {plan.totals['bram'] - sized + whole:,}); adds {sized} (whole frames {whole})", flush=True)
        for a in adds:
            print(f"    {a['add']:<8} {a['shape']:<14} FIFO {a['beats']:>7,} of {a['frame_beats']:>7,} beats "
                  f"({a['share']:.1%})  DP16KD {a['bram']:>3} (whole frame {a['frame_bram']})  {a['terms']}", flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--network", default="resnet8", choices=sorted(NETWORKS))
    ap.add_argument("--mode", default="winograd", choices=("winograd", "direct"))
    ap.add_argument("--images", type=int, default=8)
    ap.add_argument("--plan", help="a plan.json (winograd --budget ...): its --mode plan instead of the default plan")
    ap.add_argument("--variants", default="planned,data,quarter")
    ap.add_argument("--stall", type=float, default=3.0, help="periods without an image out that end a run")
    ap.add_argument("-o", default="build/bench/shortcut.json")
    ap.add_argument("--plans", default="", help="comma list of networks: their plans' FIFOs only (no simulation)")
    args = ap.parse_args(argv)
    if args.plans:
        rows = [r for name in args.plans.split(",") for r in plan_rows(name)]
        Path(args.o).parent.mkdir(parents=True, exist_ok=True)
        Path(args.o).write_text(json.dumps({"rows": rows}, indent=1) + "\n")
        return 0
    model, shape = NETWORKS[args.network]
    work = Path(args.o).parent / f"shortcut_{args.network}_{args.mode}"
    graph = api.import_model(str(ROOT / model), shape)
    plans = Plans.from_json(Path(args.plan).read_text()) if args.plan else api.plan(graph, name=args.network)
    plan = plans.winograd if args.mode == "winograd" else plans.direct
    quantised = api.quantise(api.decide(graph, plan))
    generated = generate_network(quantised.qnet)
    x, _ = api.images(quantised.qnet.graph, args.images)
    q = quantise_input(quantised.qnet, x)
    stimulus = generated.stimulus(q, run_integer(quantised.qnet, q)[quantised.qnet.outputs[0]], gaps=0.0,
                                  backpressure=0.0)
    # a stall: no image out within the first image's latency and a few periods (not the default's millions)
    stimulus["stall_cycles"] = int(args.stall * plan.cycles) + 4 * plan.cycles
    rows = []
    for v in args.variants.split(","):
        row = run_variant(generated, graph, plan, v, stimulus, work)
        rows.append(row)
        period = "-" if row["period"] is None else f"{row['period']:,.1f}"
        print(f"{args.network} {args.mode:<8} {v:<8} FIFOs {row['depths']}  {row['checked']}/{row['images']} "
              f"{'PASS' if row['passed'] else 'FAIL'}  period {period} (plan {plan.cycles:,})  "
              f"intervals {row['intervals']}  {row['message']}", flush=True)
    out = {"network": args.network, "mode": args.mode, "plan_cycles": plan.cycles,
           "plan_bram": plan.totals["bram"], "rows": rows}
    Path(args.o).parent.mkdir(parents=True, exist_ok=True)
    Path(args.o).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
