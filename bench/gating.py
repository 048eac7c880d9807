"""Zero-operand gating benchmark: the MNIST (and digits) CNN built with and without ``--gating zero-operand``,
toggle counts on Verilator, the share of zero operands, and the cells Yosys maps.

    .venv/bin/python bench/gating.py [--examples mnist,digits] [--images 200] [--synth] [--threads 1]
                                     [-o build/bench/gating.json]

Per example (trained dense as its train.py does, seeded, one thread unless --threads): the network planned,
quantised on 256 training images and built as ``winohdl network`` builds it (the Python API), once as
planned and once with every engine gated (hdl/engine/gating.py: a multiplier whose data operand is zero
keeps its operand registers, the product taken as zero). The first --images held-out images stream through
both on Verilator built with --coverage-toggle (sim/toggles.py), every logit checked against the integer
model; per engine the toggles of its multipliers' operand registers (data and weight), of its products
(the product and its registers), and of everything in the engine, gated against plain; and from the
integer model the share of the engine's products whose data operand is zero (zero_operands.py: direct, or
in the Winograd domain for a Winograd engine). ``--synth``: both networks mapped by Yosys for ECP5 (logic
and flip-flops, no place and route). A toggle is the open flow's proxy for dynamic power, not a power
figure: every bit counts the same, whatever its load. Writes the rows to ``-o``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402

from example_scripts import load  # noqa: E402
from pruning import _stamp  # noqa: E402

# the engines' signals, as hdl/engine/engine.py and hdl/engine/gating.py name them
DATA_OPERANDS = r"\.(v|x)\d+_\d+$"
WEIGHT_OPERANDS = r"\.(u_q\d+_\d+(_f\d+)?|p\d+_\d+_\d+_w)$"
PRODUCTS = r"\.p\d+_\d+_\d+(_d\d+|_\d+_\d+(_shift|_d\d+)?|_sum\d+_\d+|_bal_d\d+)?$"


def engines(toggles) -> dict:
    """``{engine instance: {what: toggles}}`` of one simulation (:class:`sim.toggles.Toggles`)."""
    import re
    names = sorted({m.group(1) for n, _ in toggles.counts if (m := re.match(r"^(network\.s\d+_\w+?_engine)\.", n))})
    out = {}
    for e in names:
        esc = re.escape(e)
        out[e] = {"data": toggles.matching(f"^{esc}{DATA_OPERANDS}"), "weights": toggles.matching(f"^{esc}{WEIGHT_OPERANDS}"),
                  "products": toggles.matching(f"^{esc}{PRODUCTS}"), "engine": toggles.matching(f"^{esc}\\.")}
    return out


def build(graph, plans, cal: Path, folder: Path, gating: str):
    from winohdl.network import api
    return api.build(api.quantise(api.decide(graph, plans, gating), cal), folder, plans)


def zero_shares(net, test_x) -> dict:
    """``{layer: share of its engine's products with a zero data operand}`` (integer model, every image given)."""
    from winohdl.network.integer_model import quantise_input
    from winohdl.network.zero_operands import zero_operands
    from winohdl.network.decision import EngineDecision
    kinds = {n.name: n.decision.kind.value for n in net.graph.nodes if isinstance(n.decision, EngineDecision)}
    out = {}
    for z in zero_operands(net.qnet, quantise_input(net.qnet, test_x)):
        side = z.winograd if kinds.get(z.layer) == "winograd" else z.direct
        out[z.layer] = (kinds.get(z.layer), None if side is None else round(side.percent(side.activation), 2))
    return out


def synth(net) -> dict:
    """Yosys's ECP5 mapping of the network (no place and route)."""
    from synth.families import FAMILY_SPECS
    from synth.yosys import synthesise
    from winohdl.network.hardware import TOP
    work = net.folder / "synth"
    work.mkdir(exist_ok=True)
    r = synthesise(net.folder / "network.v", TOP, "ecp5", work)
    return {"logic": r.logic, "ffs": r.ffs, "dsps": r.dsps, "brams": FAMILY_SPECS["ecp5"].device.bram_count(r.cells)}


def bench(name: str, example, images: int, do_synth: bool, work: Path) -> list[dict]:
    from winohdl.network import api
    prune_mod = example["_prune"]
    ex = example[name]
    t0 = time.monotonic()
    model, split = prune_mod.dense(None, ex)
    print(f"\n{name} CNN: trained dense in {time.monotonic() - t0:.1f} s; {min(images, len(split[2]))} held-out images")
    cal = work / f"{name}_calibration.npy"
    work.mkdir(parents=True, exist_ok=True)
    np.save(cal, split[0][:ex.train.CALIBRATION_IMAGES])
    graph = api.import_model(model, (1,) + split[2].shape[1:])
    plans = api.plan(graph)
    runs = {}
    for gating in ("none", "zero-operand"):
        net = build(graph, plans, cal, work / f"{name}_{gating}", gating)
        onnx, (r,) = api.simulate(net, ["verilator"], split[2][:images], toggles=True)
        print(f"  gating {gating:<12} {r.line()}; onnxruntime {'equal' if not onnx else 'MISMATCH'}")
        runs[gating] = (net, r, not onnx and r.passed, synth(net) if do_synth else None)
    shares = zero_shares(runs["none"][0], split[2][:images])
    plain, gated = (engines(runs[g][1].toggles) for g in ("none", "zero-operand"))
    rows = []
    print(f"  {'engine':<34} {'kind':<9} {'zero %':>6} {'data':>10} {'weights':>10} {'products':>11} {'engine':>11}")
    for e in plain:
        layer = e.split(".", 1)[1].split("_", 1)[1].rsplit("_engine", 1)[0]
        kind, share = shares.get(layer, (None, None))
        row = {"example": name, "engine": e.split(".", 1)[1], "layer": layer, "kind": kind, "zero_operands_pct": share,
               "images": runs["none"][1].checked, **{f"{k}_plain": v for k, v in plain[e].items()},
               **{f"{k}_gated": v for k, v in gated[e].items()}}
        rows.append(row)
        cells = " ".join(f"{gated[e][k] / max(plain[e][k], 1):>10.3f}x" for k in ("data", "weights", "products", "engine"))
        print(f"  {row['engine']:<34} {kind or '-':<9} {share if share is not None else '-':>6} {cells}")
    total = {g: runs[g][1].toggles.total for g in runs}
    rows.append({"example": name, "engine": "whole network", "images": runs["none"][1].checked,
                 "engine_plain": total["none"], "engine_gated": total["zero-operand"],
                 "bit_exact": all(runs[g][2] for g in runs), "cycles_plain": runs["none"][1].cycles,
                 "cycles_gated": runs["zero-operand"][1].cycles,
                 **({f"{k}_{'plain' if g == 'none' else 'gated'}": v for g in runs for k, v in runs[g][3].items()}
                    if do_synth else {})})
    print(f"  whole network: {total['zero-operand'] / total['none']:.3f}x the toggles; cycles "
          f"{runs['none'][1].cycles} and {runs['zero-operand'][1].cycles}; bit-exact both: {rows[-1]['bit_exact']}")
    if do_synth:
        print(f"  Yosys ECP5: plain {runs['none'][3]}, gated {runs['zero-operand'][3]}")
    return [{**r, **_stamp()} for r in rows]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", default="mnist")
    ap.add_argument("--images", type=int, default=200)
    ap.add_argument("--synth", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("-o", default=str(ROOT / "build" / "bench" / "gating.json"))
    a = ap.parse_args(argv)
    import torch
    torch.set_num_threads(a.threads)
    os.environ.setdefault("OMP_NUM_THREADS", str(a.threads))
    mnist = load("winohdl_examples_mnist_prune", "examples/mnist/prune.py")
    example = {"digits": mnist.digits_prune.DIGITS, "mnist": mnist.MNIST, "_prune": mnist.digits_prune}
    work = Path(a.o).parent / "gating"
    rows = [r for name in a.examples.split(",") for r in bench(name, example, a.images, a.synth, work)]
    Path(a.o).parent.mkdir(parents=True, exist_ok=True)
    Path(a.o).write_text(json.dumps({"rows": rows}, indent=1) + "\n")
    print(f"\nrows: {a.o}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
