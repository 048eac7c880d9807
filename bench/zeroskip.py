"""Engines for kernels known to be zero (hdl/engine/sparsity.py) beside the dense engine of the same layer.

For each layer (a depthwise 3x3 convolution expanded dense, and a block-sparse dense one) and each
parallelism, both engines (Winograd F(2x2,3x3) and direct) as planned: multipliers, the walker's issues
per tile, cycles of one frame alone and back to back (the performance model, which the Icarus and
Verilator runs of tests/test_engine_sim.py match cycle for cycle), weight-memory bits; with ``--synth``
the MULT18X18D, DP16KD and logic (LUT4 + 2 x CCU2C) Yosys maps (synth_ecp5; minutes for the larger rows).

    .venv/bin/python bench/zeroskip.py [--synth] [--work build/bench/zeroskip]

writes ``zeroskip.json`` (the rows) into ``--work``.

What it leaves out: Fmax (the tables, the walker's block table, are registered as the dense walker's
counters; no place and route here), and zeros inside a kernel (only whole kernels are skipped).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hdl.engine.design import engine_datapath  # noqa: E402
from hdl.engine.engine import LayerEngine  # noqa: E402
from hdl.engine.options import EngineOptions  # noqa: E402
from hdl.engine.plan import plan_engine  # noqa: E402
from hdl.engine.sparsity import KernelMask, WordMask  # noqa: E402
from hdl.verilog import to_verilog  # noqa: E402
from winohdl.network.cells import engine_logic  # noqa: E402
from miner.constructive import constructive_card  # noqa: E402
from winohdl.core.geometry import Geometry  # noqa: E402

G = Geometry.parse("2x2", "3x3", "1", "1")


def layers() -> list[tuple[str, EngineOptions]]:
    """(name, options) of each measured layer: depthwise C = K = 16 and a quarter-dense block pattern."""
    rng = np.random.default_rng(0)
    blocks = rng.random((4, 4)) < 0.25                 # 16 x 16 channels in blocks of 4 x 4
    blocks[:, 0] |= ~blocks.any(axis=1)                # every output group keeps a block
    sparse = KernelMask.from_array(np.kron(blocks, np.ones((4, 4), bool)))
    out = []
    for p in (1, 2, 4):
        out.append((f"depthwise 16ch P={p}", EngineOptions(G, 16, 16, (16, 16), (1, 1), p, p, pipeline="deep",
                                                           kernel_mask=KernelMask.depthwise(16, 16))))
    out.append(("4x4 blocks, 25%", EngineOptions(G, 16, 16, (16, 16), (1, 1), 4, 4, pipeline="deep",
                                                 kernel_mask=sparse)))
    # U pruned balanced in the Winograd domain: each (input channel, position) keeps 4 of its 16 outputs
    words = np.zeros((16, 16, 16), bool)
    for c in range(16):
        for r in range(16):
            words[rng.choice(16, 4, replace=False), c, r] = True
    for pk, pc, fold in ((16, 1, 1), (16, 2, 1), (16, 1, 4)):     # fold 4: a multiplier serves 4 positions
        out.append((f"U 25% balanced PK={pk} PC={pc}" + (f" F={fold}" if fold > 1 else ""),
                    EngineOptions(G, 16, 16, (16, 16), (1, 1), pk, pc, pipeline="deep", input_transform="parallel",
                                  word_mask=WordMask.from_array(words), word_fold=fold)))
    return out


def row(name: str, opts: EngineOptions, kind: str, synth_dir: Path | None) -> dict:
    """One engine's figures (the model's; Yosys's cells with ``synth_dir``)."""
    dp = engine_datapath(constructive_card(G), opts) if kind == "winograd" else None
    if opts.word_mask is not None and kind == "direct":
        return None                      # no spatial kernel to build direct
    plan = plan_engine(opts, dp, kind)
    perf = plan.performance
    wbits = sum(m.bits for m in plan.memories if m.name == "weights")
    out = {"layer": name, "engine": kind, "masked": opts.skips, "multipliers": plan.multipliers,
           "issues_per_tile": opts.issues_per_tile, "cycles": perf.cycles, "period": perf.period,
           "weight_bits": wbits, "plan_logic": engine_logic(plan)}
    if synth_dir is not None:
        from synth.yosys import synthesise
        top = f"{kind}_{'mask' if opts.kernel_mask else 'dense'}_{opts.PK}_{abs(hash(name)) % 10000}"
        v = synth_dir / f"{top}.v"
        synth_dir.mkdir(parents=True, exist_ok=True)
        v.write_text(to_verilog(LayerEngine(plan, weights=_words_weights(opts, plan, dp)), top))
        r = synthesise(v, top, "ecp5", synth_dir / top, netlist=False)
        out.update(mult18=r.cells.get("MULT18X18D", 0), dp16kd=r.cells.get("DP16KD", 0),
                   logic=r.cells.get("LUT4", 0) + 2 * r.cells.get("CCU2C", 0))
    return out


def _words_weights(opts: EngineOptions, plan, dp):
    """A word-sparse engine's fixed weights (random words s_r x an integer inside its mask), else None."""
    if opts.word_mask is None:
        return None
    from winohdl.core.words import pack
    from winohdl.network.winograd_weights import row_scales
    rng, scales = np.random.default_rng(1), row_scales(dp.scaled)
    a = opts.word_mask.array()
    return [pack([scales[r] * int(rng.integers(-60, 61)) * int(a[k, c, r]) for r in range(dp.rank)], plan.w_width)
            for k in range(opts.K) for c in range(opts.C)]


def line(r: dict) -> str:
    cells = f" {r['mult18']:>6} {r['dp16kd']:>6} {r['logic']:>7}" if "mult18" in r else ""
    return (f"{r['layer']:<20} {r['engine']:<8} {'masked' if r['masked'] else 'dense':<6} {r['multipliers']:>5} "
            f"{r['issues_per_tile']:>6} {r['cycles']:>7} {r['period']:>7} {r['weight_bits']:>8} {r['plan_logic']:>7}{cells}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--synth", action="store_true", help="also synthesise each engine with Yosys (synth_ecp5)")
    ap.add_argument("--work", type=Path, default=ROOT / "build" / "bench" / "zeroskip")
    ap.add_argument("--only", default="", help="only the layers whose name holds this text")
    a = ap.parse_args(argv)
    head = (f"{'layer':<20} {'engine':<8} {'':<6} {'mult':>5} {'issues':>6} {'cycles':>7} {'period':>7} "
            f"{'w bits':>8} {'planned':>7}" + (f" {'MULT':>6} {'DP16KD':>6} {'logic':>7}" if a.synth else ""))
    print(head)
    rows = []
    for name, opts in layers():
        for kind in ("winograd", "direct"):
            for o in (replace(opts, kernel_mask=None, word_mask=None, word_fold=1), opts):
                if a.only and a.only not in name:
                    continue
                r = row(name, o, kind, a.work if a.synth else None)
                if r is not None:
                    rows.append(r)
                    print(line(r), flush=True)
    print("issues: the walker's cycles per tile ((K/PK)(C/PC) dense); cycles: one frame alone; period: back to "
          "back (the performance model); w bits: weight memories; planned: the planner's logic (network/cells.engine_logic); "
          "logic: Yosys's LUT4 + 2 x CCU2C")
    a.work.mkdir(parents=True, exist_ok=True)
    (a.work / "zeroskip.json").write_text(json.dumps({"command": " ".join(["bench/zeroskip.py", *(argv or sys.argv[1:])]),
                                                      "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
