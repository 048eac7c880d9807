"""Pruning benchmark: the digits and MNIST CNNs trained dense, pruned (spatial magnitude, 2:4, Winograd domain),
retrained under their masks; accuracy, products per frame counted from the weights, zero operands, Verilator.

    .venv/bin/python bench/pruning.py [--examples digits,mnist] [--fractions 0,0.5,0.8,0.9,0.95] [--retrain N]
                                      [--sim 1000 [--synth] [--networks ...] [--pnr-timeout 1800]]
                                      [--hardware] [--threads 1] [-o build/bench/pruning.json]

Per example (examples/digits, examples/mnist: trained dense as their train.py does, one thread unless
--threads, seeded) and per fraction pruned (0: the dense network retrained as long, the baseline), the
rows: magnitude over the whole network and per layer, in the spatial domain and in the Winograd domain
(every 3x3 stride-1 convolution a WinogradConv2d of F(2x2,3x3), its U = G g trained and pruned:
winohdl/network/winograd_layer.py; the linear layer stays spatial and is pruned with it), and at 50%
2:4 along input channels in both domains (the first convolution, one input
channel, stays dense). Each row: the share of that domain's weights removed, the held-out float accuracy
right after pruning and after retraining (examples/digits/prune.py), the int8 accuracy of the retrained
network quantised (the integer model; in the Winograd domain its layers quantised as Winograd-domain
convolutions, U int8 per output channel: winohdl/network/winograd_tiles.py), and the products per frame an engine that skips zero weights would make, counted from
the weights (winograd_layer.multiplications: non-zero spatial weights x output positions for direct
engines; non-zero U x tiles for F(2x2,3x3) engines, U = G g of a spatial kernel; the linear layer its
non-zeros), as a share of the dense direct network's.

Zero operands (winohdl/network/zero_operands.py) of the dense and the 90% global networks (spatial and
Winograd domain; the latter has no direct products), per
convolution: the share of products with a zero activation (and with a zero activation or weight),
direct and in the Winograd domain, from the integer model on every held-out image.

``--hardware``: each row's network planned on LFE5U-85F (the Winograd plan, and for a spatial model the
direct-only plan): frames per second, multipliers, multiplier-cycles per frame, DP16KD and logic, as planned.

``--sim N``: the dense and the 90% global networks (spatial and Winograd domain: its layers Winograd
engines of their card reading the trained U), and the 80% balanced Winograd-domain one (its layers
word-sparse engines where the plan takes them), of each example planned, quantised (calibrated on
256 training images) and built as ``winohdl network`` builds them (the Python API), and the first N
held-out images streamed through network.v on Verilator, every logit checked against the integer model
(``--synth``: and each mapped by Yosys for ECP5 and placed by nextpnr, 3 seeds of at most
``--pnr-timeout`` seconds each); ``--networks global,global-winograd`` picks among dense, global,
global-winograd and balanced.
Every row is stamped (date, commit, machine). Writes the rows to ``-o`` and the zero operands beside it
(``pruning_zeros.json``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from example_scripts import load  # noqa: E402
from winohdl.network import prune as P  # noqa: E402

MACHINE = "shared 2-core machine (loaded)"
SPATIAL, WINOGRAD = P.Domain.SPATIAL, P.Domain.WINOGRAD
SIM_FRACTION = 0.9
BALANCED_SIM = 0.8      # the balanced Winograd-domain network simulated (and synthesised) beside them
# --networks' names for the networks --sim streams
SIM_NETWORKS = {"dense": "dense", "global": "90% global", "global-winograd": "90% global, Winograd domain",
                "balanced": "80% balanced, Winograd domain"}


def _load(name: str, path: str):
    return load(name, path)


def examples() -> dict:
    """name -> examples/digits/prune.py's Example (the MNIST one from examples/mnist/prune.py)."""
    mnist = _load("winohdl_examples_mnist_prune", "examples/mnist/prune.py")
    return {"digits": mnist.digits_prune.DIGITS, "mnist": mnist.MNIST, "_prune": mnist.digits_prune}


def rules(fractions: list[float]) -> list[tuple[float, P.Pruning]]:
    """(fraction asked, rule) for every row (see the module docstring)."""
    out = []
    for f in fractions:
        if f == 0:
            out += [(f, P.Pruning(P.Method.MAGNITUDE_GLOBAL, 0.0, domain=d)) for d in (SPATIAL, WINOGRAD)]
            continue
        out += [(f, P.Pruning(method, f, domain=d)) for d in (SPATIAL, WINOGRAD)
                for method in (P.Method.MAGNITUDE_GLOBAL, P.Method.MAGNITUDE_LAYER)]
        out.append((f, P.Pruning(P.Method.MAGNITUDE_BALANCED, f, domain=WINOGRAD)))
        if f == 0.5:
            out += [(f, P.Pruning(P.Method.NM, n=2, m=4, domain=d)) for d in (SPATIAL, WINOGRAD)]
    return out


def _stamp() -> dict:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "commit": commit, "machine": f"{MACHINE}, load {os.getloadavg()[0]:.1f}"}


def label(fraction: float, pruning: P.Pruning) -> str:
    if fraction == 0:
        return "dense"
    return {"magnitude-global": "magnitude, global", "magnitude-layer": "magnitude, per layer",
            "magnitude-balanced": "magnitude, balanced", "n:m": "2:4"}[pruning.method.value]


def products(model, input_shape) -> dict:
    """Products per frame counted from ``model``'s weights: direct (None with a Winograd-domain layer) and
    Winograd."""
    from winohdl.network.winograd_layer import multiplications
    rows = multiplications(model, input_shape)
    direct = None if any(r.direct is None for r in rows) else sum(r.direct for r in rows)
    return {"direct": direct, "winograd": sum(r.winograd for r in rows)}


def hardware(model, input_shape, domain: P.Domain) -> dict:
    """The planner's hardware for ``model`` on LFE5U-85F (its default budget): per plan (Winograd, and direct
    for a spatial model), frames per second at the plan's clock, multipliers, multiplier-cycles per frame
    (each node's multipliers x its cycles per frame, summed: the work its engines do, idle issues included),
    DP16KD, logic. The engines skip whole zero kernels (hdl/engine/sparsity.py), not zero words inside one."""
    from winohdl.network import api
    graph = api.import_model(model, input_shape)
    plans = api.plan(graph)
    out = {"smallest": smallest(graph)}
    if domain is P.Domain.SPATIAL:
        out["smallest direct"] = smallest(graph, direct=True)
        # direct convolution is the F(1x1) card (U = g, V the window's taps): as a Winograd-domain layer its
        # zero weights are zero words, which word-sparse engines skip: the pruned direct network's hardware
        from winohdl.network.winograd_layer import to_winograd
        out["smallest direct, zeros skipped"] = smallest(api.import_model(to_winograd(model, 1), input_shape))
    for name, plan in (("winograd", plans.winograd), ("direct", plans.direct)):
        if name == "direct" and domain is P.Domain.WINOGRAD:
            continue                   # a Winograd-domain layer has no spatial kernel to build direct
        t = plan.totals
        out[name] = {"fps": round(plan.fps, 1), "cycles": plan.cycles, "multipliers": sum(x.multipliers for x in plan.layers),
                     "mult_cycles": sum(x.multipliers * x.cycles for x in plan.layers), "dsp": t["dsp"],
                     "bram": t["bram"], "logic": t["logic"]}
    return out


def smallest(graph, direct: bool = False) -> dict:
    """The smallest hardware (winohdl.network.passes.decide_smallest: PK = PC = 1, F(2x2,3x3) or the layer's own
    card, a Winograd-domain layer with zero words a word-sparse engine of one output group), or every
    convolution a direct engine at PK = PC = 1: multipliers, cycles a frame (the slowest engine's), multiplier-
    cycles a frame (each engine's multipliers x its cycles a frame, the linear unit's likewise: dense, a
    multiplier an output over every weight; pruned, its multipliers walking the non-zero ones), and the
    weight memories' bits."""
    from dataclasses import replace as with_
    from hdl.engine.plan import plan_engine
    from winohdl.network.candidates import datapath
    from winohdl.network.decision import EngineDecision, engine_decision, linear_cycles
    from winohdl.network.passes import decide_smallest
    decided, shapes = decide_smallest(graph), {n.name: n.shape for n in graph.nodes}
    mult = cycles = work = bits = 0
    for n in decided.nodes:
        if n.kind.value == "linear":     # its multipliers (dense: one an output) x its cycles
            d = n.decision
            work += (d.multipliers or d.lanes) * linear_cycles(graph.weights[f"{n.name}.weight"], n.attrs, d)
        if not isinstance(n.decision, EngineDecision):
            continue
        o, kind = n.decision.options, n.decision.kind
        if direct:
            o = with_(engine_decision(n.attrs, shapes[n.inputs[0]], None, kernel_mask=o.kernel_mask).options,
                      data_width=o.data_width, kernel_width=o.kernel_width, data_values=o.data_values)
            kind = "direct"
        dp = None if kind == "direct" else datapath(o.geometry, o.data_width, o.kernel_width, o.data_values)
        plan = plan_engine(o, dp, kind)
        period = plan.performance.period
        mult, cycles, work = mult + plan.multipliers, max(cycles, period), work + plan.multipliers * period
        bits += plan.weight_memory().bits
    return {"multipliers": mult, "cycles": cycles, "mult_cycles": work, "weight_bits": bits}


def row(prune_mod, example, trained, split, fraction: float, pruning: P.Pruning, epochs: int,
        with_hardware: bool = False) -> tuple[dict, object]:
    t0 = time.monotonic()
    r = prune_mod.prune_and_retrain(trained, split, pruning, epochs, example)
    weights = P.torch_weights(r.model)              # every layer's, the dense ones (2:4's first) included
    kept = {k: np.count_nonzero(w) / w.size for k, w in weights.items()}
    total = sum(np.count_nonzero(w) for w in weights.values()) / sum(w.size for w in weights.values())
    shape = (1,) + split[2].shape[1:]
    asked = round(100 * fraction, 2)
    out = {"example": example.name, "fraction": int(asked) if asked == int(asked) else asked, "method": label(fraction, pruning),
           "domain": pruning.domain.value, "removed": round(100 * (1 - total), 2),
           "pruned_float": round(100 * r.pruned_float, 2), "retrained_float": round(100 * r.retrained_float, 2),
           "int8": None if r.int8 is None else round(100 * r.int8, 2), "products": products(r.model, shape),
           "density": ", ".join(f"{k} {100 * d:.1f}%" for k, d in kept.items()),
           "seconds": round(time.monotonic() - t0, 1), **_stamp()}
    if with_hardware:
        out["hardware"] = hardware(r.model, shape, pruning.domain)
    return out, r.model


def _ratio(value, base) -> str:
    return "-" if value is None else f"{value / base:.3f}x"


def print_row(r: dict, base: int) -> None:
    p = r["products"]
    int8 = "-" if r["int8"] is None else f"{r['int8']:.2f}%"
    print(f"{r['fraction']:>5}% {r['method']:<21} {r['domain']:<9} {r['removed']:>7.2f}% {r['pruned_float']:>7.2f}% "
          f"{r['retrained_float']:>9.2f}% {int8:>7} {_ratio(p['direct'], base):>8} {_ratio(p['winograd'], base):>8} "
          f"{r['seconds']:>5.1f}  {r['density']}")
    for name, h in r.get("hardware", {}).items():
        if name.startswith("smallest"):
            print(f"{'':>7}{name + ':':<17} {h['multipliers']:>4} multipliers  {h['cycles']:>9,} cycles a frame  "
                  f"{h['mult_cycles']:>9,} multiplier-cycles a frame  {h['weight_bits']:>9,} weight bits")
            continue
        print(f"{'':>7}{name + ' plan:':<17} {h['fps']:>10,.1f} frames/s  {h['multipliers']:>4} multipliers  "
              f"{h['mult_cycles']:>9,} multiplier-cycles a frame  {h['bram']:>3} DP16KD  {h['logic']:>6,} logic")


def quantised(model, split, calibration: int):
    from winohdl.network.load import load_module
    from winohdl.network.quant import quantise_network
    graph = load_module(model, (1,) + split[2].shape[1:])
    return quantise_network(graph, split[0][:calibration], f"{calibration} training images")


def zeros(example, name: str, model, split, calibration: int) -> list[dict]:
    """The zero-operand rows of one network on every held-out image (printed too)."""
    from winohdl.network.integer_model import quantise_input
    from winohdl.network.zero_operands import text, zero_operands
    qnet = quantised(model, split, calibration)
    rows = zero_operands(qnet, quantise_input(qnet, split[2]))
    print(f"{example.name}, {name}: zero operands on {len(split[2])} held-out images (integer model)")
    print(text(rows), end="")
    return [{"example": example.name, "network": name, "layer": z.layer, "images": z.images,
             "direct_zero_activation": None if z.direct is None else round(z.direct.percent(z.direct.activation), 2),
             "direct_zero_either": None if z.direct is None else round(z.direct.percent(z.direct.either), 2),
             "winograd_zero_activation": None if z.winograd is None else round(z.winograd.percent(z.winograd.activation), 2),
             "winograd_zero_either": None if z.winograd is None else round(z.winograd.percent(z.winograd.either), 2),
             "direct_products": None if z.direct is None else z.direct.products // z.images,
             "winograd_products": None if z.winograd is None else z.winograd.products // z.images, **_stamp()}
            for z in rows]


def simulate(example, name: str, model, split, calibration: int, images: int, work: Path,
             pnr_timeout: float | None = None) -> dict:
    """The network planned, quantised and built as ``winohdl network`` does, ``images`` held-out images
    streamed through it on Verilator; ``pnr_timeout``: mapped by Yosys for ECP5 and placed by nextpnr (3
    seeds, each within that many seconds)."""
    from winohdl.network import api
    t0 = time.monotonic()
    work.mkdir(parents=True, exist_ok=True)
    slug = f"{example.name}_{'dense' if name == 'dense' else 'pruned'}"    # make: no spaces or % in paths
    slug += "_winograd" if "Winograd" in name else ""
    slug += "_balanced" if "balanced" in name else ""
    cal = work / f"{slug}_calibration.npy"
    np.save(cal, split[0][:calibration])
    graph = api.import_model(model, (1,) + split[2].shape[1:])
    plans = api.plan(graph)
    net = api.build(api.quantise(api.decide(graph, plans), cal), work / slug, plans)
    onnx, results = api.simulate(net, ["verilator"], split[2][:images])     # all there are, if fewer
    s = results[0]
    print(f"{example.name}, {name}: {s.line()}; onnxruntime {'equal' if not onnx else 'MISMATCH'}")
    out = {"example": example.name, "network": name, "images": s.images, "passed": s.passed and not onnx,
           "checked": s.checked, "cycles": s.cycles, "plan_cycles": plans.winograd.cycles,
           "dsp": plans.winograd.totals["dsp"], "seconds": round(time.monotonic() - t0, 1), **_stamp()}
    if pnr_timeout is not None:
        y = api.synthesise(net, "ecp5", 3, pnr_timeout)
        out["synth"] = {"dsps": y.dsps, "brams": y.brams, "logic": y.logic, "ffs": y.ffs, "fmax": y.fmax}
        print(f"  Yosys/nextpnr ECP5: {out['synth']}")
    return out


def bench(name: str, ex: dict, fractions, retrain, sim: int, work: Path,
          with_hardware: bool = False, pnr_timeout: float | None = None,
          networks: set[str] | None = None) -> tuple[list, list, list]:
    prune_mod, example = ex["_prune"], ex[name]
    epochs = example.retrain_epochs if retrain is None else retrain
    t0 = time.monotonic()
    trained, split = prune_mod.dense(None, example)
    base = products(trained, (1,) + split[2].shape[1:])["direct"]
    print(f"\n{name} CNN: dense {example.train.EPOCHS} epochs in {time.monotonic() - t0:.1f} s (seed "
          f"{example.train.SEED}); each row retrained {epochs} epochs under its masks; {len(split[2])} held-out "
          f"images; products per frame counted from the weights, as a share of the dense direct {base:,}")
    print(f"{'asked':>6} {'method':<21} {'domain':<9} {'removed':>8} {'pruned':>8} {'retrained':>10} {'int8':>7} "
          f"{'direct':>8} {'Winograd':>8} {'s':>5}  density per layer")
    rows, models = [], {}
    for fraction, pruning in rules(fractions):
        r, model = row(prune_mod, example, trained, split, fraction, pruning, epochs, with_hardware)
        rows.append(r)
        print_row(r, base)
        if pruning.method is P.Method.MAGNITUDE_GLOBAL:
            models[fraction, pruning.domain] = model
        if pruning.method is P.Method.MAGNITUDE_BALANCED and fraction == BALANCED_SIM:
            models["balanced"] = model
    cal = example.train.CALIBRATION_IMAGES
    picked = {k: v for k, v in (("dense", models.get((0, SPATIAL))), ("90% global", models.get((SIM_FRACTION, SPATIAL))),
                                ("90% global, Winograd domain", models.get((SIM_FRACTION, P.Domain.WINOGRAD))),
                                ("80% balanced, Winograd domain", models.get("balanced")))
              if v is not None and (networks is None or k in {SIM_NETWORKS[n] for n in networks})}
    zero_rows = [z for k, m in picked.items() for z in zeros(example, k, m, split, cal)]
    sims = [simulate(example, k, m, split, cal, sim, work, pnr_timeout) for k, m in picked.items()] if sim else []
    return rows, zero_rows, sims


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", default="digits,mnist")
    ap.add_argument("--fractions", default="0,0.5,0.8,0.9,0.95")
    ap.add_argument("--retrain", type=int, default=None, help="epochs under the masks (default each example's)")
    ap.add_argument("--sim", type=int, default=0, help="held-out images streamed through Verilator (default 0)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--hardware", action="store_true", help="each row planned on LFE5U-85F (Winograd and direct)")
    ap.add_argument("--synth", action="store_true", help="with --sim: the simulated networks on ECP5 (Yosys, nextpnr)")
    ap.add_argument("--pnr-timeout", type=float, default=1800.0, help="seconds a nextpnr seed (default 1800)")
    ap.add_argument("--networks", default=None,
                    help=f"with --sim: which of {', '.join(SIM_NETWORKS)} (default all)")
    ap.add_argument("-o", default="build/bench/pruning.json")
    a = ap.parse_args(argv)
    ex = examples()
    names = a.examples.split(",")
    try:
        fractions = [float(f) for f in a.fractions.split(",")]
        rules(fractions)
        networks = None if a.networks is None else set(a.networks.split(","))
        if not set(names) <= {"digits", "mnist"} or a.sim < 0 or not 1 <= a.threads <= 64:
            raise ValueError("--examples takes digits and mnist, --sim >= 0, --threads 1 to 64")
        if networks is not None and not networks <= SIM_NETWORKS.keys() or not a.pnr_timeout > 0:
            raise ValueError(f"--networks takes {', '.join(SIM_NETWORKS)}; --pnr-timeout > 0")
    except (ValueError, P.WinohdlError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    import torch
    torch.set_num_threads(a.threads)
    t0 = time.monotonic()
    out = Path(a.o)
    rows, zero_rows, sims = [], [], []
    for name in names:
        r, z, s = bench(name, ex, fractions, a.retrain, a.sim, out.parent / "pruning_networks", a.hardware,
                        a.pnr_timeout if a.synth else None, networks)
        rows, zero_rows, sims = rows + r, zero_rows + z, sims + s
    result = {"what": "the digits and MNIST CNNs pruned and retrained under their masks: held-out accuracy and "
                      "products per frame counted from the weights (bench/pruning.py)",
              "threads": a.threads, "rows": rows, "sim": sims}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    zeros_out = out.with_name("pruning_zeros.json")
    zeros_out.write_text(json.dumps({"what": "zero operands per convolution, direct and Winograd domain, from the "
                                             "integer model on the held-out images (bench/pruning.py)",
                                     "rows": zero_rows}, indent=1) + "\n")
    print(f"in all {time.monotonic() - t0:.1f} s; wrote {out} and {zeros_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
