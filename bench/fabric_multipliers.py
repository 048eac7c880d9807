"""Calibration of the fabric multiplier's logic: real Yosys mappings on ECP5, and the planner's rule beside them.

For each signed operand pair (the engines' widths: direct 8x8, F(2x2,3x3) 10x8 .. 10x12, F(2x4,3x3)
12x11 .. 13x12, F(4x4,3x3) 14x13 .. 15x12, and squares), a module of one multiplication with
registered operands and the engine's three product registers, mapped by the project's ECP5 flow
(:data:`synth.yosys.SYNTH_SCRIPT`):

* ``fabric``: :func:`hdl.fabric.fabric_product` (radix-4 Booth, registered tree), the multiplier the
  engines build in the fabric, at the full product width; its MULT18X18D count must be 0;
* ``yosys -nodsp``: the same registers around ``a * b`` mapped with ``synth_ecp5 -nodsp`` (Yosys's own
  LUT multiplier), for reference;
* ``rule``: :func:`winohdl.core.device.FabricMultiplier.logic`, the planner's count (fitted on this
  table, recorded in docs/benchmarks.md).

Logic is LUT4 + 2 x CCU2C; flip-flops are listed apart (the planner counts LUTs, and the product
registers are there with a DSP block too). Takes about 2 s a mapping.

    .venv/bin/python bench/fabric_multipliers.py [--pairs 8x8,10x12] [-o build/bench/fabric_multipliers.json]
    .venv/bin/python bench/fabric_multipliers.py --fmax 16x10x12 [--seeds 3]   (place and route: minutes)

``--tree every-second-level``: the fabric products' trees registered every second level
(:class:`hdl.options.FabricTree`): the mappings' flip-flops show what that saves; with --fmax, the fabric
array alone (a DSP block has no tree).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from amaranth.hdl import Module, Signal, signed  # noqa: E402
from amaranth.lib import data, wiring  # noqa: E402
from amaranth.lib.wiring import In, Out  # noqa: E402

from hdl.components import DEEP_PRODUCT_REGISTERS, emit_product  # noqa: E402
from hdl.fabric import fabric_bits, fabric_product  # noqa: E402
from hdl.options import FabricTree, MultiplierKind  # noqa: E402
from hdl.pipeline import delay  # noqa: E402
from hdl.verilog import to_verilog  # noqa: E402
from synth.yosys import SYNTH_SCRIPT, parse_stat, run_synth_script  # noqa: E402
from winohdl.core.device import FAMILY_DEVICES  # noqa: E402

PAIRS = ((4, 4), (6, 6), (8, 8), (9, 9), (8, 10), (10, 8), (10, 10), (10, 12), (12, 11), (12, 13), (13, 10),
         (13, 12), (14, 13), (14, 14), (15, 12), (16, 16), (18, 18))


class OneProduct(wiring.Component):
    """``p = a * b`` with registered operands and :data:`DEEP_PRODUCT_REGISTERS` after the product."""

    def __init__(self, a: int, b: int, fabric: bool, span: int = 1):
        self._fabric, self._span = fabric, span
        super().__init__({"a": In(signed(a)), "b": In(signed(b)), "p": Out(signed(a + b))})

    def elaborate(self, platform):
        m = Module()
        a, b = delay(m, self.a, 1, "a"), delay(m, self.b, 1, "b")
        w = len(self.p)
        if self._fabric:
            p = fabric_product(m, a, b, w, DEEP_PRODUCT_REGISTERS, "p", self._span)
        else:
            q = Signal(signed(w), name="q")
            m.d.comb += q.eq(a * b)
            p = delay(m, q, DEEP_PRODUCT_REGISTERS, "p")
        m.d.comb += self.p.eq(p)
        return m


class Array(wiring.Component):
    """``n`` products ``a x b`` (packed ports ``d``, ``g``, ``y`` for :class:`hdl.harness.SerialHarness`),
    operands registered twice (as the engines' deep pipeline does) and the DSP product's registers after."""

    def __init__(self, n: int, a: int, b: int, fabric: bool, span: int = 1):
        self._n, self._a, self._b, self._fabric, self._span = n, a, b, fabric, span
        super().__init__({"d": In(data.ArrayLayout(signed(a), n)), "g": In(data.ArrayLayout(signed(b), n)),
                          "y": Out(data.ArrayLayout(signed(a + b), n))})

    def elaborate(self, platform):
        m = Module()
        a, b, w = self._a, self._b, self._a + self._b
        kind = MultiplierKind.FABRIC if self._fabric else MultiplierKind.DSP
        for i in range(self._n):
            x, y = delay(m, self.d[i], 2, f"a{i}"), delay(m, self.g[i], 2, f"b{i}")
            m.d.comb += self.y[i].eq(emit_product(m, x, y, w, DEEP_PRODUCT_REGISTERS, 0, f"p{i}", split=True,
                                                  kind=kind, span=self._span))
        return m


def fmax(n: int, a: int, b: int, fabric: bool, seeds: int, work: Path, span: int = 1) -> dict:
    """Fmax (median of ``seeds`` nextpnr seeds, LFE5U-85F) of :class:`Array` in a serial harness."""
    from amaranth.back import verilog
    from hdl.harness import SerialHarness
    from synth.pnr import measure_fmax
    work.mkdir(parents=True, exist_ok=True)
    hv = work / "harness.v"
    hv.write_text(verilog.convert(SerialHarness(Array(n, a, b, fabric, span)), name="harness", emit_src=False))
    r = measure_fmax(hv, "ecp5", work, "harness", seeds=seeds)
    return {"n": n, "a": a, "b": b, "kind": "fabric" if fabric else "dsp", "span": span, **r.to_json()}


def mapped(a: int, b: int, fabric: bool, work: Path, span: int = 1, family: str = "ecp5") -> dict:
    """Cells of one multiplication as the ``family`` flow maps it (``-nodsp`` for Yosys's own multiplier);
    ``lut4`` and ``ccu2c``: the family's LUTs and carry cells (xc7: LUT1..LUT6 + INV, CARRY4)."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "top.v").write_text(to_verilog(OneProduct(a, b, fabric, span), "top"))
    script = SYNTH_SCRIPT[family].format(top="top")
    if not fabric:
        script = script.replace("synth_ecp5 ", "synth_ecp5 -nodsp ").replace("synth_xilinx ", "synth_xilinx -nodsp ")
    run_synth_script(f"read_verilog top.v; {script}; tee -q -o stat.json stat -json", work, "yosys.log",
                     f"{a}x{b}")
    cells = parse_stat(work / "stat.json")
    dev = FAMILY_DEVICES[family]
    kinds = dev.cells_by_kind(cells)
    return {"logic": dev.logic_count(cells), "lut4": sum(kinds.get("logic", {}).values()),
            "ccu2c": sum(kinds.get("carry", {}).values()), "ff": sum(kinds.get("ff", {}).values()),
            "dsp": sum(kinds.get("dsp", {}).values())}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", default=None, help="comma list of AxB operand widths (default: the engines')")
    ap.add_argument("--fmax", default=None, metavar="NxAxB",
                    help="instead: Fmax of N multipliers A x B in the fabric and in DSP blocks (e.g. 16x10x12, "
                         "F(2x2,3x3)'s R and widths), median of --seeds nextpnr seeds on LFE5U-85F")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--tree", type=FabricTree, default=FabricTree.EVERY_LEVEL, choices=list(FabricTree),
                    help="how the fabric products' adder trees are registered (default every-level)")
    ap.add_argument("--family", default="ecp5", choices=("ecp5", "xilinx"),
                    help="the flow the mappings use (xilinx: synth_xilinx -family xc7, logic LUT1..LUT6 + INV)")
    ap.add_argument("-o", type=Path, default=ROOT / "build/bench/fabric_multipliers.json")
    args = ap.parse_args(argv)
    if args.fmax:
        n, a, b = (int(x) for x in args.fmax.split("x"))
        rows = []
        with tempfile.TemporaryDirectory() as tmp:
            for fabric in (True, False):
                if not fabric and args.tree is not FabricTree.EVERY_LEVEL:
                    continue          # a DSP block's product has no tree
                r = fmax(n, a, b, fabric, args.seeds, Path(tmp) / ("fabric" if fabric else "dsp"), args.tree.span)
                rows.append(r)
                print(f"{n} x ({a} x {b}) {r['kind']:<6}: {r['median_mhz']} MHz median "
                      f"({', '.join(str(s['fmax_mhz']) for s in r['seeds'])}) {r['reason']}")
        out = args.o.with_name("fabric_multipliers_fmax.json")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"rows": rows}, indent=1) + "\n")
        return 0
    pairs = PAIRS if args.pairs is None else tuple(tuple(int(x) for x in p.split("x")) for p in args.pairs.split(","))
    rule = FAMILY_DEVICES[args.family].fabric
    rows = []
    print(f"{'a x b':>7} {'fabric':>7} {'LUT':>5} {'carry':>5} {'FF':>4} {'DSP':>4} {'-nodsp':>7} {'rule':>6} {'rule/fab':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for a, b in pairs:
            t0 = time.perf_counter()
            f = mapped(a, b, True, Path(tmp) / f"f{a}x{b}", args.tree.span, args.family)
            y = mapped(a, b, False, Path(tmp) / f"y{a}x{b}", family=args.family)
            r = rule.logic(*fabric_bits(a, b, a + b)) if rule else 0
            rows.append({"a": a, "b": b, "fabric": f, "nodsp": y, "rule": r, "seconds": round(time.perf_counter() - t0, 1)})
            print(f"{a:>3} x {b:<2} {f['logic']:>7} {f['lut4']:>5} {f['ccu2c']:>5} {f['ff']:>4} {f['dsp']:>4} "
                  f"{y['logic']:>7} {r:>6} {r / f['logic']:>8.2f}")
    args.o.parent.mkdir(parents=True, exist_ok=True)
    args.o.write_text(json.dumps({"rows": rows}, indent=1) + "\n")
    if rule is None:
        print(f"no rule for {args.family} in the device table: fit one on the rows ({args.o})")
        return 0
    worst = max(abs(x["rule"] / x["fabric"]["logic"] - 1) for x in rows)
    print(f"rule within {worst:.1%} of the fabric mappings; every fabric mapping has "
          f"{'no' if all(x['fabric']['dsp'] == 0 for x in rows) else 'SOME'} MULT18X18D")
    return 0


if __name__ == "__main__":
    sys.exit(main())
