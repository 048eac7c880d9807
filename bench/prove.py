"""Proof times across the geometry suite: ``.venv/bin/python bench/prove.py [--quick] [--only f2_3,...]``.

For every suite geometry at 8/8 bits, combinational and pipelined (stages), the Winograd
tile and the direct baseline are generated from the constructive card and proven; then
F(4x4,3x3) at 16/16 bits. Prints a table (cells, monomials, range obligations, seconds,
verdict) and writes build/bench/prove.json. The issue's target: each proof under 30 s on
two cores.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hdl.design import generate_design, open_design, write_design_folder  # noqa: E402
from hdl.options import HardwareOptions  # noqa: E402
from miner.constructive import constructive_card  # noqa: E402
from sim.prove import prove_design  # noqa: E402
from winohdl.core.suite import BY_NAME, SUITE  # noqa: E402

TARGET_SECONDS = 30.0


def cases(only: list[str] | None, quick: bool):
    names = only or [e.name for e in SUITE]
    for n in names:
        for pipeline in ("none",) if quick else ("none", "stages"):
            yield n, HardwareOptions.make(8, 8, pipeline)
    if not only or "f4x4_3x3" in only:
        yield "f4x4_3x3", HardwareOptions.make(16, 16, "none")
        if not quick:
            yield "f4x4_3x3", HardwareOptions.make(16, 16, "stages")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="comma-separated suite names")
    ap.add_argument("--quick", action="store_true", help="combinational 8/8 only")
    ap.add_argument("--targets", default="wino,direct")
    ap.add_argument("-o", default="build/bench/prove.json")
    a = ap.parse_args(argv)
    only = a.only.split(",") if a.only else None
    targets = a.targets.split(",")
    rows, worst, bad = [], 0.0, 0
    header = (f"{'geometry':<14} {'options':<18} {'target':<7} {'verdict':<10} {'cells':>6} {'monomials':>9} "
              f"{'ranges':>7} {'gen s':>6} {'proof s':>8}")
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory(prefix="winohdl-bench-prove-") as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, opts in cases(only, a.quick):
            t0 = time.perf_counter()
            folder = Path(tmp) / f"{name}_{opts.tag}"
            write_design_folder(folder, generate_design(constructive_card(BY_NAME[name].geometry), opts))
            gen = time.perf_counter() - t0
            opened = open_design(folder)
            for target in targets:
                r = prove_design(opened, target, work=Path(tmp) / f"work_{name}_{opts.tag}_{target}")
                worst = max(worst, r.seconds)
                bad += not r.proven or r.seconds > TARGET_SECONDS
                rows.append({"geometry": name, "options": opts.tag, "target": target, "verdict": r.verdict.value,
                             "cells": r.cells, "monomials": r.monomials, "range_checks": r.range_checks,
                             "generate_seconds": round(gen, 2), "proof_seconds": round(r.seconds, 2)})
                print(f"{name:<14} {opts.tag:<18} {target:<7} {r.verdict.value:<10} {r.cells:>6} {r.monomials:>9} "
                      f"{r.range_checks:>7} {gen:>6.1f} {r.seconds:>8.2f}", flush=True)
                gen = 0.0
    print(f"\n{len(rows)} proofs, slowest {worst:.1f} s (target {TARGET_SECONDS:.0f} s), "
          f"{bad} not proven or over the target")
    out = Path(a.o)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "slowest_seconds": worst}, indent=1) + "\n")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
