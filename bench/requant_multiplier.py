"""What the trained-scale requantisation costs: ``Requantise`` with a multiplier per channel beside the
power-of-two one (M = 1), synthesised for ECP5 by Yosys (logic = LUT4 + 2 x CCU2C, FFs, MULT18X18D).

The multipliers are chosen as a QONNX network's are (:func:`winohdl.network.multiplier.choose`), for
seeded random scales of the ranges the digits example trains (``s_in`` 0.005-0.05, ``s_w`` 0.001-0.05,
``s_out`` 0.01-0.1) and an accumulator bound of ``2**(in_width - 1)``: "per tensor" one weight scale for
every channel, "per channel" one each, at the shift each chooses or at one shift for all (what the network builds).
Place and route and Fmax are left out.

    .venv/bin/python bench/requant_multiplier.py [--channels 16] [--lanes 4] [--in-width 20]
                                                 [--work build/bench/requant_multiplier]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hdl.stream.requant import Requantise  # noqa: E402
from hdl.verilog import to_verilog  # noqa: E402
from synth.yosys import synthesise  # noqa: E402
from winohdl.network import multiplier  # noqa: E402
from winohdl.network.quant_trained import one_shift  # noqa: E402


def multipliers(channels: int, per_channel: bool, bound: int, seed: int = 0) -> list[multiplier.Multiplier]:
    rng = np.random.default_rng(seed)
    s_in, s_out = rng.uniform(0.005, 0.05), rng.uniform(0.01, 0.1)
    s_w = rng.uniform(0.001, 0.05, channels if per_channel else 1).repeat(1 if per_channel else channels)
    return [multiplier.choose(multiplier.ratio(s_in, w, s_out), bound, 0, 127) for w in s_w]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--channels", type=int, default=16)
    p.add_argument("--lanes", type=int, default=4)
    p.add_argument("--in-width", type=int, default=20)
    p.add_argument("--work", default="build/bench/requant_multiplier")
    a = p.parse_args(argv)
    C, L, w = a.channels, a.lanes, a.in_width
    bias = np.random.default_rng(1).integers(-1000, 1000, C).tolist()
    rows = [("variant", "M bits", "shifts", "latency", "MULT18X18D", "logic", "FFs")]
    variants = {"power of two (M = 1)": None, "per tensor": False, "per channel": True,
                "per channel, one shift": "one"}
    for name, per_channel in variants.items():
        if per_channel is None:
            ms, shift = None, [6] * C
        else:
            chosen = multipliers(C, bool(per_channel), 1 << (w - 1))
            if per_channel == "one":      # as winohdl.network.quant_trained builds them
                chosen = one_shift(chosen)
            ms, shift = [m.M for m in chosen], [m.shift for m in chosen]
        dut = Requantise(L, w, bias, shift, relu=True, multiplier=ms)
        work = Path(a.work) / name.replace(" ", "_").replace("(", "").replace(")", "").replace(",", "").replace("=", "")
        work.mkdir(parents=True, exist_ok=True)
        (work / "requant.v").write_text(to_verilog(dut, "requant"))
        r = synthesise(work / "requant.v", "requant", "ecp5", work)
        bits = "-" if ms is None else f"{min(m.bit_length() for m in ms)}-{max(m.bit_length() for m in ms)}"
        rows.append((name, bits, f"{min(shift)}-{max(shift)}", str(dut.latency), str(r.cells.get("MULT18X18D", 0)),
                     str(r.logic), str(r.kind("ff"))))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    print(f"Requantise: {C} channels, {L} lanes, {w}-bit accumulators, ReLU; ECP5 (Yosys synth_ecp5)")
    for row in rows:
        print("  ".join(v.ljust(n) for v, n in zip(row, widths)).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
