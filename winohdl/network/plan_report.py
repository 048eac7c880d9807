"""The plan as people read it: a per-layer table for each plan (plan.txt) and a plot of both (plan.svg)."""

from __future__ import annotations

import io

from winohdl.core.device import PARTS

from .budget import RESOURCES, UNBOUNDED
from .plan import NetworkPlan, Plans

HEADER = ("node", "operator", "shape", "algorithm", "buffer", "PK/PC", "cycles", "DSP", "BRAM", "logic", "FF", "density",
          "")


def density(x) -> str:
    """A layer's weight density as plan.txt shows it: ``100%`` dense, ``-`` without weights or not counted."""
    d = x.density
    return "-" if d is None else f"{100 * d:.0f}%" if d in (0, 1) else f"{100 * d:.1f}%"


def _rows(plan: NetworkPlan) -> list[tuple[str, ...]]:
    rows = [HEADER]
    for x in plan.layers:
        mark = "<- bottleneck" if x.node == plan.bottleneck else ""
        d = x.decision
        # "4f2/1": PK 4, the last 2 of them multiplying in the fabric
        fabric = f"f{d.fabric_lanes}" if d.fabric_lanes else ""
        buffer = d.buffering + (" g" if getattr(d, "stores_kernels", False) else "")   # the kernels stored
        rows.append((x.node, x.operator, x.shape, x.algorithm, buffer, f"{d.parallel_out}{fabric}/{d.parallel_in}",
                     f"{x.cycles:,}",
                     f"{x.dsp:,}", f"{x.bram:,}", f"{x.logic:,}", f"{x.ff:,}", density(x), mark))
    use = plan.totals
    counted = [x for x in plan.layers if x.density is not None]
    total = (f"{100 * sum(x.nonzeros for x in counted) / sum(x.weights for x in counted):.1f}%"
             if counted and sum(x.weights for x in counted) else "")
    rows.append(("total", "", "", "", "", "", f"{plan.cycles:,}", f"{use['dsp']:,}", f"{use['bram']:,}",
                 f"{use['logic']:,}", f"{use['ff']:,}", total, ""))
    ff = "-" if plan.budget.ff == UNBOUNDED else f"{plan.budget.ff:,}"
    rows.append(("budget", "", "", "", "", "", "", f"{plan.budget.dsp:,}", f"{plan.budget.bram:,}",
                 f"{plan.budget.logic:,}", ff, "", ""))
    return rows


def table(plan: NetworkPlan) -> str:
    """One plan: the per-layer table, totals against the budget, frames per second, the verdict."""
    rows = _rows(plan)
    widths = [max(len(r[c]) for r in rows) for c in range(len(HEADER))]
    right = {6, 7, 8, 9, 10, 11}
    lines = ["  ".join(v.rjust(w) if c in right else v.ljust(w) for c, (v, w) in enumerate(zip(r, widths))).rstrip()
             for r in rows]
    fps = f"{plan.fps:,.1f} frames/s at {plan.clock_mhz:g} MHz ({plan.cycles:,} cycles a frame)"
    return "\n".join([f"plan       {plan.mode.value} ({'every algorithm' if plan.mode.value == 'winograd' else 'direct engines only'}) on {plan.device}",
                      *lines, f"fps        {fps}", f"verdict    {plan.verdict}",
                      *(f"note       {n}" for n in plan.notes)])


def text(plans: Plans) -> str:
    """plan.txt: both plans' tables, how they compare, the rules behind the figures."""
    w, d = plans.winograd, plans.direct
    parts = [table(w), "", table(d), ""]
    if w.fits and d.fits:
        parts.append(f"compare    winograd {w.fps:,.1f} frames/s with {w.totals['dsp']:,} DSP; direct "
                     f"{d.fps:,.1f} frames/s with {d.totals['dsp']:,} DSP ({w.fps / d.fps:.2f}x the frames per second)")
    if plans.matched is not None:
        m = plans.matched
        over = [f"{r} over the budget's {w.budget.get(r):,}" for r in RESOURCES if m[r] > w.budget.get(r)]
        parts.append(f"compare    at the direct plan's {d.fps:,.1f} frames/s the Winograd algorithms need {m['dsp']:,} DSP "
                     f"({m['dsp'] / max(1, d.totals['dsp']):.2f}x its {d.totals['dsp']:,}), {m['bram']:,} BRAM and "
                     f"{m['logic']:,} logic (per node the fewest DSP blocks within {d.cycles:,} cycles"
                     + "".join(f"; {o}" for o in over) + ")")
    parts += [_rules(w.device), f"planned    in {plans.seconds:.1f} s"]
    return "\n".join(parts) + "\n"


def _rules(part: str) -> str:
    """How the figures are counted on ``part`` (the ECP5 words for a part the table does not name)."""
    p = PARTS.get(part, PARTS["LFE5U-85F"])
    xc7 = p.family == "xilinx"
    bram = "whole RAMB18E1 halves per memory (a RAMB36E1 counts 2)" if xc7 else f"whole {p.bram.cell} per memory"
    logic = ("LUT6 by the LUT4 + 2 x CCU2C model calibrated on the measured ECP5 engines" if xc7 else
             "LUT4 + 2 x CCU2C, a model calibrated on the measured engines")
    return ("rules      cycles: each engine's EnginePlan.performance.period (frames back to back; paced_period where "
            "another engine feeds it at the network's pace), or its raster-order "
            f"output's beats where more; a frame takes the slowest node's; DSP: {p.dsp.cell} per multiplier at its "
            f"operand widths (PK 4f2: the last 2 output lanes' multipliers in the fabric, counted in logic by "
            f"{'no rule: never planned on this part' if p.fabric is None else 'the rule of the device table, fitted on Yosys mappings'}); BRAM: {bram} (LUT RAM where Yosys would put it; an add's shortcut FIFO as deep as its "
            f"branches need at the plan's period, winohdl/network/shortcut.py); logic: {logic} "
            "(winohdl/network/cells.py); FF: flip-flops, a model from each node's logic and DSP blocks fitted "
            "on Yosys mappings (winohdl/network/cells.py); ReLU, clamps, flatten and the input take no hardware; density: the "
            "share of a layer's weights that are not zero (a pruned network's); a convolution's kernels that are "
            "all zero (a grouped layer expanded dense, a pruned one) cost no cycle, multiplier or weight word "
            "where a whole block of PK x PC of them or a lane is zero (the engines skip them), other zeros are "
            "still stored and multiplied")


def svg(plans: Plans) -> str:
    """plan.svg: per-layer cycles of both plans (the bottleneck sets the frame) and each plan's use of the
    budget (matplotlib, Agg backend; no date in the file, so the same plan gives the same bytes)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    w, d = plans.winograd, plans.direct
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(max(8.0, 0.35 * len(w.layers) + 3), 8.0))
    xs = range(len(w.layers))
    top.bar([x - 0.2 for x in xs], [x.cycles for x in w.layers], 0.4, label=f"winograd ({w.fps:,.0f} frames/s)")
    top.bar([x + 0.2 for x in xs], [d.layer(x.node).cycles for x in w.layers], 0.4,
            label=f"direct only ({d.fps:,.0f} frames/s)")
    top.set_xticks(list(xs), [x.node for x in w.layers], rotation=70, fontsize=7)
    top.set_yscale("log")
    top.set_ylabel("cycles per frame")
    top.set_title(f"{plans.network or 'network'} on {w.device} at {w.clock_mhz:g} MHz")
    top.legend(fontsize=8)
    shown = [r for r in RESOURCES if w.budget.get(r) != UNBOUNDED]
    names = [f"{r} (budget {w.budget.get(r):,})" for r in shown]
    for i, (plan, label) in enumerate(((w, "winograd"), (d, "direct only"))):
        use = [100.0 * plan.totals[r] / max(1, plan.budget.get(r)) for r in shown]
        bottom.bar([x + (i - 0.5) * 0.4 for x in range(len(shown))], use, 0.4, label=label)
    bottom.axhline(100.0, color="black", linewidth=0.8)
    bottom.set_xticks(range(len(shown)), names)
    bottom.set_ylabel("% of the budget")
    bottom.legend(fontsize=8)
    fig.tight_layout()
    out = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "winohdl"}):
        fig.savefig(out, format="svg", metadata={"Date": None})
    plt.close(fig)
    return out.getvalue()
