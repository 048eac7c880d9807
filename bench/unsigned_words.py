"""What an unsigned activation costs in a layer engine: the digits CNN's second convolution (8 -> 16
channels, 3x3, padding 1, an 8x8 map; F(2x2,3x3), PK = PC = 1, deep pipeline, line buffers) built for
int8 words, for 9-bit words taken as signed, and for 9-bit words known non-negative (an unsigned 8-bit
activation, Brevitas's default ``QuantReLU``: what ``winohdl network`` builds), synthesised for ECP5 by
Yosys (logic = LUT4 + 2 x CCU2C; MULT18X18D, DP16KD, flip-flops), beside the datapath's widths from its
interval analysis (bits of the R words of V = B^T d and of the products, B^T and A^T adder bits).
Place and route and Fmax are left out.

    .venv/bin/python bench/unsigned_words.py [--work build/bench/unsigned_words]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hdl.engine.design import engine_datapath  # noqa: E402
from hdl.engine.engine import LayerEngine  # noqa: E402
from hdl.engine.modes import Buffering, EngineKind, EnginePipeline  # noqa: E402
from hdl.engine.options import EngineOptions  # noqa: E402
from hdl.engine.plan import plan_engine  # noqa: E402
from hdl.verilog import to_verilog  # noqa: E402
from synth.yosys import synthesise  # noqa: E402
from winohdl.cards import best_card  # noqa: E402
from winohdl.core.geometry import Geometry  # noqa: E402

VARIANTS = {"int8 (signed 8-bit words)": (8, "signed"), "unsigned 8-bit as signed 9-bit words": (9, "signed"),
            "unsigned 8-bit in non-negative 9-bit words": (9, "non-negative")}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", default="build/bench/unsigned_words")
    a = p.parse_args(argv)
    g = Geometry((2, 2), (3, 3), (1, 1), (1, 1))
    rows = [("words", "V bits", "product bits", "B^T adder bits", "A^T adder bits", "logic", "MULT18X18D",
             "DP16KD", "FFs")]
    for name, (width, values) in VARIANTS.items():
        o = EngineOptions(g, 8, 16, (8, 8), (1, 1), data_width=width, kernel_width=8, pipeline=EnginePipeline.DEEP,
                          buffering=Buffering.LINES, data_values=values)
        dp = engine_datapath(best_card(g), o)
        work = Path(a.work) / f"w{width}_{values}"
        work.mkdir(parents=True, exist_ok=True)
        (work / "engine.v").write_text(to_verilog(LayerEngine(plan_engine(o, dp, EngineKind.WINOGRAD)), "engine"))
        r = synthesise(work / "engine.v", "engine", "ecp5", work)
        rows.append((name, str(sum(dp.v_widths)), str(sum(dp.m_widths)), str(dp.adder_bits["BT"]),
                     str(dp.adder_bits["AT"]), str(r.logic), str(r.kind("dsp")), str(r.kind("bram")),
                     str(r.kind("ff"))))
        print("  ".join(rows[-1]), flush=True)
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    print("\n".join("  ".join(f"{v:<{w}}" for v, w in zip(r, widths)).rstrip() for r in rows))
    print(f"logic: {r.formula}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
