"""Whole-network benchmark: each network planned twice on a part (every algorithm, and direct engines
only), the frames per second of both, the Winograd plan's speed-up at equal DSP blocks (planned again
within the direct plan's DSP blocks) and the DSP blocks it needs for the direct plan's frames, all with every
multiplier in a DSP block; then both planned for the whole part (multipliers in the fabric too where the DSP
blocks bind, the planner's default); with ``--fmax``, the digits network (trained first with
examples/digits/train.py) generated, synthesised and placed on ECP5 (median of ``--seeds``), its frames
per second at that Fmax beside the direct-only plan's at the same clock; with ``--map``, networks built as
``winohdl network`` plans them for ``--part`` and mapped by Yosys for the part's family, the post-synthesis
check on the mapped netlist, and the resources beside a published design on the same part (xc7: no open
place and route, so no Fmax: the frames per second are the plan's at ``--clock``, labelled as planned).

    .venv/bin/python bench/network.py [--networks digits,resnet8,resnet18,vgg16,dscnn,mobilenet] [--part LFE5U-85F]
                                      [--clock MHz] [--fmax [--seeds 3]] [--quantise resnet18]
                                      [--map resnet8 [--images 1]] [-o build/bench/network.json]
    .venv/bin/python bench/network.py --part xc7z020 --clock 143 --networks resnet8 --map resnet8

The plans take seconds to minutes each (ResNet-8 derives F(4x4,3x3) s2 and F(6x6,3x3): about 3
minutes on 2 cores); --fmax and --map take tens of minutes.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from winohdl.core.errors import WinohdlError  # noqa: E402
from winohdl.network.budget import DEFAULT_CLOCK_MHZ, Budget, device, parse_clock  # noqa: E402
from winohdl.network.load import load_model  # noqa: E402
from winohdl.network.plan import PlanMode, plan_both, plan_network  # noqa: E402

NETWORKS = {"digits": ("examples/digits/model.py:digits_cnn", (1, 1, 8, 8)),
            "resnet8": ("examples/resnet8/model.py:resnet8", (1, 3, 32, 32)),
            "resnet18": ("examples/resnet18/model.py:resnet18", (1, 3, 224, 224)),
            "dscnn": ("examples/dscnn/model.py:dscnn", (1, 1, 49, 10)),
            "mobilenet": ("examples/mobilenet/model.py:mobilenet_v1", (1, 3, 96, 96)),
            "vgg16": ("examples/vgg16/model.py:vgg16", (1, 3, 224, 224))}


PEERS = {("resnet8", "XC7Z020"): {
    "design": "fpgaConvNet, MLPerf Tiny v1.1 closed, ZedBoard (XC7Z020), INT8", "dsps": 211, "bram36": 93,
    "fmax_mhz": 143.0, "fps": 2431.4, "source": "mlcommons tiny_results_v1.1, closed/fpgaconvnet"}}
"""Published figures of designs on the same part, printed beside ours (theirs are measured on the board)."""


def plan_row(name: str, part, clock: float = DEFAULT_CLOCK_MHZ) -> dict:
    model, shape = NETWORKS[name]
    t0 = time.perf_counter()
    graph = load_model(str(ROOT / model), shape)
    budget = Budget.of(part)
    # the DSP trade: every multiplier in a DSP block, both plans
    plans = plan_both(graph, part, budget, clock, name, fabric=False)
    w, d = plans.winograd, plans.direct
    equal = None
    if d.fits:   # the Winograd plan within the direct plan's DSP blocks
        equal = plan_network(graph, part, Budget(d.totals["dsp"], budget.bram, budget.logic), clock, fabric=False)
    # the whole part: multipliers in the fabric too where a resource binds (the planner's default)
    fw = plan_network(graph, part, budget, clock)
    fd = plan_network(graph, part, budget, clock, PlanMode.DIRECT)
    row = {"network": name, "seconds": round(time.perf_counter() - t0, 1), "fits": w.fits,
           "winograd_fps": w.fps if w.fits else None, "winograd_dsp": w.totals["dsp"],
           "winograd_bram": w.totals["bram"], "direct_fps": d.fps if d.fits else None,
           "direct_dsp": d.totals["dsp"], "direct_bram": d.totals["bram"], "verdict": w.verdict,
           "matched_dsp": None if plans.matched is None else plans.matched["dsp"]}
    row.update({"fabric_fps": fw.fps if fw.fits else None, "fabric_cycles": fw.cycles, "fabric_dsp": fw.totals["dsp"],
                "fabric_bram": fw.totals["bram"], "fabric_logic": fw.totals["logic"],
                "fabric_multipliers": sum(x.decision.fabric_lanes * x.multipliers // x.decision.parallel_out
                                          for x in fw.layers),
                "fabric_direct_fps": fd.fps if fd.fits else None, "winograd_logic": w.totals["logic"],
                "fabric_layers": [{"node": x.node, "algorithm": x.algorithm, "pk": x.decision.parallel_out,
                                   "pc": x.decision.parallel_in, "fabric_lanes": x.decision.fabric_lanes,
                                   "cycles": x.cycles, "dsp": x.dsp, "bram": x.bram, "logic": x.logic}
                                  for x in fw.layers]})
    row["speedup"] = w.fps / d.fps if w.fits and d.fits else None
    row["equal_dsp_fps"] = equal.fps if equal is not None and equal.fits else None
    row["equal_dsp_used"] = equal.totals["dsp"] if equal is not None else None
    row["equal_dsp_speedup"] = row["equal_dsp_fps"] / d.fps if row["equal_dsp_fps"] else None
    return row


def quantise_row(name: str, images: int = 2) -> dict:
    """The network quantised end to end on seeded random images, and onnxruntime's disagreements with the
    integer model on them (ResNet-18: its 7x7 global average folded into the linear layer)."""
    from winohdl.network.calibration import random_calibration
    from winohdl.network.onnx_export import check_onnxruntime
    from winohdl.network.quant import quantise_network
    model, shape = NETWORKS[name]
    t0 = time.perf_counter()
    graph = load_model(str(ROOT / model), shape)
    x = random_calibration(graph, count=images)
    qnet = quantise_network(graph, x, f"{images} seeded random images")
    return {"network": name, "images": images, "mismatches": check_onnxruntime(qnet, x),
            "float32_problems": len(qnet.float32_problems()), "kinds": sorted({q.kind.value for q in qnet.layers}),
            "seconds": round(time.perf_counter() - t0, 1)}


def fmax_row(seeds: int, work: Path) -> dict:
    """The digits network as ``winohdl network`` builds it (planned for the part) measured on ECP5."""
    from winohdl.cli import main as cli
    data = ROOT / "build" / "digits"
    if not (data / "digits_cnn.pt").exists():
        raise SystemExit("train the digits CNN first: python examples/digits/train.py")
    out = work / "digits_fmax"
    code = cli(["network", "--model", str(ROOT / NETWORKS["digits"][0]), "--input-shape", "1x1x8x8", "--weights",
                str(data / "digits_cnn.pt"), "--calibration", str(data / "test_images.npy"), "--family", "ecp5",
                "--seeds", str(seeds), "-o", str(out), "--quiet"])
    found = sorted(out.glob("synth/*/synth.json"))
    if code != 0 or not found:
        raise SystemExit(f"winohdl network --family ecp5 failed (exit {code})")
    return json.loads(found[-1].read_text())[0]


def map_row(name: str, part, clock: float, images: int, seeds: int, work: Path) -> dict:
    """``name`` as ``winohdl network --part P --family F --clock C --verify`` builds it: Yosys's cells, the
    post-synthesis check of the mapped netlist on ``images`` images (Verilator), and the figures beside a
    published design on the part (:data:`PEERS`)."""
    from winohdl.cli import main as cli
    model, shape = NETWORKS[name]
    out = work / f"{name}_{part.part.lower()}"
    t0 = time.perf_counter()
    code = cli(["network", "--model", str(ROOT / model), "--input-shape", "x".join(map(str, shape)), "--part",
                part.part, "--family", part.family, "--clock", f"{clock:g}", "--seeds", str(seeds), "--verify",
                "--verify-sim", "verilator", "--images", str(images), "-o", str(out), "--quiet"])
    found = sorted(out.glob("synth/*/synth.json"))
    if code not in (0, 1) or not found:
        raise SystemExit(f"winohdl network --part {part.part} --family {part.family} failed (exit {code})")
    s = json.loads(found[-1].read_text())[0]
    return {"network": name, "part": part.part, **s, "postsynth": "PASS" if code == 0 else "FAIL",
            "images": images, "seconds": round(time.perf_counter() - t0, 1), "peer": PEERS.get((name, part.part))}


def print_map(r: dict) -> None:
    cells = ", ".join(f"{n} {c}" for c, n in r["bram_cells"].items())
    fps = (f"{r['fps']:,.1f} frames/s at the median Fmax {r['fmax']['median_mhz']:.1f} MHz" if r["fmax"]["placed"]
           else f"planned {r['planned_fps']:,.1f} frames/s at {r['planned_mhz']:g} MHz (no Fmax: {r['fmax']['reason']})")
    print(f"{r['network']} mapped for {r['part']} ({r['family']}): DSP {r['dsps']}, block RAM {r['brams']} ({cells}; "
          f"{r['brams'] / 2:g} BRAM36 where the unit is RAMB18E1), logic {r['logic']:,} ({r['logic_formula']}), "
          f"FF {r['ffs']:,}; {'fits' if r['fits'] else 'does not fit'} the part; post-synthesis check "
          f"{r['postsynth']} on {r['images']} image(s); {fps}; {r['seconds']} s")
    p = r.get("peer")
    if p:
        print(f"  beside {p['design']}: {p['dsps']} DSP48E1, {p['bram36']} BRAM36, {p['fmax_mhz']:g} MHz, "
              f"{p['fps']:,.1f} frames/s (measured; {p['source']})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--networks", default="digits,resnet8")
    ap.add_argument("--part", default="LFE5U-85F", help="a part of the device table (LFE5U-85F, XC7Z020, ...)")
    ap.add_argument("--clock", default=DEFAULT_CLOCK_MHZ, help="MHz the plans are quoted at")
    ap.add_argument("--fmax", action="store_true")
    ap.add_argument("--map", default="", help="comma list of networks built for --part and mapped by Yosys for "
                    "its family, with the post-synthesis check (e.g. resnet8)")
    ap.add_argument("--images", type=int, default=1, help="images the post-synthesis check of --map streams")
    ap.add_argument("--quantise", default="", help="comma list of networks quantised end to end and checked "
                    "against onnxruntime on 2 images (e.g. resnet18)")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("-o", default="build/bench/network.json")
    a = ap.parse_args(argv)
    try:
        part, a.clock = device(a.part), parse_clock(a.clock)
    except WinohdlError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rows = [plan_row(n.strip(), part, a.clock) for n in filter(None, a.networks.split(","))]
    f = lambda v, spec: "-" if v is None else format(v, spec)  # noqa: E731
    print(f"plans on {part.part} at {a.clock:g} MHz (the planner's cycle model)")
    print(f"{'network':<10} {'winograd fps':>14} {'DSP':>5} {'direct fps':>12} {'DSP':>5} {'speed-up':>9} "
          f"{'at direct DSP: fps':>19} {'DSP':>5} {'speed-up':>9} {'DSP at direct fps':>18} {'seconds':>8}")
    for r in rows:
        print(f"{r['network']:<10} {f(r['winograd_fps'], ',.1f'):>14} {r['winograd_dsp']:>5} "
              f"{f(r['direct_fps'], ',.1f'):>12} {r['direct_dsp']:>5} {f(r['speedup'], '.2f'):>9} "
              f"{f(r['equal_dsp_fps'], ',.1f'):>19} {f(r['equal_dsp_used'], 'd'):>5} "
              f"{f(r['equal_dsp_speedup'], '.2f'):>9} {f(r['matched_dsp'], 'd'):>18} {r['seconds']:>8}")
        if not r["fits"]:
            print(f"  {r['network']}: {r['verdict']}")
    print(f"with multipliers in the fabric where a resource binds (the planner's default; above: DSP blocks only)")
    print(f"{'network':<10} {'winograd fps':>14} {'DSP':>5} {'DP16KD':>7} {'logic':>8} {'fabric mults':>13} "
          f"{'direct fps':>12} {'DSP only: fps':>14} {'logic':>8}")
    for r in rows:
        print(f"{r['network']:<10} {f(r['fabric_fps'], ',.1f'):>14} {r['fabric_dsp']:>5} {r['fabric_bram']:>7} "
              f"{r['fabric_logic']:>8,} {r['fabric_multipliers']:>13} {f(r['fabric_direct_fps'], ',.1f'):>12} "
              f"{f(r['winograd_fps'], ',.1f'):>14} {r['winograd_logic']:>8,}")
    result = {"device": part.part, "clock_mhz": a.clock, "plans": rows}
    for name in filter(None, a.quantise.split(",")):
        q = quantise_row(name.strip())
        result.setdefault("quantised", []).append(q)
        print(f"{name}: quantised end to end ({', '.join(q['kinds'])}); onnxruntime against the integer model "
              f"on {q['images']} images: {len(q['mismatches'])} mismatches; layers whose partial sums may pass "
              f"2**24: {q['float32_problems']} ({q['seconds']} s)")
    if a.fmax:
        s = fmax_row(a.seeds, Path(a.o).parent)
        result["digits_synth"] = s
        print(f"digits on ECP5 (as planned): {s['fmax']['median_mhz']} MHz median of {len(s['fmax']['seeds'])} "
              f"seeds, {s['fps']:,.0f} frames/s; DSP {s['dsps']}, block RAM {s['brams']}, logic {s['logic']}, "
              f"FF {s['ffs']}")
    for name in filter(None, a.map.split(",")):
        m = map_row(name.strip(), part, a.clock, a.images, a.seeds, Path(a.o).parent)
        result.setdefault("mapped", []).append(m)
        print_map(m)
    Path(a.o).parent.mkdir(parents=True, exist_ok=True)
    Path(a.o).write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {a.o}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
