"""Where a network plan's block RAM goes, memory by memory.

Each network planned for a part (``--mode winograd`` every algorithm, or ``direct``; every multiplier in a
DSP block, the lazy cards not derived), then every memory of each convolution as the planner counts it
(:func:`winohdl.network.candidates.conv_memories`): copies x depth x width, where it goes (block RAM or LUT
RAM, by the device table's costs), the blocks it takes and the share of their bits it fills. The other
nodes' block RAM is their plan's figure. A summary per kind of memory closes each table.

    .venv/bin/python bench/memories.py [--networks mobilenet,resnet8] [--mode direct] [--part LFE5U-85F]
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from winohdl.network.budget import DEFAULT_CLOCK_MHZ, Budget, device, memory_placed  # noqa: E402
from winohdl.network.candidates import conv_memories  # noqa: E402
from winohdl.network.decision import EngineDecision  # noqa: E402
from winohdl.network.load import load_model  # noqa: E402
from winohdl.network.plan import PlanMode, plan_network  # noqa: E402
from winohdl.network.shortcut import engine_plan  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from network import NETWORKS  # noqa: E402


def kind(name: str) -> str:
    """The memory's kind for the summary (a feature-map bank whatever its reads)."""
    return name.split(" (")[0]


def rows(plan, part) -> list[dict]:
    """One row per memory of every convolution of ``plan``; one per other node with block RAM."""
    out = []
    for x in plan.layers:
        if not isinstance(x.decision, EngineDecision):
            if x.bram:
                out.append({"node": x.node, "memory": x.algorithm, "copies": None, "depth": None, "width": None,
                            "bram": x.bram, "logic": None, "fill": None})
            continue
        for m in conv_memories(engine_plan(x.decision)):
            cost = memory_placed(m, part)
            fill = m.copies * m.depth * m.width / (cost.bram * part.bram.bits) if cost.bram else None
            out.append({"node": x.node, "memory": m.name, "copies": m.copies, "depth": m.depth, "width": m.width,
                        "bram": cost.bram, "logic": cost.logic, "fill": fill})
    return out


def show(name: str, plan, table: list[dict]) -> None:
    print(f"\n{name}: {plan.mode.value} plan on {plan.device}, {plan.totals['bram']} block RAM "
          f"of {plan.budget.bram} ({'fits' if plan.fits else 'does not fit'}), {plan.fps:,.1f} frames/s")
    print(f"{'node':<15} {'memory':<32} {'copies':>6} {'depth x width':>14} {'BRAM':>5} {'LUT':>6} {'fill':>5}")
    for r in table:
        shape = f"{r['depth']} x {r['width']}" if r["depth"] else ""
        fill = f"{r['fill']:.2f}" if r["fill"] is not None else ""
        print(f"{r['node']:<15} {r['memory']:<32} {r['copies'] or '':>6} {shape:>14} {r['bram']:>5} "
              f"{r['logic'] if r['logic'] is not None else '':>6} {fill:>5}")
    by = defaultdict(lambda: [0, 0])
    for r in table:
        by[kind(r["memory"])][0] += r["bram"]
        by[kind(r["memory"])][1] += r["logic"] or 0
    print("by kind: " + "; ".join(f"{k} {b} BRAM, {lg:,} LUT" for k, (b, lg) in sorted(by.items(), key=lambda kv: -kv[1][0])))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--networks", default="mobilenet,resnet8")
    ap.add_argument("--mode", default="winograd", choices=[m.value for m in PlanMode])
    ap.add_argument("--part", default="LFE5U-85F")
    args = ap.parse_args(argv)
    part = device(args.part)
    for name in args.networks.split(","):
        model, shape = NETWORKS[name]
        graph = load_model(str(ROOT / model), shape)
        plan = plan_network(graph, part, Budget.of(part), DEFAULT_CLOCK_MHZ, PlanMode(args.mode), derive=False,
                            fabric=False)
        show(name, plan, rows(plan, part))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
