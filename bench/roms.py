"""Calibration of weight ROMs: where Yosys puts a read-only memory and the logic it takes, beside the planner.

A network's engines hold their weights from generation (no loader: the write port is idle), so Yosys sees
each weight memory as a ROM, which ``memory_libmap`` may lower to logic at a cost of 1/16 a bit: on ECP5 that
ties with LUT RAM and with a DP16KD filled to 2,048 bits, and a tie goes to logic. For each shape (the
engines' weight memories: ResNet-8's first layer 32 x 72, direct 1x1 layers 64 x 8 .. 256 x 8, and larger),
one ROM of seeded random int8 words read synchronously into a register, as :mod:`hdl.engine.weights` builds
it, mapped by the project's flow (:func:`synth.yosys.synthesise`):

* ``mapped``: block RAM, LUT RAM cells and logic (the family's count) as Yosys put it;
* ``plan``: :func:`winohdl.network.budget.memory_placed` of the same :class:`~winohdl.network.budget.Memory`
  (``rom=True``), the planner's verdict.

    .venv/bin/python bench/roms.py [--family ecp5|xilinx] [--shapes 256x8,64x8] [-o build/bench/roms.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from amaranth.hdl import Module, unsigned  # noqa: E402
from amaranth.lib import wiring  # noqa: E402
from amaranth.lib.memory import Memory as AmaranthMemory  # noqa: E402
from amaranth.lib.wiring import In, Out  # noqa: E402

from hdl.verilog import to_verilog  # noqa: E402
from synth.yosys import synthesise  # noqa: E402
from winohdl.core.device import FAMILY_DEVICES  # noqa: E402
from winohdl.network.budget import Memory, memory_placed  # noqa: E402

SHAPES = ((32, 72), (64, 8), (128, 8), (256, 8), (256, 16), (512, 8), (256, 72), (1024, 8))


class Rom(wiring.Component):
    """One ROM of ``depth`` x ``width`` (seeded random contents) read into a register, as the engines read
    their weights."""

    def __init__(self, depth: int, width: int, seed: int = 1):
        self._init = np.random.default_rng(seed).integers(0, 1 << width, depth, dtype=np.uint64).tolist() \
            if width < 64 else [int.from_bytes(np.random.default_rng(seed + i).bytes(width // 8 + 1), "little")
                                % (1 << width) for i in range(depth)]
        self._depth, self._width = depth, width
        super().__init__({"addr": In(range(depth)), "q": Out(unsigned(width))})

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = AmaranthMemory(shape=unsigned(self._width), depth=self._depth, init=self._init)
        rp = mem.read_port(transparent_for=())
        m.d.comb += rp.addr.eq(self.addr)
        m.d.sync += self.q.eq(rp.data)
        return m


def mapped(depth: int, width: int, family: str, work: Path) -> dict:
    """Where ``family``'s flow puts the ROM: block RAM, LUT RAM cells and logic (the family's count)."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "top.v").write_text(to_verilog(Rom(depth, width), "top"))
    r = synthesise(work / "top.v", "top", family, work)
    dev = FAMILY_DEVICES[family]
    return {"bram": dev.bram_count(r.cells), "lutram": r.kind("lutram"), "logic": dev.logic_count(r.cells)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", default="ecp5", choices=("ecp5", "xilinx"))
    ap.add_argument("--shapes", default=None, help="comma list of DEPTHxWIDTH (default: the engines')")
    ap.add_argument("-o", type=Path, default=ROOT / "build/bench/roms.json")
    args = ap.parse_args(argv)
    shapes = SHAPES if args.shapes is None else tuple(tuple(int(x) for x in s.split("x"))
                                                      for s in args.shapes.split(","))
    dev = FAMILY_DEVICES[args.family]
    rows = []
    print(f"{'shape':>9} {'bits':>6} | {'mapped: bram':>12} {'LUT RAM':>7} {'logic':>6} | {'plan: bram':>10} {'logic':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for depth, width in shapes:
            got = mapped(depth, width, args.family, Path(tmp) / f"{depth}x{width}")
            plan = memory_placed(Memory(1, depth, width, rom=True), dev)
            rows.append({"depth": depth, "width": width, "mapped": got, "plan": {"bram": plan.bram, "logic": plan.logic}})
            print(f"{depth:>4} x {width:<3} {depth * width:>6} | {got['bram']:>12} {got['lutram']:>7} {got['logic']:>6} | "
                  f"{plan.bram:>10} {plan.logic:>6}")
    args.o.parent.mkdir(parents=True, exist_ok=True)
    args.o.write_text(json.dumps({"family": args.family, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
